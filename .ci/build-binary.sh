#!/bin/sh
# The one way the crdguard binary is built: the Dockerfile runs this script, and CI runs it too
# and checks that the result is a static executable.
set -eu
out=${1:-crdguard}
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -buildid=" -o "$out" ./cmd/action
