#!/usr/bin/env bash
# `make run`: the whole service on this machine. Installs the pinned Azurite when missing, makes
# missing dev keys and secrets under .local/ (and .local/dev.env), builds both apps into dist/
# (no zips; an unchanged handler is not linked again), starts Azurite (data under .local/azurite)
# and runs both apps under the local Functions host on http://127.0.0.1:7071 (LISTEN=host:port to
# change). The reference signing portal (portal/) runs at PORTAL_URL, http://127.0.0.1:7080
# (PORTAL=host:port to change), so the links in the outbox's messages open real pages. A local
# licensing service (devtools/cmd/devlicensing) answers LICENSING_URL, http://127.0.0.1:7073
# (LICENSING_LISTEN=host:port to change), and keeps what the apps sent it. A development PKI
# (devtools/cmd/devpki: TSA, OCSP responder, CRL) serves http://127.0.0.1:7074 (PKI_LISTEN), so
# seals are PAdES B-LTA. Each step says what it does. Ctrl-C or SIGTERM stops it all and exits 0.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
listen=${LISTEN:-127.0.0.1:7071}
oauth_listen=${OAUTH_LISTEN:-127.0.0.1:7072}
portal=${PORTAL:-127.0.0.1:7080}
licensing_listen=${LICENSING_LISTEN:-127.0.0.1:7073}
pki_listen=${PKI_LISTEN:-127.0.0.1:7074}
start=$SECONDS
step() { printf '==> [%3ss] %s\n' "$((SECONDS - start))" "$*"; }

pids=()
stopping=""
cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$stopping" ]; then
    echo "stopped"
    exit 0
  fi
  exit "$rc"
}
trap 'stopping=1; cleanup' INT TERM
trap cleanup EXIT

mkdir -p .local/azurite bin
if [ ! -x node_modules/.bin/azurite ]; then
  step "installing Azurite (npm ci, first run only; about a minute)"
fi
azurite=$(bash scripts/ensure-azurite.sh)
step "dev keys and settings under .local/ (only what is missing; the first run compiles the tool)"
go run ./devtools/cmd/devsetup --dir .local --base-url "http://$listen" --oauth-url "http://$oauth_listen" --portal-url "http://$portal" --pki-url "http://$pki_listen"
# The processor asks the portal to forget a sealed session's slots (shared/portalclient).
echo "PORTAL_API_URL=http://$portal" >>.local/dev.env
# Both apps ask the local licensing service at create and meter to it (DESIGN 19).
echo "LICENSING_URL=http://$licensing_listen" >>.local/dev.env
step "building dispatcher and processor into dist/ (the first build compiles every dependency: minutes)"
NOZIP=1 bash scripts/package.sh
step "building the local Functions host (bin/funchost) and the signing portal (bin/portal)"
go build -o bin/funchost ./devtools/funchost/cmd/funchost
step "building the dev OAuth token endpoint (bin/devoauth), the local licensing service (bin/devlicensing) and the connector's command line (bin/svcconnect)"
go build -o bin/devoauth ./devtools/cmd/devoauth
go build -o bin/devlicensing ./devtools/cmd/devlicensing
go build -o bin/devpki ./devtools/cmd/devpki
go build -o bin/svcconnect ./connector/cmd/svcconnect
go build -o bin/portal ./portal

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if port_open 10000 && port_open 10001 && port_open 10002; then
  step "Azurite already listens on 10000-10002; using it"
else
  step "starting Azurite on 127.0.0.1:10000-10002 (log: .local/azurite.log)"
  "$azurite" --location .local/azurite --blobHost 127.0.0.1 --queueHost 127.0.0.1 --tableHost 127.0.0.1 \
    --skipApiVersionCheck --disableTelemetry --silent >.local/azurite.log 2>&1 &
  pids+=($!)
  for _ in $(seq 1 150); do port_open 10000 && port_open 10001 && port_open 10002 && break; sleep 0.2; done
  port_open 10002 || { echo "Azurite did not start; see .local/azurite.log" >&2; exit 1; }
fi

set -a; . .local/dev.env; set +a
step "starting the dev OAuth token endpoint (client credentials, for svcconnect) on http://$oauth_listen"
bin/devoauth --dir .local --listen "$oauth_listen" &
pids+=($!)
step "starting the local licensing service on http://$licensing_listen (what it was sent: /_stub/received)"
bin/devlicensing --listen "$licensing_listen" --public-key "$LICENCE_PUBLIC_KEY" &
pids+=($!)
for _ in $(seq 1 100); do port_open "${licensing_listen##*:}" && break; sleep 0.1; done
step "starting the development PKI (TSA, OCSP, CRL: seals are B-LTA) on http://$pki_listen"
bin/devpki --dir .local --listen "$pki_listen" &
pids+=($!)
for _ in $(seq 1 100); do port_open "${pki_listen##*:}" && break; sleep 0.1; done
step "starting both apps under the local Functions host on http://$listen"
bin/funchost --app dist/dispatcher --app dist/processor --listen "$listen" --env-file .local/dev.env \
  --host-key "$HOST_KEY" --master-key "$MASTER_KEY" &
pids+=($!)
for _ in $(seq 1 300); do
  curl -fsS "http://$listen/api/health" >/dev/null 2>&1 && break
  kill -0 "${pids[-1]}" 2>/dev/null || { echo "the local Functions host exited" >&2; exit 1; }
  sleep 0.2
done
curl -fsS "http://$listen/api/health" >/dev/null 2>&1 || { echo "the service did not answer /api/health within a minute" >&2; exit 1; }
step "starting the signing portal on http://$portal"
bin/portal &
pids+=($!)
for _ in $(seq 1 100); do
  curl -fsS "http://$portal/healthz" >/dev/null 2>&1 && break
  kill -0 "${pids[-1]}" 2>/dev/null || { echo "the signing portal exited" >&2; exit 1; }
  sleep 0.1
done
step "up"
cat <<MSG

The service is running.
  Base URL:      http://$listen/api   (routes with authLevel function need ?code=\$HOST_KEY)
  Health:        curl http://$listen/api/health
  Portal:        http://$portal   (the links in the invitations: make outbox shows them)
  Dev PKI:       http://$pki_listen   (SEAL_TSA_URL=.../tsa, OCSP .../ocsp, CRL .../crl/root.crl; esign-verify --trust .local/keys/pki-root.pem)
  Licensing:     http://$licensing_listen   (LICENSING_URL; what the apps sent: curl http://$licensing_listen/_stub/received)
  Dev settings:  .local/dev.env   (BASE_URL, HOST_KEY, STORAGE_CONNECTION_STRING, PORTAL_CALLBACK_SECRETS, PORTAL_URL,
                 WEBHOOK_SECRETS: a workflow's callbackUrl may be http://127.0.0.1:<port>/..., README walk-through 6)
  A JWT:         make token TENANT=<tid> ROLES=Esign.Initiator,Service.Admin [SUB=alice]
  Connector:     SVCCONNECT_CONFIG=.local/dev.env bin/svcconnect help   (README "Command line (svcconnect)";
                 its SERVICE_* settings are in .local/dev.env, its tokens from http://$oauth_listen)
  Storage:       Azurite on 127.0.0.1:10000 (blob), 10001 (queue), 10002 (table); data in .local/azurite
Ctrl-C stops everything.
MSG
set +e
wait -n "${pids[@]}"
rc=$?
set -e
if [ "$rc" -eq 0 ]; then echo "the service stopped"; else echo "a process of the service exited (status $rc)" >&2; fi
exit "$rc"
