#!/usr/bin/env bash
# The test command: set up, lint and format check (ruff, config in pyproject.toml), then run the
# test suite (extra arguments go to pytest). As root, tests/test_slurm.py (marked slurm, about 7 min)
# also installs Slurm with apt-get and runs the demo pipeline on a one-node cluster: -m "not slurm" skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
ruff check .
ruff format --check .
exec python -m pytest "$@"
