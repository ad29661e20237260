# crdguard as a container action: a static binary on distroless/static (CA certificates, no
# shell). GitHub runs container actions as root with the workspace mounted: no USER, no WORKDIR.
# Base images are pinned by the digest of their multi-arch image index (CI's base-images job checks
# each is an index with linux/amd64 and linux/arm64; Dependabot proposes new tags and digests).
# The build stage runs on the builder's platform and Go cross-compiles for the target's.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm@sha256:b305420a68d0f229d91eb3b3ed9e519fcf2cf5461da4bef997bf927e8c0bfd2b AS build
ARG TARGETOS TARGETARCH
COPY go.mod go.sum /src/
RUN cd /src && go mod download
COPY . /src
RUN cd /src && GOOS=$TARGETOS GOARCH=$TARGETARCH sh .ci/build-binary.sh /crdguard

FROM gcr.io/distroless/static-debian12@sha256:d75cdd72874d4790092fcb1b058493ecf6bb5bf2b2b897045b00ff01d91843f2
COPY --from=build /crdguard /crdguard
ENTRYPOINT ["/crdguard", "action"]
