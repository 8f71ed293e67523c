#!/usr/bin/env bash
# The test command: set up, lint and format check (ruff, config in pyproject.toml), then run the
# test suite (extra arguments go to pytest) on pytest-xdist workers, one more than the cores (the Slurm
# test's worker mostly waits), at most four: a module's tests stay on one worker, slow groups handed out
# first, in collection order (tests/conftest.py; hence --no-loadscope-reorder); the demo run the
# end-to-end tests read is built once, by the first worker to need it (tests/helpers/pipeline.py).
# The Slurm test (tests/test_slurm.py: MoCA's inference and a demo meeting's clips on a one-node cluster,
# root and apt-get; about a minute here on a worker of its own) is in it. The full-size scale-out checks
# (marked scaleout: the DVC-remote round trips, push, clone, pull over SSH and to a local path, about
# 9 min, and the whole demo through Slurm, about 4 min) are left out by default:
# `bash scripts/test.sh -m scaleout` runs them (a later -m replaces the default one). So is the params
# drift check (marked drift: each declared params key edited, snakemake -n against dvc repro --dry, about
# 5 min): `bash scripts/test.sh -m drift`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
ruff check .
ruff format --check .
exec python -m pytest -n auto --maxprocesses 4 --dist loadgroup --no-loadscope-reorder -m "not scaleout and not drift" "$@"
