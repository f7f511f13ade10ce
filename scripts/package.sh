#!/usr/bin/env bash
# Builds the deployable folders dist/<app>/ (host.json rendered from host.json.tmpl, the static
# linux/amd64 `handler`, one folder with function.json per function) and dist/<app>.zip.
# Usage: scripts/package.sh [dispatcher] [processor]   (both when none is named)
# STRIP="" keeps the symbols in the handlers (profiling with perf); default -s -w.
# DIST=<absolute folder> writes there instead of dist/ (test packages that run at the same time
# each package into a folder of their own).
# NOZIP=1 skips the zips (make run needs only the folders). The handler is rebuilt in place, so an
# unchanged handler is not linked again (go build keeps an up-to-date output).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dist=${DIST:-$root/dist}
apps=("$@")
[ ${#apps[@]} -gt 0 ] || apps=(dispatcher processor)
version="$(cat VERSION)"
if sha=$(git rev-parse --short HEAD 2>/dev/null); then
  version="$version+$sha"
  [ -z "$(git status --porcelain 2>/dev/null)" ] || version="$version.dirty"
fi
for app in "${apps[@]}"; do
  conf="scripts/apps/$app.conf"
  [ -f "$conf" ] || { echo "package: unknown app $app (no $conf)" >&2; exit 2; }
  out="$dist/$app"
  rm -f "$dist/$app.zip"
  mkdir -p "$out"
  # Everything but the handler goes; function folders are copied afresh below.
  find "$out" -mindepth 1 -maxdepth 1 ! -name handler -exec rm -rf {} +
  # host.json: replace every {{NAME}} with the value from the app's conf; refuse leftovers.
  hostjson=$(cat host.json.tmpl)
  while IFS='=' read -r key value; do
    case "$key" in ''|'#'*) continue ;; esac
    hostjson=${hostjson//"{{$key}}"/$value}
  done < "$conf"
  if grep -q '{{' <<<"$hostjson"; then
    echo "package: host.json for $app has unrendered placeholders:" >&2
    grep -o '{{[A-Z_]*}}' <<<"$hostjson" >&2
    exit 1
  fi
  printf '%s\n' "$hostjson" > "$out/host.json"
  CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath \
    -ldflags "${STRIP--s -w} -X github.com/esign-svc/esign/shared/version.Engine=$version" \
    -o "$out/handler" "./$app"
  n=0
  for fj in "$app"/functions/*/function.json; do
    [ -e "$fj" ] || continue
    name=$(basename "$(dirname "$fj")")
    mkdir -p "$out/$name"
    cp "$fj" "$out/$name/function.json"
    n=$((n + 1))
  done
  if [ -n "${NOZIP:-}" ]; then
    echo "packaged $app $version: $n functions -> $out"
    continue
  fi
  (cd "$out" && python3 - "$dist/$app.zip" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for base, _, files in os.walk("."):
        for f in sorted(files):
            p = os.path.join(base, f)
            info = zipfile.ZipInfo.from_file(p, os.path.relpath(p, "."))
            with open(p, "rb") as fh:
                z.writestr(info, fh.read(), zipfile.ZIP_DEFLATED)
PY
  )
  echo "packaged $app $version: $n functions -> $out, $dist/$app.zip"
done
