#!/usr/bin/env bash
# Unchanged copies cost nothing (issue 44): builds a git repository whose config/crd/bundle.yaml
# holds 60 real CRDs (the smallest distinct CRDs of ../shared/corpus and ../shared/corpus-more,
# 2.3 MB) and N unchanged release copies of it (releases/vK/bundle.yaml); the change upgrades one
# CRD of the live bundle (its corpus pair: old.yaml -> new.yaml). Runs `crdguard check --base
# base --head head --format json` under /usr/bin/time for each N given (default 1 and 40) and
# prints peak RSS and wall time; the findings must be the same for every N.
# Usage: bench/copies/run.sh [N ...]   (needs git, GNU time and ../shared)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
shared=$(cd "$repo/../shared" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/crdguard" ./cmd/crdguard)
cp "$work/crdguard" "$work/crdguard.copy" # a binary fresh from the linker maps more of itself
# The 60 smallest distinct CRDs (by name), smallest first: "name size path-of-new.yaml".
(cd "$shared" && for f in $(find corpus corpus-more -name new.yaml | sort); do
  echo "$(awk '/^  name:/ {print $2; exit}' "$f") $(wc -c < "$f") $f"
done | sort -u -k1,1 | sort -k2,2n | head -60) > "$work/list"
changed=$(awk 'NR==30 {print $3}' "$work/list")
bundle() { # bundle old|new: the live bundle, the changed CRD as its base or head version
  for f in $(awk '{print $3}' "$work/list"); do
    src=$shared/$f
    [ "$1" = old ] && [ "$f" = "$changed" ] && src=$shared/$(dirname "$f")/old.yaml
    echo "---"; cat "$src"
  done
}
first=""
for n in "${@:-1 40}"; do
  for k in $n; do
    r=$work/r$k && mkdir -p "$r/config/crd" && cd "$r"
    git init -q && git config user.email bench@example.com && git config user.name bench
    bundle old > config/crd/bundle.yaml
    for i in $(seq 1 "$k"); do mkdir -p "releases/v$i" && cp config/crd/bundle.yaml "releases/v$i/bundle.yaml"; done
    git add -A && git commit -qm base && git tag base
    bundle new > config/crd/bundle.yaml
    git add -A && git commit -qm head && git tag head
    /usr/bin/time -f "$k copies: peak %M KiB, wall %e s" -o "$work/time" "$work/crdguard.copy" check --base base --head head --format json > "$work/out$k.json" || true
    cat "$work/time"
    grep -v -E '^ *"(base|head|mergeBase)": "[0-9a-f]{40}"' "$work/out$k.json" > "$work/findings$k" # commit ids differ
    if [ -z "$first" ]; then first=$k; elif ! cmp -s "$work/findings$first" "$work/findings$k"; then echo "findings differ between $first and $k copies"; exit 1; fi
  done
done
