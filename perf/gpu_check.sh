#!/usr/bin/env bash
# GPU check of the local backends, as one command on a machine with an NVIDIA GPU, PyTorch,
# transformers, Pillow and PyYAML, and no network (nothing is downloaded; socialbench need not be
# installed: src/ goes on PYTHONPATH). Builds a tiny random vision-language model locally, runs the
# `hf` backend over the demo instances unbatched and batched, checks the records, prints throughput;
# vLLM preflight and the `vllm` backend (guided JSON) too when vLLM is importable. See
# perf/gpu_check.py.
#
#   perf/gpu_check.sh [--batch-size 16] [--max-tokens 32] [--dtype bfloat16] [--skip-vllm]
#                           [--vllm-preflight-only] [--json out.json]
#
# Python: $PYTHON, else .venv/bin/python, else python3. Exit status 0 when every check passes.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-}"
if [[ -z "$PY" ]]; then
  if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=python3; fi
fi

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 MLFLOW_DISABLE_TELEMETRY=true
export PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}"

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
else
  echo "gpu_check: nvidia-smi not found" >&2
fi
"$PY" -c "import torch, transformers, PIL, yaml" 2>/dev/null || {
  echo "gpu_check: $PY lacks one of torch, transformers, Pillow, PyYAML" >&2; exit 2; }

exec "$PY" perf/gpu_check.py "$@"
