#!/usr/bin/env bash
# Writes the files the Helm chart installs from (it cannot read outside its directory), as
# byte-identical copies of what `make manifests` generates or the repository ships:
#   config/runtimes/*.yaml         -> charts/gantry/files/runtimes/ (not kustomization.yaml)
#   config/rbac/role.yaml          -> charts/gantry/files/rbac/
#   config/webhook/manifests.yaml  -> charts/gantry/files/webhook/
# `make manifests` runs this and `make verify` fails if the committed copies differ. The CRDs
# (charts/gantry/files/crds) are not copies: `make manifests` generates them without
# descriptions, since Helm keeps every chart file and the rendered manifest, base64'd, in one
# release Secret of at most 1 MiB, which the four CRDs with descriptions overflow.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FILES="$ROOT/charts/gantry/files"

sync() { # sync DEST SRC...: DEST holds exactly the SRC files
  local dest="$FILES/$1"
  shift
  rm -rf "$dest"
  mkdir -p "$dest"
  cp "$@" "$dest/"
}

cd "$ROOT/config"
mapfile -t runtimes < <(ls runtimes/*.yaml | grep -v '/kustomization.yaml$')
sync runtimes "${runtimes[@]}"
sync rbac rbac/role.yaml
sync webhook webhook/manifests.yaml
