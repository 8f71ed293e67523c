#!/usr/bin/env bash
# Regenerate requirements/constraints.txt from the current .venv (after changing dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
out=requirements/constraints.txt
# Written in place with `>`: a link there would be written through (to a file outside the repository).
[ ! -L "$out" ] || { echo "error: $out: is a symlink; $0 never writes through a link (nothing was written)" >&2; exit 2; }
{
  echo "# Pinned versions of every package the set-up installs (pip freeze of a working environment)."
  echo "# Regenerate with: scripts/lock.sh"
  .venv/bin/python -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^-e ' | sed 's/+cpu$//'
} > "$out"
