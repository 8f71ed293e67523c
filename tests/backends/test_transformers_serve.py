"""transformers_serve: the command line from params and the refusals (fast), and a real ``transformers
serve`` on loopback serving a tiny random Llama folder (tests/helpers/tiny_vlm.py), started, shared,
answering through openai_compat and stopped through the node's server registry (slow: the server
imports torch and FastAPI, about 15-40 s; it is started once for the module)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from socialbench.backends.vllm_servers import SharedServers, healthy
from socialbench.core.backend import BackendContext, ModelSpec, create_backend
from socialbench.core.errors import ConfigError, MissingDependency
from socialbench.core.runner import json_form
from tests.helpers.loopback import LoopbackServer
from tests.helpers.moca_requests import moca_request


def spec_for(tmp_path: Path, model_id: str | None = None, **options) -> ModelSpec:
    return ModelSpec(
        name="tiny-server",
        backend="transformers_serve",
        model_id=model_id or str(tmp_path / "model"),
        max_tokens=8,
        concurrency=2,
        modalities=(),
        options={"log_path": str(tmp_path / "serve.log"), "device": "cpu", "retry_base_delay_s": 0.01, **options},
    )


def test_command_line_comes_from_params(tmp_path):
    (tmp_path / "model").mkdir()
    backend = create_backend(
        spec_for(tmp_path, dtype="float32", extra_args=["--log-level", "info"]), BackendContext(seed=7)
    )
    cmd = backend.server_command(8123)
    assert cmd[:2] == [sys.executable, "-m"] and cmd[3:5] == ["serve", str((tmp_path / "model").resolve())]
    flags = dict(zip(cmd[5::2], cmd[6::2]))
    assert flags["--host"] == "127.0.0.1" and flags["--port"] == "8123" and flags["--device"] == "cpu"
    assert flags["--dtype"] == "float32" and flags["--default-seed"] == "7" and cmd[-2:] == ["--log-level", "info"]


def test_a_relative_folder_is_served_by_its_absolute_path(tmp_path, monkeypatch):
    (tmp_path / "models" / "m").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    backend = create_backend(spec_for(tmp_path, model_id="models/m"))
    assert backend.served_model == str(tmp_path / "models" / "m") == backend.server.command[4]
    assert backend.identity()["model_id"] == "models/m"  # the cache key keeps the name params give


def test_the_identity_holds_the_folders_fingerprint_and_the_server(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    ident = create_backend(spec_for(tmp_path)).identity()
    assert ident["revision"].startswith("files:") and ident["server"] == "transformers serve"


def test_a_gguf_file_is_refused_with_what_to_do(tmp_path):
    with pytest.raises(ConfigError, match=r"cannot serve a GGUF file.*socialbench weights convert"):
        create_backend(spec_for(tmp_path, model_id=str(tmp_path / "SmolLM2.Q4_1.gguf")))


def test_a_folder_without_config_stops_before_any_server_starts(tmp_path):
    (tmp_path / "model").mkdir()
    backend = create_backend(spec_for(tmp_path))
    with pytest.raises(ConfigError, match=r"is no model folder \(no config.json"):
        backend.complete(moca_request(0))
    assert backend.server.proc is None and not (tmp_path / "serve.log").exists()


def test_a_config_without_architectures_stops_before_any_server_starts(tmp_path):
    """A folder whose config names no model class: transformers serve fails on it (config.architectures
    is None), so the backend names the file and the fix first."""
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text('{"model_type": "llama"}')
    backend = create_backend(spec_for(tmp_path))
    with pytest.raises(ConfigError, match=r"config.json names no architectures.*LlamaForCausalLM"):
        backend.complete(moca_request(0))
    assert backend.server.proc is None


def test_missing_executable_gives_an_install_hint(tmp_path):
    (tmp_path / "model").mkdir()
    with pytest.raises(MissingDependency, match=r"socialbench\[serve\]"):
        create_backend(spec_for(tmp_path, executable="transformers-not-installed-here"))


def test_without_the_serve_extra_the_default_command_gives_an_install_hint(tmp_path, monkeypatch):
    import importlib.util

    from socialbench.backends import transformers_serve

    (tmp_path / "model").mkdir()
    real = importlib.util.find_spec
    monkeypatch.setattr(transformers_serve.importlib.util, "find_spec", lambda m: None if m == "fastapi" else real(m))
    with pytest.raises(MissingDependency, match=r"needs fastapi .*socialbench\[serve\]"):
        create_backend(spec_for(tmp_path))


def test_a_server_the_user_runs_is_used_as_is(tmp_path):
    with LoopbackServer("openai") as srv:
        backend = create_backend(spec_for(tmp_path, base_url=srv.url, served_model_name="served"))
        resp = backend.complete(moca_request(0))
        backend.close()
        body = srv.completions()[0].body
    assert backend.server is None and resp.error is None and body["model"] == "served"


def test_the_backend_declares_json_mode_not_enforced():
    from socialbench.backends.transformers_serve import TransformersServeBackend
    from socialbench.core.modalities import backend_declaration

    assert TransformersServeBackend.json_enforced is False
    assert backend_declaration("transformers_serve").json_why == "transformers serve ignores response_format"


# ---- a real transformers serve ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One lifecycle of a real server, recorded: two backends of one model (the second attaches to the
    first's server), JSON-mode requests through both, then both closed."""
    from tests.helpers.tiny_vlm import build_tiny_llm

    tmp = tmp_path_factory.mktemp("serve")
    build_tiny_llm(tmp / "model")
    registry = tmp / "servers"
    seen: dict = {}
    mp = pytest.MonkeyPatch()
    mp.setenv("SOCIALBENCH_SERVER_DIR", str(registry))
    mp.delenv("SOCIALBENCH_KEEP_SERVERS", raising=False)
    try:
        spec = spec_for(tmp, startup_timeout=300, threads=1)
        first, second = create_backend(spec, BackendContext(seed=3)), create_backend(spec, BackendContext(seed=3))
        try:
            got: dict = {}
            first.complete_many([moca_request(i) for i in range(2)], got.__setitem__)
            seen["server_environ"] = Path(f"/proc/{first.server.proc.pid}/environ").read_bytes().split(b"\0")
            seen["first"] = [got[0], got[1]]
            seen["object_mode"] = first.complete(moca_request(5, json_schema=None, json_object=True))
            seen["second"] = second.complete(moca_request(0))
            seen["records_running"] = SharedServers(registry).records()
            seen["ports"] = (first.lease.port, second.lease.port, first.lease.owner, second.lease.owner)
            second.close()
            seen["healthy_after_second_closed"] = healthy(first.lease.port)
        finally:
            second.close()
            first.close()
        seen["healthy_after_all_closed"] = healthy(seen["ports"][0])
        seen["records_after"] = SharedServers(registry).records()
        seen["log"] = (tmp / "serve.log").read_text("utf-8", errors="replace")
    finally:
        mp.undo()
    return seen


def test_threads_set_the_server_process_s_torch_threads_and_nothing_else(tmp_path):
    (tmp_path / "model").mkdir()
    assert create_backend(spec_for(tmp_path)).server.env is None  # the job's own environment
    env = create_backend(spec_for(tmp_path, threads=1)).server.env
    assert env["OMP_NUM_THREADS"] == "1" and env["PATH"] == os.environ["PATH"]


@pytest.mark.slow
def test_the_server_runs_with_the_threads_its_entry_gives(served):
    assert b"OMP_NUM_THREADS=1" in served["server_environ"]


@pytest.mark.slow
def test_a_real_server_answers_through_openai_compat(served):
    for resp in [*served["first"], served["second"]]:
        assert resp.error is None and isinstance(resp.text, str)
        assert resp.finish_reason in ("stop", "length") and resp.input_tokens > 0 and 0 < resp.output_tokens <= 64


@pytest.mark.slow
def test_greedy_answers_are_the_same_on_the_shared_server(served):
    assert served["second"].text == served["first"][0].text  # the same request, greedy, from the other job


@pytest.mark.slow
def test_one_server_per_model_the_second_job_attaches(served):
    (record,) = served["records_running"]
    first_port, second_port, first_owns, second_owns = served["ports"]
    assert first_port == second_port and first_owns and not second_owns
    assert record["running"] and len(record["users"]) == 2 and record["command"][3] == "serve"


@pytest.mark.slow
def test_the_server_stops_with_its_last_job_and_the_registry_is_clean(served):
    assert served["healthy_after_second_closed"] and not served["healthy_after_all_closed"]
    assert served["records_after"] == []


@pytest.mark.slow
def test_the_server_ignores_json_mode(served):
    """Measured: response_format reaches the server, which says it ignores it; with a constraint enforced,
    even a random model's answer would be a lone JSON object."""
    assert "Ignoring unsupported fields in the request: {'response_format'}" in served["log"]
    answers = [*served["first"], served["object_mode"]]
    assert all(json_form(r.text) != "lone_object" for r in answers)
