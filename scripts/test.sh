#!/usr/bin/env bash
# The test command: set up, then run the test suite (extra arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
exec python -m pytest "$@"
