#!/usr/bin/env bash
# Checks that every Go file of the module starts with the license header of
# hack/boilerplate.go.txt (after its //go:build line, where it has one, as controller-gen writes
# it). With --fix it adds the header where it is missing.
#
# Usage: hack/boilerplate.sh [--fix]
# Exit codes: 0 every file has the header (or was fixed), 1 some file lacks it, 2 usage error.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
header=hack/boilerplate.go.txt
fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  *)
    echo "usage: hack/boilerplate.sh [--fix]" >&2
    exit 2
    ;;
esac

n=$(wc -l <"$header")
missing=()
while IFS= read -r f; do
  skip=0
  [[ "$(sed -n 1p "$f")" != //go:build* ]] || skip=2
  # sed reads the whole file: a reader that stops early would fail the pipe under pipefail.
  if ! sed -n "$((skip + 1)),$((skip + n))p" "$f" | cmp -s - "$header"; then
    missing+=("$f")
  fi
done < <(git ls-files --cached --others --exclude-standard -- '*.go')

[ ${#missing[@]} -gt 0 ] || exit 0
if [ "$fix" = 0 ]; then
  for f in "${missing[@]}"; do echo "$f: lacks the license header of $header (run hack/boilerplate.sh --fix)" >&2; done
  exit 1
fi
for f in "${missing[@]}"; do
  tmp=$(mktemp)
  if [[ "$(sed -n 1p "$f")" == //go:build* ]]; then
    { head -2 "$f"; cat "$header"; echo; tail -n +3 "$f"; } >"$tmp"
  else
    { cat "$header"; echo; cat "$f"; } >"$tmp"
  fi
  cat "$tmp" >"$f"
  rm -f "$tmp"
done
echo "added the license header to ${#missing[@]} files"
