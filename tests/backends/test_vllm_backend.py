"""vllm: process management against a stand-in executable (TEST DOUBLE tests/helpers/fake_vllm_serve.py)
that parses the `vllm serve` command line and serves the OpenAI-compatible API on loopback; a real
vLLM run is marked gpu and skipped without one."""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path

import pytest

from socialbench.backends.base import BackendContext, ModelSpec, create_backend
from socialbench.backends.vllm_backend import ServerFailed
from socialbench.errors import MissingDependency
from tests.helpers.loopback import LoopbackServer
from tests.helpers.moca_requests import answer_schema, moca_request

STAND_IN = [sys.executable, str(Path(__file__).resolve().parents[1] / "helpers" / "fake_vllm_serve.py")]


def spec_for(tmp_path, **options):
    opts = {"executable": STAND_IN, "tensor_parallel_size": 2, "max_model_len": 8192,
            "log_path": str(tmp_path / "vllm.log"), "startup_timeout": 30, "retry_base_delay_s": 0.01, **options}  # fmt: skip
    return ModelSpec(name="qwen-test", backend="vllm", model_id="Qwen/Qwen3-VL-32B-Instruct", revision="abc123",
                     max_frames=6, concurrency=4, options=opts)  # fmt: skip


def logged_args(log_path: Path) -> dict:
    line = next(l for l in log_path.read_text().splitlines() if l.startswith("FAKE_VLLM_ARGS "))
    return json.loads(line.removeprefix("FAKE_VLLM_ARGS "))


def test_command_line_comes_from_params(tmp_path):
    backend = create_backend(spec_for(tmp_path, dtype="bfloat16", extra_args=["--enforce-eager"]), BackendContext(seed=7))
    cmd = backend.server_command(8123)
    assert cmd[: len(STAND_IN) + 2] == [*STAND_IN, "serve", "Qwen/Qwen3-VL-32B-Instruct"]
    flags = dict(zip(cmd[len(STAND_IN) + 2 :: 2], cmd[len(STAND_IN) + 3 :: 2]))
    assert flags["--tensor-parallel-size"] == "2" and flags["--max-model-len"] == "8192"
    assert json.loads(flags["--limit-mm-per-prompt"]) == {"image": 6}  # max_frames by default
    assert flags["--revision"] == "abc123" and flags["--port"] == "8123" and flags["--host"] == "127.0.0.1"
    assert flags["--dtype"] == "bfloat16" and flags["--seed"] == "7" and cmd[-1] == "--enforce-eager"


def test_requests_carry_max_completion_tokens_and_the_answer_schema(tmp_path):
    body = create_backend(spec_for(tmp_path))._prepare(moca_request(0))
    assert body["max_completion_tokens"] == moca_request(0).max_tokens and "max_tokens" not in body
    assert body["response_format"]["json_schema"]["schema"] == answer_schema()


def test_owned_server_starts_answers_with_guided_json_and_stops(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_STARTUP_S", "0.6")  # /health answers 503 until then
    backend = create_backend(spec_for(tmp_path))
    got = {}
    try:
        backend.complete_many([moca_request(i) for i in range(3)], lambda i, r: got.__setitem__(i, r))
        proc = backend.server.proc
        assert proc is not None and proc.poll() is None
        root = backend.server.root
    finally:
        backend.close()
    assert all(r.error is None and json.loads(r.text)["label"] == "mock" for r in got.values()) and len(got) == 3
    assert proc.poll() is not None  # the process is gone after close()
    with pytest.raises(OSError):
        urllib.request.urlopen(root + "/health", timeout=1)
    log = (tmp_path / "vllm.log").read_text()
    assert "Application startup complete" in log and "Shutting down" in log  # the log is kept
    assert logged_args(tmp_path / "vllm.log")["flags"]["--served-model-name"] == "qwen-test"


def test_no_server_is_started_when_everything_is_cached(tmp_path):
    backend = create_backend(spec_for(tmp_path))
    backend.complete_many([], lambda i, r: None)
    assert backend.server.proc is None and not (tmp_path / "vllm.log").exists()


def test_failed_start_reports_the_log_tail(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_EXIT_CODE", "3")
    backend = create_backend(spec_for(tmp_path))
    with pytest.raises(ServerFailed, match=r"(?s)code 3.*CUDA out of memory \(simulated\)"):
        backend.start()


def test_server_the_user_runs_is_used_as_is(tmp_path):
    with LoopbackServer("openai") as srv:
        backend = create_backend(spec_for(tmp_path, base_url=srv.url, served_model_name="qwen-served"))
        resp = backend.complete(moca_request(0))
        backend.close()
        body = srv.completions()[0].body
    assert backend.server is None and resp.error is None
    assert body["model"] == "qwen-served" and body["response_format"]["json_schema"]["schema"] == answer_schema()


def test_missing_vllm_executable_gives_an_install_hint(tmp_path):
    with pytest.raises(MissingDependency, match=r"socialbench\[vllm\]"):
        create_backend(spec_for(tmp_path, executable="vllm-not-installed-here"))


@pytest.mark.gpu
def test_real_vllm_serves_a_tiny_local_model(tmp_path):
    pytest.importorskip("vllm")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    from tests.helpers.tiny_vlm import build_tiny_vlm

    model_dir = build_tiny_vlm(tmp_path / "tiny", hidden=64)
    spec = ModelSpec(name="tiny", backend="vllm", model_id=str(model_dir), max_tokens=16,
                     options={"log_path": str(tmp_path / "vllm.log"), "max_model_len": 1024,
                              "gpu_memory_utilization": 0.3, "extra_args": ["--enforce-eager"]})  # fmt: skip
    backend = create_backend(spec)
    try:
        resp = backend.complete(moca_request(0, max_tokens=16))
    finally:
        backend.close()
    assert resp.error is None, (resp.error, (tmp_path / "vllm.log").read_text()[-2000:])
    assert os.path.exists(tmp_path / "vllm.log")
