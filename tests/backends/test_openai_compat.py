"""openai_compat against a loopback server speaking the chat-completions wire format (test double),
with the official OpenAI SDK client pointed at it."""

from __future__ import annotations

import io
import logging

import pytest
from PIL import Image

from socialbench.core.backend import ModelSpec, create_backend
from socialbench.core.errors import ConfigError
from tests.helpers.loopback import Fault, LoopbackServer
from tests.helpers.moca_requests import answer_schema, moca_request, write_clip, write_png, write_wav

KEY = "sk-loopback-test-key-0001"


@pytest.fixture
def server():
    with LoopbackServer("openai", api_key=KEY) as srv:
        yield srv


def backend_for(server, monkeypatch, **options):
    monkeypatch.setenv("LOOPBACK_KEY", KEY)
    opts = {
        "base_url": server.url,
        "api_key_env": "LOOPBACK_KEY",
        "timeout": 5,
        "retry_base_delay_s": 0.01,
        "max_retries": 3,
        **options,
    }
    concurrency = opts.pop("concurrency", 4)
    modalities = opts.pop("modalities", None)
    image_size = opts.pop("image_size", 64)
    spec = ModelSpec(
        name="m",
        backend="openai_compat",
        model_id="served-model",
        image_size=image_size,
        concurrency=concurrency,
        options=opts,
        modalities=modalities,
    )
    return create_backend(spec)


def run(backend, requests):
    got = {}
    backend.complete_many(requests, lambda i, r: got.__setitem__(i, r))
    return [got[i] for i in range(len(requests))]


def test_request_carries_model_schema_and_greedy_decoding(server, monkeypatch):
    resp = backend_for(server, monkeypatch).complete(moca_request(0, max_tokens=77))
    body = server.completions()[0].body
    assert body["model"] == "served-model" and body["temperature"] == 0.0 and body["max_tokens"] == 77
    assert body["response_format"]["json_schema"]["schema"] == answer_schema()
    assert resp.error is None and resp.text.startswith("{") and resp.input_tokens > 0 and resp.output_tokens > 0


def test_images_arrive_as_base64_with_their_exact_bytes(server, monkeypatch, tmp_path):
    frames = [write_png(tmp_path / f"f{k}.png", colour=(k * 40, 0, 0), timestamp=k / 2) for k in range(3)]
    backend_for(server, monkeypatch).complete(moca_request(0, frames))
    assert server.completions()[0].image_sha256 == [f.sha256 for f in frames]


def test_large_images_are_scaled_to_image_size(server, monkeypatch, tmp_path):
    big = write_png(tmp_path / "big.png", size=(256, 128))
    backend_for(server, monkeypatch).complete(moca_request(0, [big]))
    content = server.completions()[0].body["messages"][1]["content"]
    import base64

    data = base64.b64decode(content[0]["image_url"]["url"].split(",", 1)[1])
    assert Image.open(io.BytesIO(data)).size == (64, 32)


def test_without_image_size_an_image_goes_as_the_source_has_it_and_its_size_is_reported(server, monkeypatch, tmp_path):
    big = write_png(tmp_path / "big.png", size=(1500, 1000))
    backend = backend_for(server, monkeypatch, image_size=None)
    backend.complete(moca_request(0, [big]))
    assert server.completions()[0].image_sha256 == [big.sha256]  # its own bytes: no 448 downscale
    assert backend.images_sent(moca_request(0, [big])) == [[1500, 1000]]
    assert backend.identity()["image_size"] is None and "image_limits" not in backend.identity()


def test_the_key_comes_from_the_environment(server, monkeypatch):
    backend_for(server, monkeypatch).complete(moca_request(0))
    assert server.completions()[0].headers["authorization"] == f"Bearer {KEY}"


def test_non_loopback_server_without_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    spec = ModelSpec(
        name="m",
        backend="openai_compat",
        options={"base_url": "https://api.example.com/v1", "api_key_env": "NO_SUCH_KEY"},
    )
    with pytest.raises(ConfigError, match="NO_SUCH_KEY"):
        create_backend(spec)


@pytest.mark.parametrize(
    "fault",
    [
        Fault(status=429, headers={"retry-after": "0.05"}),
        Fault(status=500),
        Fault(status=503),
        Fault(malformed=True),
        Fault(wrong_shape=True),
        Fault(delay_s=1.5),  # longer than the client timeout below
    ],
    ids=["429", "500", "503", "malformed", "wrong-shape", "timeout"],
)
def test_transient_failure_is_retried_then_succeeds(server, monkeypatch, fault):
    server.scripted.append(fault)
    backend = backend_for(server, monkeypatch, timeout=0.5)
    resp = backend.complete(moca_request(0))
    assert resp.error is None and resp.text and len(server.completions()) == 2 and backend.retries == 1


def test_retry_after_is_honoured(server, monkeypatch, caplog):
    server.scripted.append(Fault(status=429, headers={"retry-after": "0.3"}))
    with caplog.at_level(logging.INFO, logger="socialbench.backends"):
        backend_for(server, monkeypatch).complete(moca_request(0))
    first, second = server.completions()
    assert second.at - first.at >= 0.3
    assert any("HTTP 429 rate limited; retrying in 0.30s" in r.getMessage() for r in caplog.records)


def test_bad_request_is_not_retried(server, monkeypatch):
    server.scripted.append(Fault(status=400))
    resp = backend_for(server, monkeypatch).complete(moca_request(0))
    assert resp.text is None and "HTTP 400" in resp.error and len(server.completions()) == 1


def test_a_call_that_keeps_failing_is_an_error_and_the_run_goes_on(monkeypatch):
    def fault_for(_n, body):  # instance 1 always fails
        return Fault(status=500) if "Instance 1:" in str(body["messages"][1]) else None

    with LoopbackServer("openai", api_key=KEY, fault_for=fault_for) as srv:
        out = run(backend_for(srv, monkeypatch, max_retries=2), [moca_request(i) for i in range(3)])
        failing = [r for r in srv.completions() if "Instance 1:" in str(r.body["messages"][1])]
    assert [r.error is None for r in out] == [True, False, True]
    assert "HTTP 500" in out[1].error and "3 attempts" in out[1].error and len(failing) == 3


def test_concurrency_is_bounded_per_model(monkeypatch):
    with LoopbackServer("openai", api_key=KEY, latency_s=0.3) as srv:
        out = run(backend_for(srv, monkeypatch, concurrency=3), [moca_request(i) for i in range(9)])
        assert all(r.error is None for r in out)
        assert srv.max_in_flight == 3


def test_results_are_handed_over_as_each_call_finishes(monkeypatch):
    def fault_for(_n, body):  # instance 0 is slow
        return Fault(delay_s=0.6) if "Instance 0:" in str(body["messages"][1]) else None

    order = []
    with LoopbackServer("openai", api_key=KEY, fault_for=fault_for) as srv:
        backend_for(srv, monkeypatch).complete_many([moca_request(i) for i in range(3)], lambda i, r: order.append(i))
    assert order[-1] == 0 and sorted(order) == [0, 1, 2]


def test_changed_image_is_an_error_without_a_call(server, monkeypatch, tmp_path):
    part = write_png(tmp_path / "a.png")
    write_png(tmp_path / "a.png", colour=(1, 2, 3))  # same path, other bytes
    resp = backend_for(server, monkeypatch).complete(moca_request(0, [part]))
    assert "content hash" in resp.error and server.completions() == []


def test_identity_names_the_settings_that_change_outputs(server, monkeypatch):
    a = backend_for(server, monkeypatch).identity()
    b = backend_for(server, monkeypatch, extra_body={"top_k": 1}).identity()
    assert a["model_id"] == "served-model" and a["image_size"] == 64 and b["extra_body"] == {"top_k": 1}
    assert "base_url" not in a  # moving the same model to another server costs no calls


# ---- parts, decoding and finish reasons (Request v2) ---------------------------------------------
def test_it_takes_images_and_audio_but_no_native_video():
    from socialbench.backends.openai_compat import OpenAICompatBackend

    assert OpenAICompatBackend.accepts == frozenset({"image", "audio"})


def test_audio_goes_as_an_input_audio_part_with_its_bytes_to_a_model_declaring_audio(server, monkeypatch, tmp_path):
    audio = write_wav(tmp_path / "a.wav")
    backend = backend_for(server, monkeypatch, modalities=["image", "frames", "audio"])
    resp = backend.complete(moca_request(0, [audio]))
    rec = server.completions()[0]
    part = rec.body["messages"][1]["content"][0]
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
    assert rec.audio_sha256 == [audio.sha256] and rec.image_sha256 == [] and resp.error is None


def test_a_video_goes_as_its_frames_with_the_view_labels(server, monkeypatch, tmp_path):
    frames = [write_png(tmp_path / f"f{k}.png", colour=(k * 60, 0, 0), timestamp=k / 2) for k in range(2)]
    clip = write_clip(tmp_path / "c.mp4", frames, view="Corner")
    closeup = write_png(tmp_path / "a.png", colour=(0, 0, 200), view="Closeup A")
    backend_for(server, monkeypatch).complete(moca_request(0, [closeup, clip]))
    rec = server.completions()[0]
    content = rec.body["messages"][1]["content"]
    assert [b["type"] if b["type"] != "text" else b["text"][:12] for b in content] == [
        "[Closeup A]",
        "image_url",
        "[Corner]",
        "image_url",
        "image_url",
        "Text: Instan",
    ]
    assert rec.image_sha256 == [closeup.sha256, *(f.sha256 for f in frames)] and rec.video_sha256 == []


def test_images_without_a_view_render_as_before(server, monkeypatch, tmp_path):
    img = write_png(tmp_path / "a.png")
    backend_for(server, monkeypatch).complete(moca_request(0, [img]))
    content = server.completions()[0].body["messages"][1]["content"]
    assert [b["type"] for b in content] == ["image_url", "text"]


def test_a_native_video_clip_is_refused_before_any_call(server, monkeypatch, tmp_path):
    from socialbench.core.backend import VideoPart

    clip = write_clip(tmp_path / "c.mp4")
    assert isinstance(clip, VideoPart) and not clip.frames
    with pytest.raises(
        ConfigError,
        match=r"models\.m \(backend openai_compat\): request inst-0001/direct/answer: part 1,"
        r" video: video as a file",
    ):
        run(backend_for(server, monkeypatch), [moca_request(0), moca_request(1, [clip])])
    assert server.completions() == []  # not even the request that could be sent


def test_decoding_fields_go_on_the_wire(server, monkeypatch):
    req = moca_request(0, temperature=0.7, top_p=0.9, stop=("\n\n", "END"), seed=11)
    backend_for(server, monkeypatch).complete(req)
    body = server.completions()[0].body
    assert (body["temperature"], body["top_p"], body["stop"], body["seed"]) == (0.7, 0.9, ["\n\n", "END"], 11)


def test_decoding_fields_at_their_default_are_not_sent(server, monkeypatch):
    backend_for(server, monkeypatch).complete(moca_request(0))
    body = server.completions()[0].body
    assert not {"top_p", "stop", "seed"} & set(body)


def test_without_send_temperature_neither_temperature_nor_top_p_is_sent(server, monkeypatch):
    backend_for(server, monkeypatch, send_temperature=False).complete(moca_request(0, top_p=0.5, seed=3))
    body = server.completions()[0].body
    assert "temperature" not in body and "top_p" not in body and body["seed"] == 3


def test_json_object_without_a_schema_asks_for_json_mode(server, monkeypatch):
    backend_for(server, monkeypatch).complete(moca_request(0, json_schema=None, json_object=True))
    backend_for(server, monkeypatch, json_mode="none").complete(moca_request(1, json_schema=None, json_object=True))
    first, second = (r.body for r in server.completions())
    assert first["response_format"] == {"type": "json_object"} and "response_format" not in second


def test_the_constraint_sent_is_named_per_json_mode(server, monkeypatch):
    schema, mode = moca_request(0), moca_request(0, json_schema=None, json_object=True)
    sent = {
        m: (
            backend_for(server, monkeypatch, json_mode=m).constraint(schema),
            backend_for(server, monkeypatch, json_mode=m).constraint(mode),
        )
        for m in ("json_schema", "json_object", "key_schema", "none")
    }
    assert sent == {
        "json_schema": ("json_schema", "json_object"),
        "json_object": ("json_object", "json_object"),
        "key_schema": ("json_schema", "key_schema"),
        "none": ("none", "none"),
    }
    assert backend_for(server, monkeypatch).constraint(moca_request(0, json_schema=None)) == "none"


def test_json_mode_key_schema_sends_the_answers_keys_with_free_values(server, monkeypatch):
    backend_for(server, monkeypatch, json_mode="key_schema").complete(
        moca_request(0, json_schema=None, json_object=True)
    )
    fmt = server.completions()[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["mechanism", "label", "subject", "target"]
    assert schema["additionalProperties"] is False
    assert all(v == {"type": "string"} for v in schema["properties"].values())


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_the_servers_reasoning_field_goes_before_the_answer_in_think_tags(server, monkeypatch, field):
    server.scripted.append(Fault(reasoning='try {"label": "x"}', reasoning_field=field, text='{"label": "y"}'))
    resp = backend_for(server, monkeypatch).complete(moca_request(0))
    assert resp.text == '<think>try {"label": "x"}</think>{"label": "y"}' and resp.finish_reason == "stop"


def test_reasoning_with_null_content_is_an_empty_answer_not_a_fault(server, monkeypatch):
    server.scripted.append(Fault(reasoning="still thinking", no_content=True, finish_reason="length"))
    resp = backend_for(server, monkeypatch, max_retries=0).complete(moca_request(0))
    assert resp.error is None and resp.text == "<think>still thinking</think>" and resp.truncated
    assert len(server.completions()) == 1


def test_the_temperature_sent_follows_send_temperature(server, monkeypatch):
    assert backend_for(server, monkeypatch).temperature_sent() is True
    assert backend_for(server, monkeypatch, send_temperature=False).temperature_sent() is False


@pytest.mark.parametrize(
    "wire,expected",
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "content_filter"),
        ("tool_calls", "stop"),
        ("something_new", None),
    ],
)
def test_finish_reason_is_the_first_choice_s(server, monkeypatch, wire, expected):
    server.scripted.append(Fault(finish_reason=wire))
    resp = backend_for(server, monkeypatch).complete(moca_request(0))
    assert resp.error is None and resp.finish_reason == expected and resp.truncated == (expected == "length")


def test_a_refusal_is_an_empty_answer_marked_refusal(server, monkeypatch):
    server.scripted.append(Fault(refusal="I can't help with that."))
    resp = backend_for(server, monkeypatch).complete(moca_request(0))
    assert resp.error is None and resp.text == "" and resp.finish_reason == "refusal"


def test_a_failed_call_has_finish_reason_error(server, monkeypatch, tmp_path):
    server.scripted.append(Fault(status=400))
    failed = backend_for(server, monkeypatch).complete(moca_request(0))
    part = write_png(tmp_path / "a.png")
    write_png(tmp_path / "a.png", colour=(1, 2, 3))
    unprepared = backend_for(server, monkeypatch).complete(moca_request(1, [part]))
    assert failed.finish_reason == "error" and unprepared.finish_reason == "error" and unprepared.error


def test_a_base_url_that_is_no_url_is_named_before_any_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = ModelSpec(name="m", backend="openai_compat", model_id="x", options={"base_url": "localhost:8000"})
    with pytest.raises(ConfigError, match=r"models\.m\.options\.base_url: 'localhost:8000' is not a server URL"):
        create_backend(spec)
