# Multi-stage build of a static Gantry binary on a minimal non-root base.
# Build: make docker-build (needs a Docker engine).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/
ARG VERSION=devel
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X github.com/gantry-ml/gantry/internal/version.Version=${VERSION}" \
      -o /out/gantry ./cmd/gantry

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/gantry /gantry
USER 65532:65532
ENTRYPOINT ["/gantry"]
