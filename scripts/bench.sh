#!/usr/bin/env bash
# `make bench`: every benchmark once, with memory figures. BENCH selects (default all),
# BENCHTIME sets -benchtime (default 1x for end-to-end, go's default elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-azurite.sh >/dev/null
[ ! -f scripts/install-pdf-tools.sh ] || bash scripts/install-pdf-tools.sh
bash scripts/package.sh >/dev/null
go test -run '^$' -bench "${BENCH:-.}" -benchmem ${BENCHTIME:+-benchtime $BENCHTIME} \
  ./shared/... ./dispatcher/... ./processor/... ./tests/...
