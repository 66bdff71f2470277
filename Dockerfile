# The Gantry manager image: a static binary on a minimal non-root base.
# Build with `make docker-build` (needs a Docker engine). cmd/manager/static_test.go builds the
# binary the same way and checks that it is static, so the image needs no libc.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY config/crd/ config/crd/
COPY internal/ internal/
ARG VERSION=devel
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X github.com/gantry-ml/gantry/internal/version.Version=${VERSION}" \
      -o /out/manager ./cmd/manager

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
