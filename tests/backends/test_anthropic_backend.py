"""anthropic against a loopback server speaking the Messages API wire format (test double), with the
official Anthropic SDK client pointed at it."""

from __future__ import annotations

import base64
import dataclasses
import io
import json

import pytest

from socialbench.core.backend import ModelSpec, create_backend
from socialbench.core.errors import ConfigError
from tests.helpers.loopback import Fault, LoopbackServer
from tests.helpers.moca_requests import answer_schema, moca_request, write_clip, write_png, write_wav

KEY = "sk-ant-loopback-test-0002"


@pytest.fixture
def server():
    with LoopbackServer("anthropic", api_key=KEY) as srv:
        yield srv


def backend_for(server, monkeypatch, **options):
    monkeypatch.setenv("LOOPBACK_ANTHROPIC_KEY", KEY)
    opts = {
        "base_url": server.url,
        "api_key_env": "LOOPBACK_ANTHROPIC_KEY",
        "timeout": 5,
        "retry_base_delay_s": 0.01,
        "max_retries": 3,
        **options,
    }
    spec = ModelSpec(
        name="claude", backend="anthropic", model_id="claude-test-1", image_size=64, concurrency=4, options=opts
    )
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


# ---- parts, decoding and finish reasons (Request v2) ---------------------------------------------
def test_it_takes_images_only():
    from socialbench.backends.anthropic_backend import AnthropicBackend

    assert AnthropicBackend.accepts == frozenset({"image"})


def test_an_audio_part_is_refused_before_any_call_naming_model_request_and_part(server, monkeypatch, tmp_path):
    image = write_png(tmp_path / "a.png")
    audio = write_wav(tmp_path / "a.wav")
    got = []
    with pytest.raises(ConfigError) as exc:
        backend_for(server, monkeypatch).complete_many(
            [moca_request(0, [image]), moca_request(1, [image, audio])], lambda i, r: got.append(r)
        )
    assert str(exc.value) == (
        "models.claude (backend anthropic): request inst-0001/direct/answer: part 2, audio: audio input is not"
        " supported (it takes: image, frames); nothing was called"
    )
    assert server.completions() == [] and got == []


def test_a_native_video_clip_is_refused_but_its_frames_are_sent(server, monkeypatch, tmp_path):
    frames = [write_png(tmp_path / f"f{k}.png", colour=(0, 40 * k, 0), timestamp=float(k)) for k in range(2)]
    with pytest.raises(ConfigError, match=r"part 1, video \(Corner\): video as a file"):
        backend_for(server, monkeypatch).complete(moca_request(0, [write_clip(tmp_path / "c.mp4", view="Corner")]))
    assert server.completions() == []
    resp = backend_for(server, monkeypatch).complete(
        moca_request(0, [write_clip(tmp_path / "c.mp4", frames, "Corner")])
    )
    rec = server.completions()[0]
    assert resp.error is None and rec.image_sha256 == [f.sha256 for f in frames]
    assert rec.body["messages"][0]["content"][0] == {"type": "text", "text": "[Corner]"}


def test_view_labels_come_before_their_images(server, monkeypatch, tmp_path):
    a = write_png(tmp_path / "a.png", view="Closeup A")
    b = write_png(tmp_path / "b.png", colour=(0, 0, 9))
    backend_for(server, monkeypatch).complete(moca_request(0, [a, b]))
    blocks = server.completions()[0].body["messages"][0]["content"]
    assert [b.get("text", b["type"])[:11] for b in blocks] == ["[Closeup A]", "image", "image", "Text: Insta"]


def test_stop_strings_go_as_stop_sequences_and_no_sampling_field_is_sent(server, monkeypatch):
    backend_for(server, monkeypatch).complete(moca_request(0, temperature=0.5, top_p=0.9, seed=4, stop=("END",)))
    body = server.completions()[0].body
    assert body["stop_sequences"] == ["END"]
    assert not {"temperature", "top_p", "top_k", "seed"} & set(body)  # API 2026-10-21 has no sampling parameters


def test_send_temperature_sends_temperature_and_top_p(server, monkeypatch):
    backend_for(server, monkeypatch, send_temperature=True).complete(moca_request(0, temperature=0.5, top_p=0.9))
    backend_for(server, monkeypatch, send_temperature=True).complete(moca_request(1))
    first, second = (r.body for r in server.completions())
    assert (first["temperature"], first["top_p"]) == (0.5, 0.9)
    assert second["temperature"] == 0.0 and "top_p" not in second and "stop_sequences" not in second


KEY_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["mechanism", "label", "subject", "target"],
    "properties": {k: {"type": "string"} for k in ("mechanism", "label", "subject", "target")},
}


def test_json_mode_sends_the_answers_key_schema_as_structured_output(server, monkeypatch):
    req = moca_request(0, json_schema=None, json_object=True)
    backend = backend_for(server, monkeypatch)
    backend.complete(req)
    body = server.completions()[0].body
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": KEY_SCHEMA}}
    assert body["system"] == req.messages[0].text()  # no JSON instruction added
    assert backend.constraint(req) == "key_schema"


def test_json_mode_in_tool_mode_forces_the_one_tool_with_the_key_schema(server, monkeypatch):
    req = moca_request(0, json_schema=None, json_object=True)
    resp = backend_for(server, monkeypatch, json_mode="tool").complete(req)
    body = server.completions()[0].body
    assert body["tools"][0]["input_schema"] == KEY_SCHEMA and "output_config" not in body
    assert body["tool_choice"] == {"type": "tool", "name": body["tools"][0]["name"]}
    assert set(json.loads(resp.text)) == {"mechanism", "label", "subject", "target"}


def test_the_methods_json_keys_with_their_value_types_make_the_key_schema_without_enums(server, monkeypatch):
    keys = {"reasoning": {"type": "string"}, "answer": {"type": "array", "items": {"type": "string", "enum": ["1"]}}}
    backend_for(server, monkeypatch).complete(moca_request(0, json_schema=None, json_object=True, json_keys=keys))
    schema = server.completions()[0].body["output_config"]["format"]["schema"]
    assert schema["required"] == ["reasoning", "answer"] and schema["additionalProperties"] is False
    assert schema["properties"]["answer"] == {"type": "array", "items": {"type": "string"}}  # values free


def test_json_mode_for_a_request_naming_no_keys_sends_nothing_and_records_none(server, monkeypatch):
    req = moca_request(0, json_schema=None, json_object=True)
    req = dataclasses.replace(req, task={"benchmark": "x", "stage": "answer"})
    backend = backend_for(server, monkeypatch)
    backend.complete(req)
    assert "output_config" not in server.completions()[0].body and backend.constraint(req) == "none"


def test_json_mode_none_sends_no_constraint_for_either_kind(server, monkeypatch):
    backend = backend_for(server, monkeypatch, json_mode="none")
    for req in (moca_request(0), moca_request(1, json_schema=None, json_object=True)):
        backend.complete(req)
        assert backend.constraint(req) == "none"
    assert not any({"output_config", "tools"} & set(r.body) for r in server.completions())


def test_the_constraint_sent_is_named_per_request_kind(server, monkeypatch):
    backend = backend_for(server, monkeypatch)
    assert backend.constraint(moca_request(0)) == "json_schema"
    assert backend.constraint(moca_request(0, json_schema=None)) == "none"
    assert backend.temperature_sent() is False  # the pinned API version takes no temperature
    assert backend_for(server, monkeypatch, send_temperature=True).temperature_sent() is True


def test_the_identity_says_json_mode_is_sent_as_the_key_schema(server, monkeypatch):
    assert backend_for(server, monkeypatch).identity()["json_object"] == "key_schema"
    assert "json_object" not in backend_for(server, monkeypatch, json_mode="none").identity()


def test_thinking_blocks_go_before_the_answer_in_think_tags(server, monkeypatch):
    server.scripted.append(Fault(reasoning='maybe {"subject": "subject1"}', text='{"subject": "subject0"}'))
    resp = backend_for(server, monkeypatch).complete(moca_request(0))
    assert resp.text == '<think>maybe {"subject": "subject1"}</think>{"subject": "subject0"}'
    assert resp.finish_reason == "stop"


def test_a_message_of_thinking_only_is_an_answer_with_no_text_not_a_fault(server, monkeypatch):
    server.scripted.append(Fault(reasoning="still thinking", no_content=True, finish_reason="max_tokens"))
    resp = backend_for(server, monkeypatch, max_retries=0).complete(moca_request(0))
    assert resp.error is None and resp.text == "<think>still thinking</think>" and resp.truncated
    assert len(server.completions()) == 1  # not retried as a malformed message


@pytest.mark.parametrize(
    "stop_reason,expected",
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "refusal"),
        ("pause_turn", None),
    ],
)
def test_stop_reason_maps_to_the_finish_reason(server, monkeypatch, stop_reason, expected):
    server.scripted.append(Fault(finish_reason=stop_reason))
    resp = backend_for(server, monkeypatch).complete(moca_request(0))
    assert resp.error is None and resp.finish_reason == expected and resp.truncated == (expected == "length")


def test_tool_mode_answer_finishes_with_stop_and_a_failure_with_error(server, monkeypatch):
    assert backend_for(server, monkeypatch, json_mode="tool").complete(moca_request(0)).finish_reason == "stop"
    server.scripted.append(Fault(status=400))
    assert backend_for(server, monkeypatch).complete(moca_request(1)).finish_reason == "error"


# ---- images as the source has them, within the API's documented limits (issue 40, point 1) ---------
def source_size_backend(server, monkeypatch):
    monkeypatch.setenv("LOOPBACK_ANTHROPIC_KEY", KEY)
    opts = {"base_url": server.url, "api_key_env": "LOOPBACK_ANTHROPIC_KEY", "timeout": 5, "max_retries": 0}
    return create_backend(ModelSpec(name="claude", backend="anthropic", model_id="claude-test-1", options=opts))


def test_an_image_within_the_apis_limits_goes_as_the_source_has_it(server, monkeypatch, tmp_path):
    part = write_png(tmp_path / "a.png", size=(900, 600))
    backend = source_size_backend(server, monkeypatch)
    backend.complete(moca_request(0, [part]))
    assert server.completions()[0].image_sha256 == [part.sha256]
    assert backend.images_sent(moca_request(0, [part])) == [[900, 600]]


def test_an_image_beyond_the_apis_largest_side_is_scaled_to_it(server, monkeypatch, tmp_path):
    part = write_png(tmp_path / "wide.png", size=(8400, 10))
    backend = source_size_backend(server, monkeypatch)
    backend.complete(moca_request(0, [part]))
    data = server.completions()[0].body["messages"][0]["content"][0]["source"]["data"]
    from PIL import Image

    assert Image.open(io.BytesIO(base64.b64decode(data))).size == (8000, 10)
    assert backend.images_sent(moca_request(0, [part])) == [[8000, 10]]


def test_the_identity_names_the_image_limits_and_no_image_size(server, monkeypatch):
    ident = source_size_backend(server, monkeypatch).identity()
    assert ident["image_size"] is None
    assert ident["image_limits"] == {
        "max_side": 8000,
        "many_images": 20,
        "many_max_side": 2000,
        "max_base64_bytes": 5 * 1024 * 1024,
    }
