"""core.backend: JSON mode's key schema and a reasoning model's reasoning taken out of its answer."""

from __future__ import annotations

import dataclasses

import pytest

from socialbench.core.backend import Response, answer_keys, key_schema, split_reasoning, without_reasoning
from tests.helpers.moca_requests import moca_request

FOUR = ["mechanism", "label", "subject", "target"]


def json_mode(**decoding):
    return moca_request(0, json_schema=None, json_object=True, **decoding)


# ---- JSON mode as a key schema ------------------------------------------------------------------
def test_the_key_schema_fixes_the_keys_and_leaves_the_values_free():
    schema = key_schema(json_mode())
    assert schema == {
        "type": "object",
        "additionalProperties": False,
        "required": FOUR,
        "properties": {k: {"type": "string"} for k in FOUR},
    }


def test_the_methods_json_keys_come_first_with_their_types_and_in_their_order():
    keys = {"reasoning": {"type": "string"}, "answer": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}
    assert list(answer_keys(json_mode(json_keys=keys))) == ["reasoning", "answer"]
    assert answer_keys(json_mode(json_keys=keys))["answer"] == keys["answer"]


def test_value_constraints_are_left_out_of_the_key_schema_at_every_depth():
    keys = {
        "route": {"type": "string", "enum": ["a", "b"]},
        "items": {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "string", "enum": ["x"]}},
    }
    assert answer_keys(json_mode(json_keys=keys)) == {
        "route": {"type": "string"},
        "items": {"type": "array", "items": {"type": "string"}},
    }


def test_without_json_keys_the_tasks_keys_give_the_keys():
    req = dataclasses.replace(json_mode(), task={"stage": "observer", "keys": ["caption", "cues"]})
    assert key_schema(req)["required"] == ["caption", "cues"]


def test_a_request_naming_no_keys_has_no_key_schema():
    assert key_schema(dataclasses.replace(json_mode(), task={"stage": "answer"})) is None


def test_json_keys_leave_the_cache_key_unchanged():
    keys = {k: {"type": "string"} for k in FOUR}
    assert json_mode(json_keys=keys).key() == json_mode().key()


# ---- reasoning --------------------------------------------------------------------------------------
ANSWER = '{"subject": "subject1"}'


@pytest.mark.parametrize(
    "text,answer,reasoning",
    [
        (f'<think>maybe {{"subject": "subject3"}} no</think>{ANSWER}', ANSWER, 'maybe {"subject": "subject3"} no'),
        (f"<think>a</think>\n\n{ANSWER}\n", ANSWER, "a"),
        (f"reasoned in an opened block</think>{ANSWER}", ANSWER, "reasoned in an opened block"),
        (f"<think>one</think>{ANSWER}<think>two</think>", ANSWER, "one\n\ntwo"),
        ("<think>cut while reason", "", "cut while reason"),
        (f"<think></think>{ANSWER}", ANSWER, ""),
    ],
    ids=["inline", "whitespace", "opened-in-prompt", "two-blocks", "unclosed", "empty-block"],
)
def test_reasoning_blocks_are_split_from_the_answer(text, answer, reasoning):
    assert split_reasoning(text) == (answer, reasoning)


def test_a_text_without_reasoning_tags_is_returned_unchanged():
    text = f"  {ANSWER}\n"
    assert split_reasoning(text) == (text, None)


def test_a_response_without_reasoning_is_the_same_response():
    resp = Response(text=ANSWER, finish_reason="stop")
    assert without_reasoning(resp) is resp


def test_the_reasoning_moves_to_its_field_and_the_answer_stays():
    resp = without_reasoning(Response(text=f"<think>{{}}</think>{ANSWER}", output_tokens=9, finish_reason="stop"))
    assert (resp.text, resp.reasoning, resp.finish_reason, resp.output_tokens) == (ANSWER, "{}", "stop", 9)


@pytest.mark.parametrize("finish", ["stop", None, "length"])
def test_all_reasoning_and_no_answer_is_a_truncated_answer(finish):
    resp = without_reasoning(Response(text='<think>{"subject": "subject3"}</think>\n', finish_reason=finish))
    assert resp.text == "" and resp.truncated


def test_a_refusal_with_reasoning_stays_a_refusal():
    resp = without_reasoning(Response(text="<think>no</think>", finish_reason="refusal"))
    assert resp.finish_reason == "refusal" and resp.reasoning == "no"


def test_a_failed_call_is_left_as_it_is():
    resp = Response(text=None, error="boom", finish_reason="error")
    assert without_reasoning(resp) is resp


# ---- modalities by model ---------------------------------------------------------------------------


def test_a_backend_sends_only_what_its_model_takes_and_never_more_than_it_carries():
    from socialbench.backends.scripted import ScriptedBackend
    from socialbench.core.backend import AudioPart, ModelSpec

    audio = AudioPart("a.wav", "a" * 64)
    default = ScriptedBackend(ModelSpec(name="s", backend="scripted"))
    assert default.cannot_take(audio) is None
    text_and_images = ScriptedBackend(ModelSpec(name="s", backend="scripted", modalities=["image"]))
    assert text_and_images.cannot_take(audio) == "audio input is not supported (it takes: image)"


def test_a_clip_with_its_file_goes_as_frames_to_a_model_that_takes_no_native_video():
    from socialbench.backends.scripted import ScriptedBackend
    from socialbench.core.backend import ImagePart, ModelSpec, VideoPart

    clip = VideoPart(path="c.mp4", sha256="c" * 64, frames=(ImagePart("f.png", "f" * 64, 0.0),))
    frames_only = ScriptedBackend(ModelSpec(name="s", backend="scripted", modalities=["frames"]))
    native_only = ScriptedBackend(ModelSpec(name="s", backend="scripted", modalities=["video"]))
    neither = ScriptedBackend(ModelSpec(name="s", backend="scripted", modalities=["image"]))
    assert frames_only.cannot_take(clip) is None and native_only.cannot_take(clip) is None
    assert neither.cannot_take(clip) == "video frames are not supported (it takes: image)"


# ---- a backend whose code decides its answers: that code's hash is in its identity -------------------
def test_a_backend_that_answers_from_code_carries_the_hash_of_its_module_in_its_identity(tmp_path, monkeypatch):
    from socialbench.core.backend import ModelSpec
    from socialbench.core.hashing import module_sources_sha256
    from tests.helpers.versioned_double import MODULE, load_double

    double = load_double(monkeypatch, tmp_path, "v1").VersionedDouble(ModelSpec(name="d", backend="versioned_double"))
    assert double.identity()["behaviour"] == module_sources_sha256([MODULE])


def test_a_new_version_of_a_doubles_code_changes_its_identity_and_the_same_code_keeps_it(tmp_path, monkeypatch):
    from socialbench.core.backend import ModelSpec
    from tests.helpers.versioned_double import load_double

    spec = ModelSpec(name="d", backend="versioned_double")
    first = load_double(monkeypatch, tmp_path, "old answer").VersionedDouble(spec).identity()
    changed = load_double(monkeypatch, tmp_path, "new answer").VersionedDouble(spec).identity()
    back = load_double(monkeypatch, tmp_path, "old answer").VersionedDouble(spec).identity()
    assert changed["behaviour"] != first["behaviour"] and back == first


def test_a_backend_that_calls_a_model_has_no_behaviour_in_its_identity():
    from socialbench.core.backend import Backend, ModelSpec

    class Model(Backend):  # a model's answers: its id and revision, not this code
        name = "model"

        def complete(self, request):
            return Response(text="{}")

    ident = Model(ModelSpec(name="m", backend="model", model_id="org/m", revision="r1")).identity()
    assert ident == {"backend": "model", "model_id": "org/m", "revision": "r1"}


def test_the_behaviour_covers_the_modules_of_a_double_its_bases_and_its_declared_helpers():
    from socialbench.backends.scripted import ScriptedBackend
    from socialbench.core.backend import behaviour_modules

    class Variant(ScriptedBackend):  # a test's variant of a double, defined in this module
        behaviour_modules = ("socialbench.backends.baselines",)

    assert behaviour_modules(Variant) == (__name__, "socialbench.backends.scripted", "socialbench.backends.baselines")
    assert behaviour_modules(ScriptedBackend) == ("socialbench.backends.scripted",)
