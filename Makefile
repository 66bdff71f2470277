# Gantry: a wire-compatible Kubeflow Trainer v2 operator.
# `make help` lists the targets. Every tool comes from hack/toolchain.sh, built from Go modules.

include hack/versions.env

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
export GOTOOLCHAIN := local

GANTRY_CACHE ?= $(HOME)/.cache/gantry
BIN_DIR := $(CURDIR)/bin
export GANTRY_CACHE BIN_DIR
TOOLCHAIN := hack/toolchain.sh

CONTROLLER_GEN := $(BIN_DIR)/controller-gen
GOLANGCI_LINT := $(BIN_DIR)/golangci-lint
export KUBEBUILDER_ASSETS ?= $(BIN_DIR)

# Packages with unit tests: everything but the envtest suites under test/.
UNIT_PKGS = $(shell go list ./... | grep -v '/test/')
GO_TEST_FLAGS ?= -count=1

CRD_OPTIONS := crd:generateEmbeddedObjectMeta=true,maxDescLen=128

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n\nTargets:\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: controller-gen ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: controller-gen ## Generate the CRDs (config/crd/bases), the ClusterRole (config/rbac) and the webhook manifests (config/webhook).
	$(CONTROLLER_GEN) $(CRD_OPTIONS) paths=./api/trainer/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=kubeflow-trainer-controller-manager paths=./internal/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./internal/webhook/... output:webhook:artifacts:config=config/webhook

.PHONY: fmt
fmt: ## Run gofmt on the module.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint (built from the Go module proxy).
	$(GOLANGCI_LINT) run ./...

.PHONY: build
build: ## Build the gantry binaries (manager, gantry) into bin/.
	go build -o $(BIN_DIR)/ ./cmd/...

IMG ?= ghcr.io/gantry-ml/gantry:latest

.PHONY: docker-build
docker-build: ## Build the manager image (needs a Docker engine); `go test ./cmd/manager` checks the static build without one.
	docker build --build-arg VERSION=$$(git describe --tags --always 2>/dev/null || echo devel) -t $(IMG) .

##@ Tests

.PHONY: test
test: envtest-assets kustomize test-unit test-integration bench-smoke ## Run every test: unit, then envtest integration (builds the toolchain if missing).

.PHONY: test-unit
test-unit: ## Run the unit tests.
	go test $(GO_TEST_FLAGS) $(UNIT_PKGS)

.PHONY: test-integration
test-integration: envtest-assets kustomize ## Run the envtest integration suites.
	go test $(GO_TEST_FLAGS) ./test/integration/...

.PHONY: verify
verify: generate manifests vet ## Regenerate everything, then fail if the tree changed or code is unformatted.
	go mod tidy
	@test -z "$$(gofmt -s -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -s -l $$(git ls-files '*.go'); exit 1; }
	@if [ -n "$$(git status --porcelain)" ]; then \
		git status --short; git --no-pager diff --stat; \
		echo "The tree changed: run 'make generate manifests', 'go mod tidy' and commit the result."; exit 1; fi

##@ Benchmarks

BENCH_N ?= 1000
BENCH_PARALLEL ?= 10
BENCH_UNRELATED ?= 20000
BENCH_OUT ?= _output/bench
BENCH_FLAGS ?=

.PHONY: bench
bench: envtest-assets kustomize ## Benchmark Gantry against direct JobSet creation (BENCH_N, BENCH_PARALLEL, BENCH_UNRELATED, BENCH_FLAGS); writes $(BENCH_OUT).
	go run ./test/perf -n $(BENCH_N) -parallel $(BENCH_PARALLEL) -unrelated $(BENCH_UNRELATED) -out $(BENCH_OUT) $(BENCH_FLAGS)

.PHONY: bench-smoke
bench-smoke: envtest-assets kustomize ## The benchmark harness at N=50 (part of make test): checks that it works and every JobSet appears, not timings.
	go run ./test/perf -n 50 -parallel 5 -unrelated 500 -out _output/bench-smoke
	go test $(GO_TEST_FLAGS) ./test/perf

##@ Toolchain

.PHONY: envtest-assets
envtest-assets: ## Build (or reuse) kube-apiserver, etcd and kubectl for envtest.
	$(TOOLCHAIN) envtest

.PHONY: cluster-assets
cluster-assets: ## Build (or reuse) every binary of the local cluster.
	$(TOOLCHAIN) cluster

.PHONY: tools
tools: ## Build (or reuse) controller-gen, golangci-lint, kustomize, helm and helm-unittest.
	$(TOOLCHAIN) tools

.PHONY: controller-gen
controller-gen:
	@$(TOOLCHAIN) controller-gen

.PHONY: golangci-lint
golangci-lint:
	@$(TOOLCHAIN) golangci-lint

.PHONY: kustomize
kustomize:
	@$(TOOLCHAIN) kustomize
