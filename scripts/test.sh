#!/usr/bin/env bash
# The test command: set up, lint and format check (ruff, config in pyproject.toml), then run the
# test suite (extra arguments go to pytest) on one pytest-xdist worker per core, at most four: a
# module's tests, and the tests of the session's demo run, stay on one worker, slow groups handed out
# first, in collection order (tests/conftest.py; hence --no-loadscope-reorder).
# The scale-out end-to-end runs (marked scaleout: the demo on a one-node Slurm cluster, about 10 min,
# and DVC remotes over SSH and a local path, about 13 min; root and apt-get) are left out by default:
# `bash scripts/test.sh -m scaleout` runs them (a later -m replaces the default one).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
ruff check .
ruff format --check .
exec python -m pytest -n auto --maxprocesses 4 --dist loadgroup --no-loadscope-reorder -m "not scaleout" "$@"
