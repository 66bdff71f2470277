#!/usr/bin/env bash
# Tests the chart as users receive it: `helm package` (JobSet's chart inside) into a temporary
# directory, then, on that archive, helm lint --strict with the default values and with each
# charts/gantry/ci values file; a values file shaped like Kubeflow Trainer's chart must be refused
# with the path of each wrong value; and the chart's helm-unittest suites run over the unpacked
# archive (the package leaves tests/ out, so they are copied beside it). helm install, upgrade and
# uninstall of the same archive are in test/integration/helm.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CHART="$ROOT/charts/gantry"
HELM=${HELM:-$ROOT/bin/helm}
HELM_UNITTEST=${HELM_UNITTEST:-$ROOT/bin/helm-unittest}
UPSTREAM_VALUES="$ROOT/test/integration/helm/testdata/upstream-values.yaml"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Keep helm's caches and configuration out of the user's home.
export HELM_CACHE_HOME="$tmp/helm" HELM_CONFIG_HOME="$tmp/helm" HELM_DATA_HOME="$tmp/helm"

"$ROOT/hack/helm-deps.sh"
"$HELM" package "$CHART" -d "$tmp" >/dev/null
pkg=$(echo "$tmp"/gantry-*.tgz)
listing=$(tar -tzf "$pkg")
grep -qx 'gantry/charts/jobset/Chart.yaml' <<<"$listing" || {
  echo "helm-package-test: $pkg holds no JobSet chart" >&2; exit 1; }

"$HELM" lint --strict "$pkg"
for values in "$CHART"/ci/*.yaml; do
  "$HELM" lint --strict "$pkg" -f "$values"
done

if out=$("$HELM" lint --strict "$pkg" -f "$UPSTREAM_VALUES" 2>&1); then
  echo "helm-package-test: the chart accepted $UPSTREAM_VALUES" >&2; exit 1
fi
for want in \
  "at '/manager': additional properties 'selectorLabels' not allowed" \
  "at '/runtimes/deepspeedDistributed/image': got object, want string" \
  "at '/runtimes/installer': additional properties 'image' not allowed" \
  "at '': additional properties 'dataCache' not allowed"; do
  grep -qF "$want" <<<"$out" || {
    echo "helm-package-test: lint with $UPSTREAM_VALUES does not say: $want" >&2
    echo "$out" >&2
    exit 1
  }
done
echo "helm-package-test: values shaped like Kubeflow Trainer's chart are refused, with their paths"

mkdir "$tmp/unpacked"
tar -xzf "$pkg" -C "$tmp/unpacked"
cp -R "$CHART/tests" "$tmp/unpacked/gantry/tests"
"$HELM_UNITTEST" --strict "$tmp/unpacked/gantry"
