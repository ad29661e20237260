#!/usr/bin/env bash
# Checks every FROM of the Dockerfiles given (default: Dockerfile Dockerfile.release): the image is
# pinned by digest (name:tag@sha256:…), and what the registry serves for that digest is an image
# index (a multi-arch manifest list) with linux/amd64 and linux/arm64, the platforms the release
# image is built for. A build stage (FROM --platform=$BUILDPLATFORM) runs on the builder's
# platform, so its image must serve that one too. Needs `docker buildx imagetools` and jq, and
# the registries: CI runs it (.github/workflows/ci.yml, job base-images), not .ci/run offline.
set -euo pipefail
[ $# -gt 0 ] || set -- Dockerfile Dockerfile.release
status=0
for dockerfile in "$@"; do
  # FROM [--platform=…] IMAGE [AS NAME]: the image, or a stage named earlier, or scratch.
  stages=" scratch "
  while read -r image stage; do
    if [[ "$stages" == *" ${image,,} "* ]]; then
      continue
    fi
    [ -n "$stage" ] && stages+="${stage,,} "
    if ! [[ "$image" =~ ^[^@[:space:]]+@sha256:[0-9a-f]{64}$ ]]; then
      echo "$dockerfile: FROM $image is not pinned by digest (write it as name:tag@sha256:<the index digest>)" >&2
      status=1
      continue
    fi
    if ! raw=$(docker buildx imagetools inspect --raw "$image"); then
      echo "$dockerfile: FROM $image: the registry does not serve this digest" >&2
      status=1
      continue
    fi
    if ! jq -e '
        (.manifests | type == "array")
        and (.mediaType == null or .mediaType == "application/vnd.oci.image.index.v1+json"
             or .mediaType == "application/vnd.docker.distribution.manifest.list.v2+json")
        and any(.manifests[]; .platform.os == "linux" and .platform.architecture == "amd64")
        and any(.manifests[]; .platform.os == "linux" and .platform.architecture == "arm64")' <<<"$raw" >/dev/null; then
      echo "$dockerfile: FROM $image is not an image index with linux/amd64 and linux/arm64 (a single-platform manifest's digest pins one architecture: use the index digest, as \`docker buildx imagetools inspect name:tag\` prints it)" >&2
      status=1
      continue
    fi
    echo "$dockerfile: FROM $image: an image index with linux/amd64 and linux/arm64"
  done < <(awk 'toupper($1) == "FROM" {
      i = 2; while ($i ~ /^--/) i++
      stage = ""; if (toupper($(i + 1)) == "AS") stage = $(i + 2)
      print $i, stage
    }' "$dockerfile")
done
exit $status
