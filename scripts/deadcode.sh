#!/usr/bin/env bash
# Reports the functions of every workspace module (go.work) that nothing reaches: golang.org/x/tools
# deadcode, pinned, from every main package and every test (a function only tests call is kept:
# the test seams and test helpers). Fails when it finds any.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v0.52.0
mapfile -t patterns < <(go list -m -f '{{.Path}}/...')
out=$(go run "golang.org/x/tools/cmd/deadcode@$version" -test -filter 'github.com/esign-svc/esign' "${patterns[@]}")
if [ -n "$out" ]; then
  echo "$out"
  echo "deadcode: the functions above are unreachable; remove them" >&2
  exit 1
fi
echo "deadcode: nothing unreachable"
