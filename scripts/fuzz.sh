#!/usr/bin/env bash
# Runs every Fuzz* target for FUZZTIME (default 20s) each, in every module (the connector's and
# the portal's too); the new interesting inputs `go test -fuzz` keeps in GOCACHE are copied into
# the package's testdata/fuzz/<target> corpus, which is committed and replayed by `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-20s}
cache=$(go env GOCACHE)/fuzz
grep -rl --include='*_test.go' '^func Fuzz' shared dispatcher processor connector portal tests devtools | while read -r f; do
  dir=$(dirname "$f")
  for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
    echo "== $dir $fn ($t)"
    go test "./$dir" -run '^$' -fuzz "^$fn\$" -fuzztime "$t"
    kept="$cache/$(go list "./$dir")/$fn"
    if [ -d "$kept" ]; then
      mkdir -p "$dir/testdata/fuzz/$fn"
      cp -n "$kept"/* "$dir/testdata/fuzz/$fn/" 2>/dev/null || true
    fi
  done
done
