"""The direct method (socialbench.meetingtom.methods.direct): one call, then the parsed answer; no
call for an instance whose clip is missing."""

from socialbench.backends.base import ModelSpec, Response
from socialbench.benchmark import Exchange, Final, get_benchmark
from tests.meetingtom.test_instances import CAND, EVENT, WORDS

SPEC = ModelSpec(name="m", backend="scripted")


def method(settings=None):
    return get_benchmark("meetingtom").method("direct", SPEC, 7, settings)


def instance(modality="utterances", clip_problem=None):
    from socialbench.meetingtom.instances import build_task21

    return build_task21(CAND, EVENT, "ABCD", WORDS, None, source="ami", split="test", modality=modality, seed=7, clip_problem=clip_problem)


def test_the_first_round_is_one_answering_request():
    (req,) = method().step(instance(), [])
    assert req.request_id == "ami-task2_1-IS1001a.B.you.1/direct/answer" and req.task["stage"] == "answer"


def test_the_second_round_is_the_parsed_answer():
    inst = instance()
    (req,) = method().step(inst, [])
    final = method().step(inst, [[Exchange(req, Response(text=f'{{"answer": "{inst["answer"]}"}}'), "k")]])
    assert isinstance(final, Final) and final.fields["answer"] == inst["answer"] and final.error is None


def test_a_truncated_invalid_answer_says_it_was_cut():
    inst = instance()
    (req,) = method().step(inst, [])
    final = method().step(inst, [[Exchange(req, Response(text='{"ans', finish_reason="length"), "k")]])
    assert final.error.startswith("answer truncated at max_tokens: unparsable")


def test_an_instance_without_its_clip_is_answered_without_a_call():
    final = method().step(instance("both", "window_beyond_end"), [])
    assert isinstance(final, Final) and final.error.startswith("media: no clip for this window (window_beyond_end")


def test_a_bad_setting_stops_before_any_call():
    import pytest

    from socialbench.errors import ConfigError

    with pytest.raises(ConfigError):
        method({"ingestion": "telepathy"}).step(instance(), [])
