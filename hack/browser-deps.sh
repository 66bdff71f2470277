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

# Installs what the browser tests (test/browser) need: Debian's chromium (no browser download:
# playwright-core drives the system's), Node.js with npm, and the npm packages of
# test/browser/package-lock.json. Idempotent; apt needs root.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
[[ -x /usr/bin/chromium ]] || need+=(chromium)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if ((${#need[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "browser-deps: ${need[*]} missing; install them (apt-get install ${need[*]}) or run as root" >&2
    exit 1
  fi
  echo "browser-deps: apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# npm ci only when the lockfile changed since the last install.
stamp=test/browser/node_modules/.package-lock.sha256
sum=$(sha256sum test/browser/package-lock.json | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$sum" ]]; then
  (cd test/browser && npm ci --no-audit --no-fund --loglevel=error)
  echo "$sum" > "$stamp"
fi
