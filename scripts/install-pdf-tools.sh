#!/usr/bin/env bash
# Installs the PDF tools the PDF tests use as independent checks: poppler's pdfsig and
# pdftotext (package poppler-utils) and qpdf. Idempotent: does nothing when all three are on
# PATH; otherwise runs `apt-get update` once and installs both packages. Runs as root (no sudo).
set -euo pipefail

missing=0
for tool in pdfsig pdftotext qpdf; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		missing=1
	fi
done
if [ "$missing" -eq 0 ]; then
	echo "install-pdf-tools: pdfsig, pdftotext and qpdf already installed"
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-pdf-tools: apt-get not found; install poppler-utils and qpdf by hand" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends poppler-utils qpdf
for tool in pdfsig pdftotext qpdf; do
	command -v "$tool" >/dev/null 2>&1 || { echo "install-pdf-tools: $tool still missing" >&2; exit 1; }
done
echo "install-pdf-tools: installed poppler-utils and qpdf"
