#!/usr/bin/env sh
# Writes every workflow the docs show (a ```yaml block whose first line is a comment naming
# .github/workflows/NAME.yml) into DIR/.github/workflows/, one file per block, so that actionlint
# checks what users copy. Blocks naming the same file are numbered.
set -eu
out=$1
mkdir -p "$out/.github/workflows"
for doc in README.md docs/*.md; do
  awk -v out="$out/.github/workflows" -v doc="$(basename "$doc" .md)" '
    /^```yaml$/ { inblock = 1; first = 1; file = ""; next }
    /^```$/ && inblock { inblock = 0; if (file != "") close(file); file = ""; next }
    inblock && first {
      first = 0
      if (match($0, /^# \.github\/workflows\/[a-z0-9-]+\.yml/)) {
        name = substr($0, RSTART + 20, RLENGTH - 24)
        n[name]++
        file = out "/" doc "-" name "-" n[name] ".yml"
      }
    }
    inblock && file != "" { print > file }
  ' "$doc"
done
ls "$out/.github/workflows"
