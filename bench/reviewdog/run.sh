#!/usr/bin/env bash
# Runs crdguard's rdjson through reviewdog's own rdjson parser, diff filter and local reporter
# (main.go, built against reviewdog $version from the module proxy) in each filter mode, on a
# pull request that removes a field below an inserted line, lowers a maximum, moves a CRD and
# removes a field from it, and makes a changed sample (outside `paths`) and an unchanged one
# invalid. Prints what each mode keeps. Needs the module proxy and git.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
version=${1:-v0.21.1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/rd" && sed '/^\/\/go:build ignore$/d' "$here/main.go" > "$work/rd/main.go"
(cd "$work/rd" && go mod init rdlocal >/dev/null 2>&1 && go get "github.com/reviewdog/reviewdog@$version" >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1 && go build -o rdlocal .)
(cd "$repo" && go build -o "$work/crdguard" ./cmd/crdguard)

gadgets() { # a CRD with field b when $1 is b; the padding keeps a move above 50 % similarity
  printf 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.com\nspec:\n  group: example.com\n  names:\n    kind: Gadget\n    listKind: GadgetList\n    plural: gadgets\n    singular: gadget\n  scope: Namespaced\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n                a:\n                  type: string\n'
  [ "${1:-}" = b ] && printf '                b:\n                  type: integer\n'
  for i in $(seq 0 11); do printf '                f%02d:\n                  type: string\n                  description: Field %d of the gadget.\n' "$i" "$i"; done
}
pr="$work/pr"
mkdir -p "$pr/config/crd" "$pr/config/samples" && cd "$pr"
git init -q . && git config user.email t@example.com && git config user.name t
cp "$repo/testdata/action/pr/base.yaml" config/crd/widgets.yaml
gadgets b > config/crd/gadgets.yaml
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: small\nspec:\n  size: 3\n  color: red\n' > config/samples/widget.yaml
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: big\nspec:\n  size: 9\n' > config/samples/big.yaml
printf 'paths: ["config/crd/**", "deploy/**"]\n' > .crdguard.yaml
git add -A && git commit -qm base && git branch base
python3 - <<'PY'
p = "config/crd/widgets.yaml"
s = open(p).read()
s = s.replace("              type: object\n              properties:\n                name:\n                  type: string\n                  description: Display name.\n",
              "              type: object\n              description: What the widget is.\n              properties:\n                label:\n                  type: string\n", 1)
open(p, "w").write(s.replace("maximum: 10", "maximum: 5", 1))
PY
sed -i 's/size: 3/size: 7/' config/samples/widget.yaml
mkdir deploy && git mv config/crd/gadgets.yaml deploy/gadgets-crd.yaml && gadgets > deploy/gadgets-crd.yaml
git add -A && git commit -qm head
"$work/crdguard" check --base base --format rdjson --fail-on never > "$work/out.rdjson"
for mode in added diff_context file nofilter; do
  out=$("$work/rd/rdlocal" -filter-mode=$mode -fail-level=error -diff="git diff base HEAD" < "$work/out.rdjson" 2>/dev/null) && status=0 || status=$?
  kept=$(echo "$out" | sed -nE 's/.*location:\{path:"([^"]*)" range:\{start:\{line:([0-9]+)\}\}\}.*code:\{value:"([a-z-]*)".*/\1:\2 \3/p' | sort | paste -sd ' ')
  echo "reviewdog $version -filter-mode=$mode -fail-level=error (exit $status): ${kept:-nothing}"
done
