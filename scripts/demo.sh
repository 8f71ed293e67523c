#!/usr/bin/env bash
# The main job: set up, then run the whole pipeline on the embedded demo data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
snakemake --cores "${CORES:-all}" "$@"
echo
echo "Tables:  results/tables/moca/ (all.md has every scenario)"
echo "Runs:    source .venv/bin/activate && socialbench ui   (MLflow UI on mlflow.db)"
