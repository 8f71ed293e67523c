#!/usr/bin/env bash
# The main job: set up, then run the whole pipeline on the embedded demo data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
snakemake --cores "${CORES:-all}" "$@"
echo
echo "Tables:  results/tables/moca/ (all.md has every scenario)"
echo "Runs:    mlflow ui --backend-store-uri sqlite:///mlflow.db   (after: source .venv/bin/activate)"
