# Sourced by the run scripts: the project's venv first on PATH, telemetry off.
export PATH="$PWD/.venv/bin:$PATH"
export MLFLOW_DISABLE_TELEMETRY=true
export DO_NOT_TRACK=true
export DVC_NO_ANALYTICS=1
export HF_HUB_OFFLINE=1
export HF_HUB_DISABLE_TELEMETRY=1
export TRANSFORMERS_OFFLINE=1
# Python caches the bytecode of what it imports (its default): where PYTHONDONTWRITEBYTECODE is set,
# every command would compile Snakemake, DVC, MLflow, pandas and torch from source again (about 3 s
# more for `import mlflow`; the test command took 1.6x as long). The bytecode goes into .venv and the
# repository's __pycache__ folders, which git and DVC ignore.
unset PYTHONDONTWRITEBYTECODE
