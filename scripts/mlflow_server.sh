#!/usr/bin/env bash
# A shared MLflow tracking server on PostgreSQL with a shared artifact store (docs/scale-out.md).
#
#   MLFLOW_BACKEND_STORE_URI=postgresql://USER:PASSWORD@HOST:PORT/DB \
#       scripts/mlflow_server.sh ARTIFACTS_DIR [PORT] [HOST]
#
# Runs in the foreground (stop it with a signal). The store's URI is read from the environment only,
# never from an argument (arguments show in `ps` and shell history), and nothing here prints it.
# `postgresql://` URIs are given MLflow the psycopg (3) driver: `postgresql+psycopg://`.
# Clients then log with MLFLOW_TRACKING_URI=http://HOST:PORT; artifacts go through the server into
# ARTIFACTS_DIR (a folder every client can reach only through the server: no shared file system needed).
set -euo pipefail
dir=${1:?usage: MLFLOW_BACKEND_STORE_URI=postgresql://... $0 ARTIFACTS_DIR [PORT] [HOST]}
port=${2:-5000}
host=${3:-127.0.0.1}
: "${MLFLOW_BACKEND_STORE_URI:?set MLFLOW_BACKEND_STORE_URI (postgresql://USER:PASSWORD@HOST:PORT/DB)}"
case "$MLFLOW_BACKEND_STORE_URI" in
postgresql://* | postgres://*) MLFLOW_BACKEND_STORE_URI="postgresql+psycopg://${MLFLOW_BACKEND_STORE_URI#*://}" ;;
esac
export MLFLOW_BACKEND_STORE_URI MLFLOW_DISABLE_TELEMETRY=true DO_NOT_TRACK=true
mkdir -p "$dir"
exec mlflow server --artifacts-destination "$(cd "$dir" && pwd)" --host "$host" --port "$port" --workers "${MLFLOW_WORKERS:-2}"
