#!/usr/bin/env bash
# The test command: set up, then run the test suite (extra arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/install_tex.sh  # TeX for the results book test (tests/test_book.py); the demo needs none
source scripts/env.sh
exec python -m pytest "$@"
