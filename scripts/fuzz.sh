#!/usr/bin/env bash
# Runs every Fuzz* target for FUZZTIME (default 20s) each; new interesting inputs land in the
# packages' testdata/fuzz corpus, which is committed and replayed by `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-20s}
grep -rl --include='*_test.go' '^func Fuzz' shared dispatcher processor tests | while read -r f; do
  dir=$(dirname "$f")
  for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
    echo "== $dir $fn ($t)"
    go test "./$dir" -run '^$' -fuzz "^$fn\$" -fuzztime "$t"
  done
done
