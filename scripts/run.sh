#!/usr/bin/env bash
# `make run`: the whole service on this machine. Starts Azurite (data under .local/azurite), makes
# missing dev keys and secrets under .local/ (and .local/dev.env), packages both apps, and runs
# them under the local Functions host on http://127.0.0.1:7071. Ctrl-C stops it all.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
listen=${LISTEN:-127.0.0.1:7071}
mkdir -p .local/azurite bin
azurite=$(bash scripts/ensure-azurite.sh)
go run ./tests/cmd/devsetup --dir .local --base-url "http://$listen"
bash scripts/package.sh
go build -o bin/funchost ./tests/funchost/cmd/funchost

pids=()
cleanup() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "stopped"
}
trap cleanup INT TERM EXIT

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if port_open 10000 && port_open 10001 && port_open 10002; then
  echo "Azurite already listens on 10000-10002; using it"
else
  "$azurite" --location .local/azurite --blobHost 127.0.0.1 --queueHost 127.0.0.1 --tableHost 127.0.0.1 \
    --skipApiVersionCheck --disableTelemetry --silent >.local/azurite.log 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do port_open 10000 && port_open 10001 && port_open 10002 && break; sleep 0.2; done
  port_open 10002 || { echo "Azurite did not start; see .local/azurite.log" >&2; exit 1; }
fi

set -a; . .local/dev.env; set +a
bin/funchost --app dist/dispatcher --app dist/processor --listen "$listen" --env-file .local/dev.env \
  --host-key "$HOST_KEY" --master-key "$MASTER_KEY" &
pids+=($!)
for _ in $(seq 1 150); do
  curl -fsS "http://$listen/api/health" >/dev/null 2>&1 && break
  kill -0 "${pids[-1]}" 2>/dev/null || { echo "the local Functions host exited" >&2; exit 1; }
  sleep 0.2
done
cat <<MSG

The service is running.
  Base URL:      http://$listen/api   (routes with authLevel function need ?code=\$HOST_KEY)
  Health:        curl http://$listen/api/health
  Dev settings:  .local/dev.env   (BASE_URL, HOST_KEY, STORAGE_CONNECTION_STRING, PORTAL_CALLBACK_SECRETS, PORTAL_URL, ...)
  A JWT:         make token TENANT=<tid> ROLES=Esign.Initiator,Service.Admin
  Storage:       Azurite on 127.0.0.1:10000 (blob), 10001 (queue), 10002 (table); data in .local/azurite
Ctrl-C stops everything.
MSG
wait -n "${pids[@]}"
