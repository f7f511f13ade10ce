#!/usr/bin/env bash
# `make test`: installs what the tests need (idempotently) and runs every module's tests, closing
# with a counted line "N passed, N failed, N skipped". The end-to-end tests package both apps
# themselves (scripts/package.sh) and run those folders under the local Functions host.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/ensure-azurite.sh >/dev/null
[ ! -f scripts/install-pdf-tools.sh ] || bash scripts/install-pdf-tools.sh
[ ! -f scripts/install-chromium.sh ] || bash scripts/install-chromium.sh
go vet ./shared/... ./dispatcher/... ./processor/... ./tests/... ./connector/... ./portal/... ./devtools/...
bash scripts/deadcode.sh
go build -o bin/testsummary ./tests/cmd/testsummary
go test -json -count=1 -p 2 -timeout 14m ${TEST_PKGS:-./shared/... ./dispatcher/... ./processor/... ./tests/... ./connector/... ./portal/... ./devtools/...} 2>&1 \
  | bin/testsummary
