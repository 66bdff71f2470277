#!/usr/bin/env bash
# Copyright 2026 The Gantry Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Usage: hack/kubectl-plugin.sh SRC_DIR [DEST_DIR]
#
# Makes the gantry binary of SRC_DIR a kubectl plugin in DEST_DIR (default SRC_DIR): a copy of
# gantry (when DEST_DIR differs), kubectl-gantry as a hard link to it (kubectl finds plugins by
# that name on PATH) and the kubectl_complete-gantry shim that kubectl 1.26+ runs to complete
# `kubectl gantry ...`. gantry-ui, the web UI server, is copied along when SRC_DIR has it.
set -euo pipefail

src=${1:?usage: hack/kubectl-plugin.sh SRC_DIR [DEST_DIR]}
dest=${2:-$src}
[[ -x "$src/gantry" ]] || { echo "kubectl-plugin.sh: no gantry binary in $src (run make build)" >&2; exit 2; }
mkdir -p "$dest"
if [[ "$(cd "$src" && pwd)" != "$(cd "$dest" && pwd)" ]]; then
  install -m 0755 "$src/gantry" "$dest/gantry"
  if [[ -x "$src/gantry-ui" ]]; then install -m 0755 "$src/gantry-ui" "$dest/gantry-ui"; fi
fi
ln -f "$dest/gantry" "$dest/kubectl-gantry"
cat > "$dest/kubectl_complete-gantry" <<'SHIM'
#!/usr/bin/env sh
# kubectl (1.26+) runs this to complete `kubectl gantry ...`; it asks gantry's own completion.
exec "$(dirname "$0")/kubectl-gantry" __complete "$@"
SHIM
chmod 0755 "$dest/kubectl_complete-gantry"
if [[ -x "$dest/gantry-ui" ]]; then
  echo "installed gantry, gantry-ui, kubectl-gantry and kubectl_complete-gantry in $dest"
else
  echo "installed gantry, kubectl-gantry and kubectl_complete-gantry in $dest"
fi
