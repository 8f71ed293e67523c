# Sourced by the run scripts: the project's venv first on PATH, telemetry off.
export PATH="$PWD/.venv/bin:$PATH"
export MLFLOW_DISABLE_TELEMETRY=true
export DO_NOT_TRACK=true
export DVC_NO_ANALYTICS=1
export HF_HUB_OFFLINE=1
export HF_HUB_DISABLE_TELEMETRY=1
export TRANSFORMERS_OFFLINE=1
