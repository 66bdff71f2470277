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
KUBE_API_LINTER := $(BIN_DIR)/kube-api-linter
HELM := $(BIN_DIR)/helm
HELM_UNITTEST := $(BIN_DIR)/helm-unittest
HELM_DOCS := $(BIN_DIR)/helm-docs
CHART_DIR := charts/gantry
export KUBEBUILDER_ASSETS ?= $(BIN_DIR)

# Packages with unit tests: everything but the envtest suites under test/.
UNIT_PKGS = $(shell go list ./... | grep -v '/test/')
GO_TEST_FLAGS ?= -count=1

CRD_OPTIONS := crd:generateEmbeddedObjectMeta=true

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n\nTargets:\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: controller-gen ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: controller-gen ## Generate the CRDs (config/crd/bases), the ClusterRole (config/rbac) and the webhook manifests (config/webhook), and copy them and the runtimes into the chart (its CRDs without descriptions: a Helm release must fit a 1 MiB Secret).
	$(CONTROLLER_GEN) $(CRD_OPTIONS) paths=./api/trainer/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=kubeflow-trainer-controller-manager paths=./internal/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./internal/webhook/... output:webhook:artifacts:config=config/webhook
	hack/helm-files.sh
	$(CONTROLLER_GEN) $(CRD_OPTIONS),maxDescLen=0 paths=./api/trainer/... output:crd:artifacts:config=charts/gantry/files/crds
	hack/testkit-files.sh

.PHONY: fmt
fmt: ## Run gofmt on the module.
	gofmt -s -w $$(git ls-files '*.go')

# FAULTS_PKGS have files built only with -tags faults, the fault injection of the suites that
# inject them (docs/testing.md); vet and lint check them in both builds.
FAULTS_PKGS := ./cmd/manager/... ./internal/controller/... ./internal/localrun/...

.PHONY: vet
vet: ## Run go vet on both modules (and on the fault-injection build of FAULTS_PKGS).
	go vet ./...
	go vet -tags faults $(FAULTS_PKGS)
	cd test/differential && go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint (built from the Go module proxy) on both modules (and on the fault-injection build of FAULTS_PKGS).
	$(GOLANGCI_LINT) run ./...
	$(GOLANGCI_LINT) run --build-tags faults $(FAULTS_PKGS)
	cd test/differential && $(GOLANGCI_LINT) run ./...

.PHONY: lint-api
lint-api: kube-api-linter ## Run Kube API Linter on Gantry's own API types (api/config; the trainer.kubeflow.org types must match upstream).
	$(KUBE_API_LINTER) run --config .golangci-kal.yaml ./api/...

.PHONY: boilerplate
boilerplate: ## Add the license header of hack/boilerplate.go.txt to every Go file that lacks it.
	hack/boilerplate.sh --fix

.PHONY: build
build: ## Build the gantry binaries (manager, gantry, gantry-ui) into bin/, with the kubectl plugin kubectl-gantry and its completion shim.
	go build -o $(BIN_DIR)/ ./cmd/...
	hack/kubectl-plugin.sh $(BIN_DIR)

INSTALL_DIR ?= /usr/local/bin

.PHONY: cli
cli: ## Build bin/gantry, its kubectl plugin link bin/kubectl-gantry and the completion shim.
	go build -o $(BIN_DIR)/ ./cmd/gantry
	hack/kubectl-plugin.sh $(BIN_DIR)

.PHONY: install
install: build ## Install gantry, gantry-ui (the web UI server), the kubectl plugin kubectl-gantry and its completion shim kubectl_complete-gantry into INSTALL_DIR (/usr/local/bin).
	hack/kubectl-plugin.sh $(BIN_DIR) $(INSTALL_DIR)

IMG ?= ghcr.io/gantry-ml/gantry:latest

.PHONY: docker-build
docker-build: ## Build the manager image (needs a Docker engine); `go test ./cmd/manager` checks the static build without one.
	docker build --build-arg VERSION=$$(git describe --tags --always 2>/dev/null || echo devel) -t $(IMG) .

##@ Tests

.PHONY: test
test: envtest-assets kustomize test-helm test-unit test-differential test-fuzz test-integration test-browser test-localrun test-examples bench-smoke test-e2e test-e2e-multikueue-quick test-reliability-quick ## Run every test: chart, unit, the differential against Kubeflow Trainer, 30 s of each fuzz target, envtest integration, the web UI in headless Chromium, real torchrun runs of gantry run --local, the downstream test kit example, the benchmark smoke run, end-to-end, the MultiKueue quick spec and the quick reliability suite on local clusters (builds the toolchain if missing).

.PHONY: test-unit
test-unit: ## Run the unit tests.
	go test $(GO_TEST_FLAGS) $(UNIT_PKGS)

.PHONY: test-differential
test-differential: envtest-assets ## Admit the fixtures and every single-field mutation of them with Gantry's and Kubeflow Trainer v2.3's validation, and send Kueue's TrainJob writes to the reference's CRDs and webhooks on an apiserver (test/differential, a module of its own).
	cd test/differential && go test $(GO_TEST_FLAGS) ./...

FUZZTIME ?= 30s
.PHONY: test-fuzz
test-fuzz: ## Run each fuzz target for FUZZTIME (30s): the render pipeline, gantry render's input reading (any bytes), and the admission differential against Kubeflow Trainer v2.3.
	go test -run '^$$' -fuzz '^FuzzPipeline$$' -fuzztime $(FUZZTIME) ./internal/render
	go test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./internal/render
	cd test/differential && go test -run '^$$' -fuzz '^FuzzDifferential$$' -fuzztime $(FUZZTIME) .

.PHONY: test-reliability-quick
test-reliability-quick: ## The reliability suite's quick form on a local cluster with an audit log: R1 (kill -9 chaos, one seed, 60 TrainJobs) and its guard, R2 (crash after each write point), R3 (one leader failover cycle) and its guard, R4 (one apiserver outage, an etcd restart), R5, and I5 (30 s); reports in _output/reliability.
	$(TOOLCHAIN) cluster kustomize
	RELIABILITY_MODE=quick go test $(GO_TEST_FLAGS) -timeout 30m -v ./test/reliability/...

.PHONY: test-reliability
test-reliability: ## The full reliability suite: R1 with 500 TrainJobs at 25/s for 60 s, three seeds, and its guard; R2; R3 five cycles; R4 three outages; R5; R6 (2 QPS for 60 s); I5 with 1,000 settled TrainJobs for 60 s.
	$(TOOLCHAIN) cluster kustomize
	RELIABILITY_MODE=full go test $(GO_TEST_FLAGS) -timeout 90m -v ./test/reliability/...

.PHONY: test-integration
test-integration: envtest-assets kustomize helm helm-deps ## Run the envtest integration suites.
	go test $(GO_TEST_FLAGS) ./test/integration/...

.PHONY: browser-deps
browser-deps: ## Install what the browser tests need: Debian's chromium and Node.js (apt, as root) and test/browser's npm packages (npm ci).
	hack/browser-deps.sh

.PHONY: test-browser
test-browser: envtest-assets browser-deps ## Drive the web UI in headless Chromium (playwright-core, axe-core) against an API server; screenshots in _output/browser.
	go test $(GO_TEST_FLAGS) -timeout 10m ./test/browser/...

.PHONY: local-run-deps
local-run-deps: ## Install what the local-run tests need: Debian's python3-torch (torchrun, gloo; apt, as root).
	hack/local-run-deps.sh

.PHONY: test-localrun
test-localrun: local-run-deps ## gantry run --local with real processes: DDP over 2 nodes x 2 processes with Debian's torchrun, a failing rank, two runs at once.
	go test $(GO_TEST_FLAGS) -timeout 10m ./test/localrun/...

.PHONY: test-examples
test-examples: envtest-assets ## Run the downstream example module (examples/downstream-envtest): an envtest suite of its own that runs Gantry through pkg/testkit.
	cd examples/downstream-envtest && go test $(GO_TEST_FLAGS) ./...

.PHONY: verify
verify: generate manifests helm-docs vet ## Regenerate everything, then fail if the tree changed or code is unformatted.
	go mod tidy
	cd test/differential && go mod tidy
	hack/boilerplate.sh
	@test -z "$$(gofmt -s -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -s -l $$(git ls-files '*.go'); exit 1; }
	@if [ -n "$$(git status --porcelain)" ]; then \
		git status --short; git --no-pager diff --stat; \
		echo "The tree changed: run 'make generate manifests helm-docs', 'go mod tidy' and commit the result."; exit 1; fi

##@ Helm chart

.PHONY: helm-deps
helm-deps: ## Copy JobSet's chart from the sigs.k8s.io/jobset module go.mod pins into charts/gantry/charts (ignored).
	hack/helm-deps.sh

.PHONY: helm-lint
helm-lint: helm helm-deps ## helm lint --strict, with the default values and with each charts/gantry/ci values file.
	$(HELM) lint --strict $(CHART_DIR)
	for values in $(CHART_DIR)/ci/*.yaml; do $(HELM) lint --strict $(CHART_DIR) -f $$values; done

.PHONY: helm-unittest
helm-unittest: helm-unittest-bin helm-deps ## Run the chart's helm-unittest suites (charts/gantry/tests).
	$(HELM_UNITTEST) --strict $(CHART_DIR)

.PHONY: helm-package-test
helm-package-test: helm helm-unittest-bin helm-deps ## Package the chart into a temporary directory, then lint it, refuse Kubeflow Trainer-shaped values and run helm-unittest on the package.
	HELM=$(HELM) HELM_UNITTEST=$(HELM_UNITTEST) hack/helm-package-test.sh

.PHONY: test-helm
test-helm: helm-lint helm-unittest helm-package-test ## Lint the chart and run its unit tests, from the checkout and packaged (install from the package: test/integration/helm).

.PHONY: helm-docs
helm-docs: helm-docs-bin ## Generate charts/gantry/README.md from values.yaml; fails on an undocumented value.
	$(HELM_DOCS) --chart-search-root $(CHART_DIR) --chart-to-generate $(CHART_DIR) \
		--template-files README.md.gotmpl --sort-values-order file --skip-version-footer --log-level warning
	@if grep -n ' |  |$$' $(CHART_DIR)/README.md; then \
		echo "Undocumented values in $(CHART_DIR)/values.yaml: add a '# --' comment above them."; exit 1; fi

CHART_PACKAGE_DIR := dist/charts

.PHONY: helm-package
helm-package: helm helm-deps ## Package the chart, with the JobSet subchart, into dist/charts.
	$(HELM) package $(CHART_DIR) -d $(CHART_PACKAGE_DIR)

##@ Local cluster (simulated GPU nodes; see README "Local cluster")

LOCAL_CLUSTER := $(BIN_DIR)/local-cluster
# Extra flags for up and demo, e.g. DEV_CLUSTER_FLAGS="--kueue --nodes 8 --pod-duration 30s".
DEV_CLUSTER_FLAGS ?=
# The e2e suite's own cluster: ports shifted to free ones, so a developer's cluster (or another
# checkout's suite) can keep running.
E2E_CLUSTER_DIR := $(CURDIR)/.state/e2e
E2E_CLUSTER_FLAGS := --state-dir $(E2E_CLUSTER_DIR) --port-offset auto --kueue --audit

.PHONY: local-cluster
local-cluster:
	go build -o $(LOCAL_CLUSTER) ./hack/local-cluster

.PHONY: dev-cluster-assets
dev-cluster-assets:
	$(TOOLCHAIN) cluster kustomize $(if $(findstring --kueue,$(DEV_CLUSTER_FLAGS)),kueue)

.PHONY: dev-cluster-up
dev-cluster-up: dev-cluster-assets local-cluster ## Start (or repair) the local cluster; DEV_CLUSTER_FLAGS adds flags (--kueue, --nodes N, ...).
	$(LOCAL_CLUSTER) up $(DEV_CLUSTER_FLAGS)

.PHONY: dev-cluster-down
dev-cluster-down: local-cluster ## Stop the local cluster (exactly the processes it started).
	$(LOCAL_CLUSTER) down

.PHONY: dev-cluster-status
dev-cluster-status: local-cluster ## Show what the local cluster runs and whether each component is healthy.
	$(LOCAL_CLUSTER) status

.PHONY: demo
demo: dev-cluster-assets local-cluster cli ## Quick start: bring up the local cluster, run the example TrainJobs, watch them finish, then show kubectl gantry on them.
	$(LOCAL_CLUSTER) demo $(DEV_CLUSTER_FLAGS)

.PHONY: test-e2e
test-e2e: local-cluster ## End-to-end suite on a fresh local cluster with Kueue; always torn down, component logs on failure.
	$(TOOLCHAIN) cluster kustomize kueue
	@up=0; rc=0; \
	$(LOCAL_CLUSTER) up $(E2E_CLUSTER_FLAGS) || up=$$?; \
	if [ $$up -eq 0 ]; then E2E_CLUSTER_DIR=$(E2E_CLUSTER_DIR) go test $(GO_TEST_FLAGS) -timeout 30m ./test/e2e/... || rc=$$?; \
	else rc=$$up; $(LOCAL_CLUSTER) logs --state-dir $(E2E_CLUSTER_DIR) --tail 50; fi; \
	$(LOCAL_CLUSTER) down --state-dir $(E2E_CLUSTER_DIR) || true; \
	exit $$rc

# The MultiKueue layout (a manager and two workers; see docs/install.md "Many clusters").
.PHONY: dev-multikueue-up
dev-multikueue-up: local-cluster ## Start (or repair) the multi-cluster layout: a MultiKueue manager and two workers, each with JobSet, Gantry and Kueue (ports from 12000, state in .state/multikueue).
	$(TOOLCHAIN) cluster kustomize kueue
	$(LOCAL_CLUSTER) up --multikueue $(DEV_CLUSTER_FLAGS)

.PHONY: dev-multikueue-down
dev-multikueue-down: local-cluster ## Stop the multi-cluster layout.
	$(LOCAL_CLUSTER) down --multikueue

.PHONY: test-e2e-multikueue
test-e2e-multikueue: local-cluster ## The MultiKueue suite on a fresh manager and two workers: dispatch, status back, annotations, suspend/resume/delete, a full fleet, a lost worker, the RBAC Kueue uses; memory per cluster; always torn down.
	$(TOOLCHAIN) cluster kustomize kueue
	go test $(GO_TEST_FLAGS) -timeout 30m -v ./test/multikueue/... $(MULTIKUEUE_FLAGS)

.PHONY: test-e2e-multikueue-quick
test-e2e-multikueue-quick: ## The MultiKueue suite's quick form (part of make test): the layout comes up, and a queued TrainJob runs on a worker with its status mirrored back.
	$(MAKE) test-e2e-multikueue MULTIKUEUE_FLAGS="-ginkgo.label-filter=quick"

##@ Benchmarks

BENCH_N ?= 1000
BENCH_PARALLEL ?= 16
BENCH_UNRELATED ?= 20000
BENCH_OUT ?= _output/bench
SCALE_N ?= 10000
SCALE_WAVE ?= 1000
SCALE_NODES ?= 500
SCALE_OUT ?= _output/scale
SCALE_FLAGS ?=
BENCH_FLAGS ?=

.PHONY: bench
bench: envtest-assets kustomize ## Benchmark Gantry against direct JobSet creation (BENCH_N, BENCH_PARALLEL, BENCH_UNRELATED, BENCH_FLAGS); writes $(BENCH_OUT).
	go run ./test/perf -n $(BENCH_N) -parallel $(BENCH_PARALLEL) -unrelated $(BENCH_UNRELATED) -out $(BENCH_OUT) $(BENCH_FLAGS)

.PHONY: bench-scale
bench-scale: ## The scale run on a local cluster: SCALE_N TrainJobs (default 10,000, 4 pods each) on SCALE_NODES kwok GPU nodes, in waves of SCALE_WAVE; memory, CPU and latency against settled TrainJobs, idle writes, restart time, plots; writes $(SCALE_OUT).
	$(TOOLCHAIN) cluster kustomize
	go run ./test/perf -scale -n $(SCALE_N) -wave $(SCALE_WAVE) -kwok-nodes $(SCALE_NODES) -parallel $(BENCH_PARALLEL) -timeout 60m -out $(SCALE_OUT) $(SCALE_FLAGS)

.PHONY: bench-cache
bench-cache: ## Bytes the manager's cache holds per settled TrainJob (its TrainJob, JobSet and runtime snapshot, decoded and trimmed as the informers do): seconds, where the scale run takes an hour.
	go test ./internal/cached -run '^$$' -bench CachedSettledTrainJob -benchtime 5x

.PHONY: bench-smoke
bench-smoke: envtest-assets kustomize ## The benchmark harness at N=50 (part of make test): checks that it works and every JobSet appears, not timings; and bench-ui-history's 20 s form, which checks the history's own accounting.
	go run ./test/perf -n 50 -parallel 5 -unrelated 500 -out _output/bench-smoke
	go test $(GO_TEST_FLAGS) ./test/perf ./test/uibench

BENCH_UI_DURATION ?= 5m
BENCH_UI_FLAGS ?=

.PHONY: bench-ui-history
bench-ui-history: envtest-assets ## gantry-ui's memory while one TrainJob reports 256 new metric names a second for BENCH_UI_DURATION (5m), its Progress tab open, on an envtest API server: peak and final RSS; fails over 128 MiB (BENCH_UI_FLAGS, e.g. -ui-bin OLD); writes _output/ui-history.
	go run ./test/uibench -duration $(BENCH_UI_DURATION) -out _output/ui-history $(BENCH_UI_FLAGS)

##@ Toolchain

.PHONY: envtest-assets
envtest-assets: ## Build (or reuse) kube-apiserver, etcd and kubectl for envtest.
	$(TOOLCHAIN) envtest

.PHONY: cluster-assets
cluster-assets: ## Build (or reuse) every binary of the local cluster.
	$(TOOLCHAIN) cluster

.PHONY: tools
tools: ## Build (or reuse) controller-gen, golangci-lint, kube-api-linter, kustomize, helm, helm-unittest and helm-docs.
	$(TOOLCHAIN) tools

.PHONY: controller-gen
controller-gen:
	@$(TOOLCHAIN) controller-gen

.PHONY: golangci-lint
golangci-lint:
	@$(TOOLCHAIN) golangci-lint

.PHONY: kube-api-linter
kube-api-linter:
	@$(TOOLCHAIN) kube-api-linter

.PHONY: kustomize
kustomize:
	@$(TOOLCHAIN) kustomize

.PHONY: helm
helm:
	@$(TOOLCHAIN) helm

.PHONY: helm-unittest-bin
helm-unittest-bin:
	@$(TOOLCHAIN) helm-unittest

.PHONY: helm-docs-bin
helm-docs-bin:
	@$(TOOLCHAIN) helm-docs
