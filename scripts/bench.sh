#!/usr/bin/env bash
# `make bench`: every benchmark once, with memory figures. BENCH selects (default all),
# BENCHTIME sets -benchtime for the package benchmarks (go's default), E2E_BENCHTIME for the
# end-to-end ones (default 200x: 200 creates, 200 callbacks, each on an empty Azurite and after
# 50,000 unrelated rows, next to the Azurite floor).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-azurite.sh >/dev/null
[ ! -f scripts/install-pdf-tools.sh ] || bash scripts/install-pdf-tools.sh
bash scripts/package.sh >/dev/null
go test -run '^$' -bench "${BENCH:-.}" -benchmem ${BENCHTIME:+-benchtime $BENCHTIME} \
  ./shared/... ./dispatcher/... ./processor/... $(go list ./tests/... | grep -v /tests/e2e$)
go test -run '^$' -bench "${BENCH:-.}" -benchmem -benchtime "${E2E_BENCHTIME:-200x}" ./tests/e2e/
