"""The vLLM preflight through the installed vLLM's own parser, config, renderer and grammar (no engine,
so a CPU is enough), on a tiny random LLaVA model built here and the demo's requests. vLLM is not in
the test environment (it brings a CUDA build of PyTorch); `bash scripts/vllm_preflight.sh` runs these
tests in a separate virtual environment that has it. Without vLLM they skip."""

from __future__ import annotations

import dataclasses
import sys

import pytest

pytest.importorskip("vllm", reason="vLLM not installed here; `bash scripts/vllm_preflight.sh` runs these tests with it")

from socialbench.core.backend import ModelSpec, create_backend  # noqa: E402
from tests.helpers.demo_requests import (
    DIRECT_TEMPLATES,  # noqa: E402
    demo_requests,  # noqa: E402
)
from tests.helpers.tiny_vlm import build_tiny_vlm  # noqa: E402

MAX_FRAMES = 8
# The first 8 demo test instances: six image-text and two video-text (8 frames each).
N_INSTANCES = 8


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    work = tmp_path_factory.mktemp("preflight")
    instances, requests = demo_requests(work, N_INSTANCES, MAX_FRAMES)
    requests = [dataclasses.replace(r, decoding=dataclasses.replace(r.decoding, max_tokens=32)) for r in requests]
    corpus = DIRECT_TEMPLATES
    # hidden 128 with 2 heads: head size 64, which vLLM's attention kernels support.
    model_dir = build_tiny_vlm(
        work / "tiny-vlm", hidden=128, layers=2, vocab_size=2000, extra_corpus=corpus, max_positions=16384
    )
    return model_dir, instances, requests


def backend_for(model_dir, **options):
    opts = {
        "executable": [sys.executable, "-m", "vllm.entrypoints.cli.main"],
        "max_model_len": 16384,
        "dtype": "float32",
        "gpu_memory_utilization": 0.4,
        "extra_args": ["--enforce-eager"],
        **options,
    }
    spec = ModelSpec(
        name="tiny-vllm", backend="vllm", model_id=str(model_dir), max_frames=MAX_FRAMES, max_tokens=32, options=opts
    )
    return create_backend(spec)


def test_demo_requests_pass_every_check(demo):
    model_dir, instances, requests = demo
    report = backend_for(model_dir).preflight(requests, [i["id"] for i in instances])
    assert report.ok, report.problems
    assert report.model["architecture"] == "LlavaForConditionalGeneration" and report.model["image_limit"] == MAX_FRAMES
    videos = [row for row in report.requests if row["images"] > 1]
    assert videos and all(row["placeholders"] == MAX_FRAMES for row in videos)
    assert {row["structured_backend"] for row in report.requests} <= {"xgrammar", "guidance"}


def test_an_unknown_serve_flag_fails_the_argument_check(demo):
    model_dir, _, requests = demo
    report = backend_for(model_dir, extra_args=["--no-such-flag"]).preflight(requests[:1])
    assert report.checks["serve arguments parse"] is False and not report.ok


def test_more_frames_than_the_image_limit_names_the_request(demo):
    model_dir, instances, requests = demo
    report = backend_for(model_dir, limit_mm_per_prompt={"image": 2}).preflight(requests, [i["id"] for i in instances])
    video_id = next(i["id"] for i in instances if "frames" in i)
    assert not report.ok
    assert any(video_id in p for p in report.problems), report.problems


def test_a_prompt_longer_than_the_model_length_is_named(demo):
    model_dir, instances, requests = demo
    report = backend_for(model_dir, max_model_len=512).preflight(requests[:1], [instances[0]["id"]])
    assert not report.ok
    assert any(instances[0]["id"] in p for p in report.problems), report.problems


def test_a_request_without_the_answer_schema_fails_the_guided_json_check(demo):
    model_dir, _, requests = demo
    backend = backend_for(model_dir, json_mode="json_object")
    report = backend.preflight(requests[:1])
    assert report.checks["guided JSON schema"] is False


def test_the_tensor_parallel_command_the_shared_server_starts_with_parses(demo):
    # The command the node's registry starts (backends.vllm_servers) is the backend's own: with the
    # tensor-parallel size that the Slurm job's GPU request follows (core.resources).
    model_dir, _, requests = demo
    backend = backend_for(model_dir, tensor_parallel_size=2)
    assert "--tensor-parallel-size" in backend.server.command
    report = backend.preflight(requests[:1])
    assert report.checks["serve arguments parse"] is True, report.problems
