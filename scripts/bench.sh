#!/usr/bin/env bash
# `make bench`: every benchmark once, with memory figures. BENCH selects (default all),
# BENCHTIME sets -benchtime for the package benchmarks (go's default), E2E_BENCHTIME for the
# end-to-end ones (default 1000x: 1000 creates, 1000 callbacks, each on an empty Azurite and after
# 50,000 unrelated rows, next to the Azurite floor).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-azurite.sh >/dev/null
[ ! -f scripts/install-pdf-tools.sh ] || bash scripts/install-pdf-tools.sh
bash scripts/package.sh >/dev/null
go test -run '^$' -bench "${BENCH:-.}" -benchmem ${BENCHTIME:+-benchtime $BENCHTIME} \
  ./shared/... ./dispatcher/... ./processor/... ./devtools/... $(go list ./tests/... | grep -v -e /tests/e2e$ -e /tests/browser$)
go test -run '^$' -bench "${BENCH:-.}" -benchmem -benchtime "${E2E_BENCHTIME:-1000x}" ./tests/e2e/
