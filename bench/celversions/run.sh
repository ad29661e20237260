#!/usr/bin/env bash
# Builds celversions against each Kubernetes minor's apiextensions-apiserver and runs it over
# internal/celproof/testdata/libraries.yaml (one CEL rule per library) and the shared corpora.
# Prints, per minor, the libraries its API server refuses in a new rule, and whether it judges
# the corpus CRDs as the newest does. Needs the module proxy; takes a few minutes a version.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
corpus=${1:-$repo/../shared}
versions="v0.29.6 v0.30.14 v0.31.14 v0.32.13 v0.33.13 v0.34.13 v0.35.10 v0.36.6 v0.37.2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{ echo "$repo/internal/celproof/testdata/libraries.yaml"; find "$corpus" -path '*__*' \( -name old.yaml -o -name new.yaml \) | sort; } > "$work/files"
newest=${versions##* }
for v in $versions; do
  mkdir -p "$work/$v" && cp "$here/main.go" "$work/$v/"
  (cd "$work/$v" && go mod init celversions >/dev/null 2>&1 && go get "k8s.io/apiextensions-apiserver@$v" sigs.k8s.io/yaml >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1 && go build -o bin .)
  "$work/$v/bin" < "$work/files" > "$work/$v.out"
done
for v in $versions; do
  refused=$(grep '^[^|]*libraries.yaml |' "$work/$v.out" | sed -n 's/.*properties\[spec\]\.properties\[\([a-z]*\)\].*/\1/p' | sort -u | tr '\n' ' ' || true)
  if diff -q <(grep -v 'libraries.yaml' "$work/$v.out") <(grep -v 'libraries.yaml' "$work/$newest.out") >/dev/null; then same="same as $newest"; else same="differs from $newest"; fi
  echo "$v: refuses in new rules: ${refused:-nothing}; corpus: $(grep -vc 'libraries.yaml' "$work/$v.out" || true) errors, $same"
done
