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

# Installs what the local-run tests (test/localrun) need: Debian's python3-torch, which brings
# /usr/bin/torchrun and gloo for CPU training (about 150 MB). Idempotent; apt needs root.
set -euo pipefail

[[ -x /usr/bin/torchrun ]] && exit 0
if [[ $(id -u) -ne 0 ]]; then
  echo "local-run-deps: /usr/bin/torchrun missing; install python3-torch (apt-get install python3-torch) or run as root" >&2
  exit 1
fi
echo "local-run-deps: apt-get install python3-torch"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3-torch >/dev/null
