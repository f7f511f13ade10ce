#!/usr/bin/env bash
# Installs the tools the tests use as independent checks: poppler's pdfsig and pdftotext
# (package poppler-utils) and qpdf for the PDF tests, openssl to write the PKCS#12 file the seal
# key test loads. Idempotent: does nothing when all four are on PATH; otherwise runs
# `apt-get update` once and installs the packages. Runs as root (no sudo).
set -euo pipefail

missing=0
for tool in pdfsig pdftotext qpdf openssl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		missing=1
	fi
done
if [ "$missing" -eq 0 ]; then
	echo "install-pdf-tools: pdfsig, pdftotext, qpdf and openssl already installed"
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-pdf-tools: apt-get not found; install poppler-utils, qpdf and openssl by hand" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends poppler-utils qpdf openssl
for tool in pdfsig pdftotext qpdf openssl; do
	command -v "$tool" >/dev/null 2>&1 || { echo "install-pdf-tools: $tool still missing" >&2; exit 1; }
done
echo "install-pdf-tools: installed poppler-utils, qpdf and openssl"
