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

from socialbench.core.backend import BackendContext, ModelSpec, create_backend
from socialbench.core.errors import MissingDependency
from tests.helpers.loopback import LoopbackServer
from tests.helpers.moca_requests import answer_schema, moca_request, write_clip, write_png, write_wav

STAND_IN = [sys.executable, str(Path(__file__).resolve().parents[1] / "helpers" / "fake_vllm_serve.py")]


def spec_for(tmp_path, modalities=None, **options):
    opts = {
        "executable": STAND_IN,
        "tensor_parallel_size": 2,
        "max_model_len": 8192,
        "log_path": str(tmp_path / "vllm.log"),
        "startup_timeout": 30,
        "retry_base_delay_s": 0.01,
        **options,
    }
    return ModelSpec(
        name="qwen-test",
        backend="vllm",
        model_id="Qwen/Qwen3-VL-32B-Instruct",
        revision="abc123",
        max_frames=6,
        concurrency=4,
        options=opts,
        modalities=modalities,
    )


def logged_args(log_path: Path) -> dict:
    line = next(line for line in log_path.read_text().splitlines() if line.startswith("FAKE_VLLM_ARGS "))
    return json.loads(line.removeprefix("FAKE_VLLM_ARGS "))


def test_command_line_comes_from_params(tmp_path):
    backend = create_backend(
        spec_for(tmp_path, dtype="bfloat16", extra_args=["--enforce-eager"]), BackendContext(seed=7)
    )
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
    # imported here, not at collection: it imports the openai SDK, which every xdist worker would load
    from socialbench.backends.vllm_backend import ServerFailed

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


def test_a_server_url_in_the_environment_that_is_no_url_is_named_before_any_key(tmp_path, monkeypatch):
    """Issue 38: not "$VLLM_API_KEY is not set" (a non-loopback URL needs a key), but the variable."""
    from socialbench.core.errors import ConfigError

    monkeypatch.setenv("SOCIALBENCH_SERVER_URL_QWEN_TEST", "not-a-url")
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"^\$SOCIALBENCH_SERVER_URL_QWEN_TEST: 'not-a-url' is not a server URL"):
        create_backend(spec_for(tmp_path))


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
    spec = ModelSpec(
        name="tiny",
        backend="vllm",
        model_id=str(model_dir),
        max_tokens=16,
        options={
            "log_path": str(tmp_path / "vllm.log"),
            "max_model_len": 1024,
            "gpu_memory_utilization": 0.3,
            "extra_args": ["--enforce-eager"],
        },
    )
    backend = create_backend(spec)
    try:
        resp = backend.complete(moca_request(0, max_tokens=16))
    finally:
        backend.close()
    assert resp.error is None, (resp.error, (tmp_path / "vllm.log").read_text()[-2000:])
    assert os.path.exists(tmp_path / "vllm.log")


# ---- parts, decoding and the pinned revision (Request v2) -----------------------------------------
def test_it_takes_images_native_video_and_audio():
    from socialbench.backends.vllm_backend import VllmBackend

    assert VllmBackend.accepts == frozenset({"image", "video", "audio"})


def test_a_clip_goes_as_a_video_url_data_url_and_audio_as_input_audio_to_a_model_declaring_audio(tmp_path):
    frames = [write_png(tmp_path / f"f{k}.png", timestamp=float(k)) for k in range(2)]
    clip = write_clip(tmp_path / "c.mp4", frames, view="Corner")  # file and frames: the file is sent
    audio = write_wav(tmp_path / "a.wav")
    with LoopbackServer("openai") as srv:
        omni = ["image", "frames", "video", "audio"]  # an audio-capable open-weight model declares audio
        backend = create_backend(spec_for(tmp_path, modalities=omni, base_url=srv.url))
        resp = backend.complete(moca_request(0, [clip, audio]))
        rec = srv.completions()[0]
    content = rec.body["messages"][1]["content"]
    assert [b["type"] for b in content] == ["text", "video_url", "input_audio", "text"] and content[0][
        "text"
    ] == "[Corner]"
    assert content[1]["video_url"]["url"].startswith("data:video/mp4;base64,")
    assert rec.video_sha256 == [clip.sha256] and rec.audio_sha256 == [audio.sha256] and rec.image_sha256 == []
    assert content[2]["input_audio"]["format"] == "wav" and resp.error is None and resp.finish_reason == "stop"


def test_an_audio_part_is_refused_for_a_vllm_model_that_declares_no_audio(tmp_path):
    from socialbench.core.errors import ConfigError

    backend = create_backend(spec_for(tmp_path))  # the vllm default: image, frames, video
    with pytest.raises(
        ConfigError, match=r"part 1, audio: audio input is not supported \(it takes: image, frames, video\)"
    ):
        backend.complete_many([moca_request(0, [write_wav(tmp_path / "a.wav")])], lambda i, r: None)
    assert backend.server.proc is None


def test_a_clip_goes_as_its_frames_to_a_vllm_model_that_declares_no_native_video(tmp_path):
    frames = [write_png(tmp_path / f"f{k}.png", timestamp=float(k)) for k in range(2)]
    clip = write_clip(tmp_path / "c.mp4", frames, view="Corner")
    body = create_backend(spec_for(tmp_path, modalities=["image", "frames"]))._prepare(moca_request(0, [clip]))
    assert [b["type"] for b in body["messages"][1]["content"]] == ["text", "image_url", "image_url", "text"]


def test_a_video_given_only_as_frames_goes_as_images(tmp_path):
    from socialbench.core.backend import VideoPart

    frames = tuple(write_png(tmp_path / f"f{k}.png", colour=(9 * k, 0, 0), timestamp=float(k)) for k in range(3))
    body = create_backend(spec_for(tmp_path))._prepare(moca_request(0, [VideoPart(frames=frames)]))
    assert [b["type"] for b in body["messages"][1]["content"]] == ["image_url"] * 3 + ["text"]


def test_decoding_fields_and_json_mode_on_the_wire(tmp_path):
    backend = create_backend(spec_for(tmp_path))
    body = backend._prepare(moca_request(0, temperature=0.3, top_p=0.8, stop=("###",), seed=5))
    assert (body["temperature"], body["top_p"], body["stop"], body["seed"]) == (0.3, 0.8, ["###"], 5)
    plain = backend._prepare(moca_request(0, json_schema=None, json_object=True))
    assert plain["response_format"] == {"type": "json_object"}


def test_a_refused_part_stops_the_batch_before_the_server_starts(tmp_path):
    from socialbench.core.backend import VideoPart
    from socialbench.core.errors import ConfigError

    backend = create_backend(spec_for(tmp_path))
    frames_only = VideoPart(frames=(write_png(tmp_path / "f.png"),))
    backend.accepts = frozenset({"video"})  # a model that takes only clips cannot take frames
    with pytest.raises(ConfigError, match="qwen-test.*part 1, video"):
        backend.complete_many([moca_request(0, [frames_only])], lambda i, r: None)
    assert backend.server.proc is None and not (tmp_path / "vllm.log").exists()


def fake_hub_cache(tmp_path, monkeypatch, repo_id, commit):
    """A local Hugging Face cache (made here) holding repo_id at commit (a config.json is enough)."""
    import huggingface_hub.constants

    repo = tmp_path / "hub" / ("models--" + repo_id.replace("/", "--"))
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "config.json").write_text('{"model_type": "llava"}')
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def unpinned(tmp_path, model_id, **options):
    spec = spec_for(tmp_path, **options)
    return ModelSpec(**{**spec.__dict__, "model_id": model_id, "revision": None})


def test_an_unpinned_hub_model_is_pinned_to_the_commit_its_cache_holds(tmp_path, monkeypatch):
    commit = "3" * 40
    fake_hub_cache(tmp_path, monkeypatch, "local-org/tiny-vlm", commit)
    backend = create_backend(unpinned(tmp_path, "local-org/tiny-vlm"))
    flags = dict(zip(backend.server.command[len(STAND_IN) + 2 :: 2], backend.server.command[len(STAND_IN) + 3 :: 2]))
    assert backend.identity()["revision"] == commit and flags["--revision"] == commit


def test_the_owned_server_is_started_with_the_pinned_commit(tmp_path, monkeypatch):
    commit = "4" * 40
    fake_hub_cache(tmp_path, monkeypatch, "local-org/tiny-vlm", commit)
    backend = create_backend(unpinned(tmp_path, "local-org/tiny-vlm"))
    try:
        backend.start()
    finally:
        backend.close()
    assert logged_args(tmp_path / "vllm.log")["flags"]["--revision"] == commit


def test_an_unpinned_local_folder_is_identified_by_its_files_and_gets_no_revision_flag(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llava"}')
    backend = create_backend(unpinned(tmp_path, str(folder)))
    before = backend.identity()["revision"]
    assert before.startswith("files:") and "--revision" not in backend.server.command
    (folder / "config.json").write_text('{"model_type": "llava", "changed": true}')
    assert create_backend(unpinned(tmp_path, str(folder))).identity()["revision"] != before


def test_a_pinned_revision_is_kept_and_an_unknown_model_is_unpinned(tmp_path, monkeypatch):
    fake_hub_cache(tmp_path, monkeypatch, "local-org/tiny-vlm", "5" * 40)
    assert create_backend(spec_for(tmp_path)).identity()["revision"] == "abc123"  # pinned in params
    backend = create_backend(unpinned(tmp_path, "nobody/not-cached"))
    assert backend.identity()["revision"] is None and "--revision" not in backend.server.command


def test_a_server_the_user_runs_is_not_pinned_from_the_local_cache(tmp_path, monkeypatch):
    fake_hub_cache(tmp_path, monkeypatch, "local-org/tiny-vlm", "6" * 40)
    backend = create_backend(unpinned(tmp_path, "local-org/tiny-vlm", base_url="http://127.0.0.1:9/v1"))
    assert backend.identity()["revision"] is None


def test_slurm_gpu_request_matches_the_servers_tensor_parallel_size(tmp_path):
    # profiles/slurm asks for the GPUs params' `resources` gives an infer job: as many as the shards
    # the owned `vllm serve` is started with, so the server fits its allocation exactly
    from socialbench.core.config import validate_params
    from socialbench.core.resources import job_resources

    spec = spec_for(tmp_path, tensor_parallel_size=4)
    cmd = create_backend(spec).server_command(8123)
    shards = int(cmd[cmd.index("--tensor-parallel-size") + 1])
    resources = validate_params({"models": {"m": {"backend": "random"}}})["resources"]
    entry = {"backend": "vllm", "options": spec.options}
    assert job_resources(resources, "infer", spec.name, entry)["gpu"] == shards == 4
