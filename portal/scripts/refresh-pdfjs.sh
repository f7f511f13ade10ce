#!/usr/bin/env bash
# Refreshes the two pdf.js files the portal embeds (server/static/vendor/) from the npm package
# pinned in portal/package.json + package-lock.json. The copies are committed, so a fresh clone
# builds the portal without npm; run this after changing the pinned version, then commit.
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --omit=optional --ignore-scripts --no-audit --no-fund
version=$(node -p 'require("./node_modules/pdfjs-dist/package.json").version')
for f in pdf.min.mjs pdf.worker.min.mjs; do
	cp "node_modules/pdfjs-dist/build/$f" "server/static/vendor/$f"
done
cp node_modules/pdfjs-dist/LICENSE server/static/vendor/LICENSE-pdfjs
echo "$version" > server/static/vendor/PDFJS_VERSION
echo "refresh-pdfjs: copied pdf.js $version into server/static/vendor/"
