#!/usr/bin/env bash
# Installs Debian's chromium, the headless browser the portal's browser tests (tests/browser)
# drive over the DevTools protocol. Idempotent: does nothing when chromium is on PATH; otherwise
# runs `apt-get update` and installs the package. Runs as root (no sudo).
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
	echo "install-chromium: chromium already installed"
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-chromium: apt-get not found; install the chromium package by hand" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium
command -v chromium >/dev/null 2>&1 || { echo "install-chromium: chromium still missing" >&2; exit 1; }
echo "install-chromium: installed chromium"
