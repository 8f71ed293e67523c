#!/usr/bin/env bash
# Regenerate requirements/constraints.txt from the current .venv (after changing dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
{
  echo "# Pinned versions of every package the set-up installs (pip freeze of a working environment)."
  echo "# Regenerate with: scripts/lock.sh"
  .venv/bin/python -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^-e ' | sed 's/+cpu$//'
} > requirements/constraints.txt
