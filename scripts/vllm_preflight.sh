#!/usr/bin/env bash
# The vLLM preflight, on any x86-64 Linux machine (no GPU needed): builds a separate virtual
# environment .venv-vllm with vLLM (which brings a CUDA build of PyTorch, several GB; the project's
# .venv keeps its CPU PyTorch), then runs tests/backends/test_vllm_preflight.py in it: the `vllm`
# backend's serve command line, engine config, request rendering and guided-JSON grammar, checked
# through vLLM's own code on a tiny random model built locally. See docs/backends.md.
#
#   bash scripts/vllm_preflight.sh [pytest args]        VLLM_SPEC=vllm==X.Y.Z to try another release
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv-vllm
VLLM_SPEC="${VLLM_SPEC:-vllm==0.33.0}"
PY="${PYTHON:-python3}"

export VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
want="${VLLM_SPEC#vllm==}"
have="$("$VENV/bin/python" -c 'import vllm, pytest; print(vllm.__version__)' 2>/dev/null || true)"
if [[ -z "$have" || ( "$want" != "$VLLM_SPEC" && "$have" != "$want" ) ]]; then
  echo "vllm_preflight: installing $VLLM_SPEC into $VENV (several GB, once)" >&2
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "$VLLM_SPEC" "pytest>=8"
fi

# socialbench from src/ (not installed: its pinned CPU PyTorch would fight vLLM's).
export PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec "$VENV/bin/python" -m pytest -p no:cacheprovider tests/backends/test_vllm_preflight.py "$@"
