#!/usr/bin/env bash
# Installs the pinned Azurite (package.json + package-lock.json) when it is missing or not the
# pinned version. Idempotent: a second run does nothing. Prints the path of the azurite binary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
want=$(node -p 'require("./package.json").dependencies.azurite')
have=""
if [ -f node_modules/azurite/package.json ]; then
  have=$(node -p 'require("./node_modules/azurite/package.json").version')
fi
if [ "$have" != "$want" ]; then
  echo "installing azurite $want with npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
echo "$root/node_modules/.bin/azurite"
