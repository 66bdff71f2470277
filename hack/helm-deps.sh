#!/usr/bin/env bash
# Copies JobSet's own Helm chart, shipped in the sigs.k8s.io/jobset module at the version go.mod
# pins, into charts/gantry/charts/jobset: the subchart behind the chart's jobset.install value.
# This is the offline path; online, `helm dependency build charts/gantry` pulls the same chart
# from the repository Chart.yaml names.
# The copy is a build input, never committed (it is JobSet's code) and never edited; every make
# target that renders or packages the chart runs this first. It fails when the chart's
# dependency pin or its JobSet image tag no longer match the module version.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CHART="$ROOT/charts/gantry"
export GOTOOLCHAIN=local

cd "$ROOT"
version=$(go list -m -f '{{.Version}}' sigs.k8s.io/jobset)
dir=$(go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  go mod download sigs.k8s.io/jobset
  dir=$(go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)
fi
src="$dir/charts/jobset"
[ -f "$src/Chart.yaml" ] || { echo "helm-deps: $src/Chart.yaml not found in sigs.k8s.io/jobset@$version" >&2; exit 1; }

# The pins that must follow the module: the dependency version and the image tag.
chart_version=$(sed -n 's/^version: *//p' "$src/Chart.yaml")
[ "$chart_version" = "${version#v}" ] || {
  echo "helm-deps: sigs.k8s.io/jobset@$version ships chart version $chart_version" >&2; exit 1; }
dep_version=$(awk '/^  - name: jobset$/ {f=1; next} f && /^    version:/ {print $2; exit}' "$CHART/Chart.yaml")
[ "$dep_version" = "$chart_version" ] || {
  echo "helm-deps: charts/gantry/Chart.yaml depends on jobset $dep_version, go.mod pins $version: update the dependency version" >&2; exit 1; }
image_tag=$(awk '/^jobset:$/ {f=1; next} f && /^[^ #]/ {f=0} f && /^    tag:/ {print $2; exit}' "$CHART/values.yaml")
[ "$image_tag" = "$version" ] || {
  echo "helm-deps: charts/gantry/values.yaml sets jobset.image.tag $image_tag, go.mod pins $version: update it" >&2; exit 1; }

dst="$CHART/charts/jobset"
stamp="$CHART/charts/.jobset.version"
# An archive `helm dependency build` fetched is the same chart; with both, Helm would load two.
rm -f "$CHART"/charts/jobset-*.tgz
if [ -d "$dst" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
  exit 0
fi
rm -rf "$dst"
mkdir -p "$CHART/charts"
cp -R "$src" "$dst"
chmod -R u+w "$dst" # the module cache is read-only
echo "$version" >"$stamp"
echo "helm-deps: charts/gantry/charts/jobset copied from sigs.k8s.io/jobset@$version" >&2
