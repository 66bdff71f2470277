# The Gantry manager image: static binaries on a minimal non-root base. /manager is the
# entrypoint; /gantry is the CLI the Helm chart's runtime installer Jobs run; /gantry-ui is the
# web UI server the chart's UI Deployment runs.
# Build with `make docker-build` (needs a Docker engine). cmd/manager/static_test.go builds the
# binaries the same way, checks that they are static (the image needs no libc) and that every
# directory they import from is copied in.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY config/crd/ config/crd/
COPY config/runtimes/ config/runtimes/
COPY internal/ internal/
COPY pkg/ pkg/
ARG VERSION=devel
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X github.com/gantry-ml/gantry/internal/version.Version=${VERSION}" \
      -o /out/ ./cmd/manager ./cmd/gantry ./cmd/gantry-ui

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/manager /manager
COPY --from=build /out/gantry /gantry
COPY --from=build /out/gantry-ui /gantry-ui
USER 65532:65532
ENTRYPOINT ["/manager"]
