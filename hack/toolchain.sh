#!/usr/bin/env bash
# Builds the binaries Gantry's tests and tools need from Go modules only, so that it works on a
# machine whose only reachable registries are the Go module proxy and Debian's apt.
#
# Usage: hack/toolchain.sh [envtest|cluster|tools|kueue|all|NAME...]
#   envtest  kube-apiserver, etcd, kubectl (what envtest needs)
#   cluster  envtest + kube-controller-manager, kube-scheduler, kwok, jobset (local cluster)
#   tools    controller-gen, golangci-lint, kube-api-linter, kustomize, helm, helm-unittest, helm-docs
#   kueue    the Kueue controller
#   all      everything above
#
# Binaries are cached outside the clone, one directory per component and version
# ($GANTRY_CACHE/bin/<name>-<version>), so clean clones on the same machine reuse them; a stamp
# file records what was built and a changed pin in hack/versions.env triggers a rebuild. The repo's
# bin/ (ignored) gets symlinks to the cached binaries, so KUBEBUILDER_ASSETS=bin works.
#
# Environment:
#   GANTRY_CACHE         cache root (default $HOME/.cache/gantry)
#   BIN_DIR              where symlinks go (default <repo>/bin)
#   KUBEBUILDER_ASSETS   if it already holds kube-apiserver and etcd, they are used, not built
#   TOOLCHAIN_DOWNLOAD=1 try the upstream envtest download first (fails fast without internet)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=hack/versions.env
. "$ROOT/hack/versions.env"

GANTRY_CACHE=${GANTRY_CACHE:-$HOME/.cache/gantry}
BIN_DIR=${BIN_DIR:-$ROOT/bin}
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
LDFLAGS_BASE="-s -w"

log() { printf '[toolchain] %s\n' "$*" >&2; }

# stamp_ok DIR NAME VERSION: true when DIR/NAME exists and was built from VERSION.
stamp_ok() { [ -x "$1/$2" ] && [ "$(cat "$1/.$2.version" 2>/dev/null)" = "$3" ]; }
stamp() { echo "$3" >"$1/.$2.version"; }

link() { # link DIR NAME: expose a cached binary in BIN_DIR
  mkdir -p "$BIN_DIR"
  ln -sfn "$1/$2" "$BIN_DIR/$2"
}

# scratch_module DIR MODULE VERSION TOOLPKGS... ; extra replace lines come from $REPLACES.
# A throw-away module is the only way to build commands whose own go.mod has replace
# directives (go install refuses them) or whose version list the proxy will not serve.
scratch_module() {
  local dir=$1 mod=$2 ver=$3
  shift 3
  mkdir -p "$dir"
  {
    echo "module local/gantry-toolchain"
    echo
    echo "go 1.26.0"
    echo
    echo "require $mod $ver"
    if [ -n "${REPLACES:-}" ]; then
      echo
      echo "replace ("
      echo "$REPLACES"
      echo ")"
    fi
    echo
    echo "tool ("
    printf '\t%s\n' "$@"
    echo ")"
  } >"$dir/go.mod.new"
  if ! cmp -s "$dir/go.mod.new" "$dir/go.mod.in" 2>/dev/null; then
    cp "$dir/go.mod.new" "$dir/go.mod"
    cp "$dir/go.mod.new" "$dir/go.mod.in"
    rm -f "$dir/go.sum"
    log "resolving $mod@$ver (go mod tidy)"
    (cd "$dir" && go mod tidy)
  fi
  rm -f "$dir/go.mod.new"
}

# build_from DIR OUTDIR LDFLAGS PKGS...: one go build for several commands, so they share packages.
build_from() {
  local dir=$1 out=$2 ldflags=$3
  shift 3
  mkdir -p "$out"
  (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$out/" "$@")
}

k8s_cmds() { # k8s_cmds NAME...: build the requested k8s.io/kubernetes commands
  local out="$GANTRY_CACHE/bin/k8s-$K8S_VERSION" todo=() n
  for n in "$@"; do stamp_ok "$out" "$n" "$K8S_VERSION" || todo+=("$n"); done
  if [ ${#todo[@]} -gt 0 ]; then
    log "building ${todo[*]} from k8s.io/kubernetes@$K8S_VERSION (cold: ~10 min for kube-apiserver)"
    local gomod src="$GANTRY_CACHE/src/k8s-$K8S_VERSION"
    gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    # Every ./staging/src/k8s.io/X replace of k8s.io/kubernetes becomes k8s.io/X => k8s.io/X vSTAGING.
    REPLACES=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/.*#\t\1 => \1 '"$K8S_STAGING_VERSION"'#p' "$gomod" |
      grep -v 'k8s.io/sample-') \
      scratch_module "$src" k8s.io/kubernetes "$K8S_VERSION" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl \
      k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
    local minor=${K8S_VERSION#v1.}
    minor=${minor%%.*}
    local v=k8s.io/component-base/version
    local ld="$LDFLAGS_BASE -X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
    local pkgs=()
    for n in "${todo[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$n"); done
    build_from "$src" "$out" "$ld" "${pkgs[@]}"
    for n in "${todo[@]}"; do stamp "$out" "$n" "$K8S_VERSION"; done
  fi
  for n in "$@"; do link "$out" "$n"; done
}

# simple_tool NAME MODULE VERSION PKG [LDFLAGS]: a command built through a scratch module.
simple_tool() {
  local name=$1 mod=$2 ver=$3 pkg=$4 ld="$LDFLAGS_BASE ${5:-}"
  local out="$GANTRY_CACHE/bin/$name-$ver"
  if ! stamp_ok "$out" "$name" "$ver"; then
    log "building $name from $mod@$ver"
    local src="$GANTRY_CACHE/src/$name-$ver"
    scratch_module "$src" "$mod" "$ver" "$pkg"
    (cd "$src" && go build -trimpath -ldflags "$ld" -o "$out/$name" "$pkg")
    stamp "$out" "$name" "$ver"
  fi
  link "$out" "$name"
}

etcd() { simple_tool etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3; }
kwok() {
  simple_tool kwok sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok \
    "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION"
}
jobset() { simple_tool jobset sigs.k8s.io/jobset "$JOBSET_VERSION" sigs.k8s.io/jobset; }
kueue() { simple_tool kueue sigs.k8s.io/kueue "$KUEUE_VERSION" sigs.k8s.io/kueue/cmd/kueue; }
controller_gen() {
  simple_tool controller-gen sigs.k8s.io/controller-tools "$CONTROLLER_TOOLS_VERSION" \
    sigs.k8s.io/controller-tools/cmd/controller-gen
}
kustomize() {
  simple_tool kustomize sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5
}
helm() {
  simple_tool helm helm.sh/helm/v3 "$HELM_VERSION" helm.sh/helm/v3/cmd/helm \
    "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
}
golangci_lint() {
  simple_tool golangci-lint github.com/golangci/golangci-lint/v2 "$GOLANGCI_LINT_VERSION" \
    github.com/golangci/golangci-lint/v2/cmd/golangci-lint
}
# kube-api-linter: golangci-lint with Kube API Linter built in as a module (make lint-api).
kube_api_linter() {
  simple_tool kube-api-linter sigs.k8s.io/kube-api-linter "$KUBE_API_LINTER_VERSION" \
    sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter
}
helm_unittest() {
  # Its go.mod replaces yaml-jsonpath with a fork; the scratch module must repeat that.
  REPLACES=$'\tgithub.com/vmware-labs/yaml-jsonpath v0.3.2 => github.com/helm-unittest/yaml-jsonpath v0.4.0' \
    simple_tool helm-unittest github.com/helm-unittest/helm-unittest "$HELM_UNITTEST_VERSION" \
    github.com/helm-unittest/helm-unittest/cmd/helm-unittest
}

helm_docs() {
  simple_tool helm-docs github.com/norwoodj/helm-docs "$HELM_DOCS_VERSION" github.com/norwoodj/helm-docs/cmd/helm-docs
}

# try_download_envtest: the usual route on a connected laptop; optional and best effort.
try_download_envtest() {
  [ "${TOOLCHAIN_DOWNLOAD:-0}" = 1 ] || return 1
  local out="$GANTRY_CACHE/bin/k8s-$K8S_VERSION" tmp
  tmp=$(mktemp -d)
  local url="https://github.com/kubernetes-sigs/controller-tools/releases/download/envtest-$K8S_VERSION/envtest-$K8S_VERSION-linux-amd64.tar.gz"
  log "trying download of envtest binaries"
  if curl -fsSL --max-time 120 "$url" | tar -xz -C "$tmp" 2>/dev/null; then
    mkdir -p "$out" "$GANTRY_CACHE/bin/etcd-$ETCD_VERSION"
    local d
    d=$(dirname "$(find "$tmp" -name kube-apiserver | head -n1)")
    install -m 0755 "$d/kube-apiserver" "$d/kubectl" "$out/"
    stamp "$out" kube-apiserver "$K8S_VERSION"
    stamp "$out" kubectl "$K8S_VERSION"
    install -m 0755 "$d/etcd" "$GANTRY_CACHE/bin/etcd-$ETCD_VERSION/etcd"
    stamp "$GANTRY_CACHE/bin/etcd-$ETCD_VERSION" etcd "$ETCD_VERSION"
    rm -rf "$tmp"
    return 0
  fi
  rm -rf "$tmp"
  log "download failed; building from Go modules instead"
  return 1
}

envtest() {
  local assets=${KUBEBUILDER_ASSETS:-}
  if [ -n "$assets" ] && [ -x "$assets/kube-apiserver" ] && [ -x "$assets/etcd" ] &&
    [ "$(cd "$assets" && pwd -P)" != "$(cd "$BIN_DIR" 2>/dev/null && pwd -P)" ]; then
    log "using KUBEBUILDER_ASSETS=$assets"
    local n
    for n in kube-apiserver etcd kubectl; do [ -x "$assets/$n" ] && link "$assets" "$n"; done
    return 0
  fi
  try_download_envtest || true
  etcd
  k8s_cmds kube-apiserver kubectl
}

cluster() {
  envtest
  k8s_cmds kube-controller-manager kube-scheduler
  kwok
  jobset
}

tools() {
  controller_gen
  golangci_lint
  kube_api_linter
  kustomize
  helm
  helm_unittest
  helm_docs
}

main() {
  [ $# -gt 0 ] || set -- envtest
  mkdir -p "$GANTRY_CACHE"
  # One build at a time: concurrent runs would race on the scratch modules and stamps.
  exec 9>"$GANTRY_CACHE/.lock"
  flock 9
  local t0=$SECONDS a
  for a in "$@"; do
    case "$a" in
      envtest | cluster | tools | kueue | etcd | kwok | jobset | kustomize | helm) "$a" ;;
      all) cluster && tools && kueue ;;
      controller-gen) controller_gen ;;
      golangci-lint) golangci_lint ;;
      kube-api-linter) kube_api_linter ;;
      helm-unittest) helm_unittest ;;
      helm-docs) helm_docs ;;
      kube-apiserver | kubectl | kube-controller-manager | kube-scheduler) k8s_cmds "$a" ;;
      *)
        echo "unknown target: $a" >&2
        exit 2
        ;;
    esac
  done
  log "done in $((SECONDS - t0))s; binaries linked in $BIN_DIR"
}

main "$@"
