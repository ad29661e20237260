#!/usr/bin/env bash
# Storage history in seconds (issue 43): builds the synthetic histories of BenchmarkGitHistory
# (2,000 commits, 200 release tags, a 30-CRD bundle of 270 KB changed every 10 commits) and
# BenchmarkGitHistoryLargeBundle (a 1 MB, 110-CRD bundle changed in each of 220 releases),
# packed by git itself as a clone's are (objects and refs), and runs `crdguard check --base main --head pr --format
# json` on each as a whole process under /usr/bin/time (peak RSS, wall, cpu), with the rules of
# its findings. The run without history that the issue's bound (at most 3x) compares with is
# "marked": the same repository and change as the run that needs history, with base's bundle
# listing the dropped version in status.storedVersions, so base answers and no history is read.
#   small/none          a description changes (no version removed)
#   small/marked        never-stored's change, answered by base
#   small/stored        v1alpha1 dropped: stored by the first releases (the walk stops there)
#   small/never-stored  v2alpha1 dropped: no revision stored it (all 200 tags, 2,000 commits read)
#   large/marked        stored's change, answered by base
#   large/stored        v1alpha1 dropped: stored by releases 20-39 (21 bundles read)
# Usage: bench/history/run.sh [--keep DIR] [shape/change ...]   (needs git and GNU time)
# --keep leaves the binary (DIR/crdguard) and the repositories (DIR/small-never-stored, ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
keep=""
if [ "${1:-}" = --keep ]; then keep=$2; shift 2; fi
work=${keep:-$(mktemp -d)}
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
(cd "$repo" && go build -o "$work/crdguard.new" ./cmd/crdguard)
cp "$work/crdguard.new" "$work/crdguard" && rm "$work/crdguard.new" # a binary fresh from the linker maps more of itself
(cd "$here/.." && go build -o "$work/history" ./history)
for c in "${@:-small/none small/marked small/stored small/never-stored large/marked large/stored}"; do
  for sc in $c; do
    r=$work/${sc/\//-}
    if [ ! -d "$r" ]; then
      "$work/history" -shape "${sc%/*}" -change "${sc#*/}" "$r"
      git -C "$r" repack -a -d -f -q # as a clone's pack is: git's own delta choices
      git -C "$r" pack-refs --all # and its tags, in one packed-refs file
    fi
    (cd "$r" && /usr/bin/time -f "$sc: wall %e s, cpu %U+%S s, peak %M KiB" -o "$work/time" "$work/crdguard" check --base main --head pr --format json > "$work/out.json") || true
    cat "$work/time"
    echo "  findings: $(grep -o '"rule": "[a-z-]*"' "$work/out.json" | sort | uniq -c | awk '{printf "%s %s, ", $1, $3}' | tr -d '"' | sed 's/, $//')"
  done
done
