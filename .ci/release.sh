#!/bin/sh
# Cut a release (docs/development.md "Cutting a release"): tag vX.Y.Z on a commit that is HEAD with action.yml
# running the prebuilt image docker://ghcr.io/OWNER/crdguard:vX.Y.Z instead of building the
# Dockerfile. The commit is reachable only through the tag, so the branch keeps `image:
# Dockerfile` for `uses: ./`, and the tag never has to move (Go's checksum database remembers
# what a module version's tag pointed at). Pushing the tag starts .github/workflows/release.yml.
#
#   .ci/release.sh v1.2.3            # CRDGUARD_OWNER=you for a fork's ghcr.io/you/crdguard
#   git push origin v1.2.3
set -eu
usage="usage: .ci/release.sh vMAJOR.MINOR.PATCH[-PRERELEASE]"
version=${1:?$usage}
owner=${CRDGUARD_OWNER:-crdguard}
if ! printf '%s\n' "$version" | grep -Eqx 'v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?'; then
  echo "release: $version is not a release version; $usage" >&2
  exit 2
fi
if git rev-parse -q --verify "refs/tags/$version" >/dev/null; then
  echo "release: tag $version exists already" >&2
  exit 2
fi
if [ "$(git show HEAD:action.yml | grep -c '^  image: Dockerfile$')" != 1 ]; then
  echo "release: action.yml at HEAD must have exactly one line '  image: Dockerfile' to rewrite" >&2
  exit 2
fi
image="docker://ghcr.io/$owner/crdguard:$version"
blob=$(git show HEAD:action.yml | sed "s|^  image: Dockerfile\$|  image: $image|" | git hash-object -w --stdin)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GIT_INDEX_FILE="$tmp/index" git read-tree HEAD
GIT_INDEX_FILE="$tmp/index" git update-index --cacheinfo "100644,$blob,action.yml"
tree=$(GIT_INDEX_FILE="$tmp/index" git write-tree)
commit=$(git commit-tree "$tree" -p HEAD -m "Release $version: action.yml runs $image")
git tag -a -m "crdguard $version" "$version" "$commit"
echo "release: tagged $version at $commit (HEAD $(git rev-parse --short HEAD) with action.yml running $image)"
echo "release: now run: git push origin $version"
