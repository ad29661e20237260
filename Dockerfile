# crdguard as a container action: a static binary on distroless/static (CA certificates, no
# shell). GitHub runs container actions as root with the workspace mounted: no USER, no WORKDIR.
FROM golang:1.26-bookworm AS build
COPY go.mod go.sum /src/
RUN cd /src && go mod download
COPY . /src
RUN cd /src && sh .ci/build-binary.sh /crdguard

FROM gcr.io/distroless/static-debian12
COPY --from=build /crdguard /crdguard
ENTRYPOINT ["/crdguard", "action"]
