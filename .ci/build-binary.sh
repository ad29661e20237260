#!/bin/sh
# The one way the crdguard binary is built: the Dockerfile runs this script, and CI runs it too
# and checks that the result is a static executable. .goreleaser.yaml builds the release
# binaries and the release image's binary with the same environment and flags
# (cmd/action's TestReleaseBuildMatchesScript keeps the two equal).
# CRDGUARD_VERSION and CRDGUARD_COMMIT, when set, are what `crdguard version` prints.
set -eu
out=${1:-crdguard}
CGO_ENABLED=0 go build -trimpath \
  -ldflags="-s -w -buildid= -X main.version=${CRDGUARD_VERSION:-} -X main.commit=${CRDGUARD_COMMIT:-}" \
  -o "$out" ./cmd/action
