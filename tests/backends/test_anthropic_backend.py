"""anthropic against a loopback server speaking the Messages API wire format (test double), with the
official Anthropic SDK client pointed at it."""

from __future__ import annotations

import json

import pytest

from socialbench.backends.base import ModelSpec, create_backend
from socialbench.errors import ConfigError
from tests.helpers.loopback import Fault, LoopbackServer
from tests.helpers.moca_requests import answer_schema, moca_request, write_png

KEY = "sk-ant-loopback-test-0002"


@pytest.fixture
def server():
    with LoopbackServer("anthropic", api_key=KEY) as srv:
        yield srv


def backend_for(server, monkeypatch, **options):
    monkeypatch.setenv("LOOPBACK_ANTHROPIC_KEY", KEY)
    opts = {"base_url": server.url, "api_key_env": "LOOPBACK_ANTHROPIC_KEY", "timeout": 5,
            "retry_base_delay_s": 0.01, "max_retries": 3, **options}  # fmt: skip
    spec = ModelSpec(name="claude", backend="anthropic", model_id="claude-test-1", image_size=64, concurrency=4,
                     options=opts)  # fmt: skip
    return create_backend(spec)


def test_structured_output_request_and_answer(server, monkeypatch):
    resp = backend_for(server, monkeypatch).complete(moca_request(0, max_tokens=55))
    body = server.completions()[0].body
    assert body["model"] == "claude-test-1" and body["max_tokens"] == 55
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": answer_schema()}}
    assert body["system"].startswith("Classify") and [m["role"] for m in body["messages"]] == ["user"]
    assert "temperature" not in body  # API 2026-10-21 has no sampling parameters
    assert json.loads(resp.text)["mechanism"] == "expressive aggression" and resp.input_tokens > 0


def test_tool_mode_returns_the_tool_input_as_json(server, monkeypatch):
    resp = backend_for(server, monkeypatch, json_mode="tool").complete(moca_request(0))
    body = server.completions()[0].body
    assert body["tool_choice"] == {"type": "tool", "name": body["tools"][0]["name"]}
    assert body["tools"][0]["input_schema"] == answer_schema()
    assert set(json.loads(resp.text)) == {"mechanism", "label", "subject", "target"}


def test_images_are_base64_blocks_with_their_bytes(server, monkeypatch, tmp_path):
    frames = [write_png(tmp_path / f"f{k}.png", colour=(0, k * 50, 0), timestamp=float(k)) for k in range(2)]
    backend_for(server, monkeypatch).complete(moca_request(0, frames))
    rec = server.completions()[0]
    blocks = rec.body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["image", "image", "text"]
    assert blocks[0]["source"]["media_type"] == "image/png"
    assert rec.image_sha256 == [f.sha256 for f in frames]


def test_the_key_comes_from_the_environment(server, monkeypatch):
    backend_for(server, monkeypatch).complete(moca_request(0))
    headers = server.completions()[0].headers
    assert KEY in (headers.get("x-api-key", ""), headers.get("authorization", "").removeprefix("Bearer "))


def test_model_id_is_required(monkeypatch):
    with pytest.raises(ConfigError, match="model_id"):
        create_backend(ModelSpec(name="c", backend="anthropic", options={"base_url": "http://127.0.0.1:9"}))


@pytest.mark.parametrize(
    "fault",
    [
        Fault(status=529),
        Fault(status=429, headers={"retry-after": "0.05"}),
        Fault(status=500),
        Fault(malformed=True),
        Fault(wrong_shape=True),
        Fault(delay_s=1.5),
    ],
    ids=["529-overloaded", "429", "500", "malformed", "wrong-shape", "timeout"],
)
def test_transient_failure_is_retried_then_succeeds(server, monkeypatch, fault):
    server.scripted.append(fault)
    backend = backend_for(server, monkeypatch, timeout=0.5)
    resp = backend.complete(moca_request(0))
    assert resp.error is None and resp.text and len(server.completions()) == 2 and backend.retries == 1


def test_overloaded_until_the_retries_are_spent_is_an_error(server, monkeypatch):
    server.scripted.extend(Fault(status=529) for _ in range(3))
    resp = backend_for(server, monkeypatch, max_retries=2).complete(moca_request(0))
    assert resp.text is None and "HTTP 529 overloaded" in resp.error and len(server.completions()) == 3


def test_authentication_error_is_not_retried(monkeypatch):
    with LoopbackServer("anthropic", api_key="another-key") as srv:
        resp = backend_for(srv, monkeypatch).complete(moca_request(0))
        assert "HTTP 401" in resp.error and len(srv.completions()) == 1
