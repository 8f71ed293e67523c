"""The No Prompt method (socialbench.meetingtom.methods.no_prompt): one JSON-mode call, then the
parsed answer (the whole response must be the object); no call for an instance whose clip is
missing where the modality needs video."""

import pytest

from socialbench.core.backend import ModelSpec, Response
from socialbench.core.benchmarks import Exchange, Final, get_benchmark
from socialbench.core.errors import ConfigError
from tests.meetingtom.eval.test_prompts import make

SPEC = ModelSpec(name="m", backend="scripted")


def method(settings=None):
    return get_benchmark("meetingtom").method("no_prompt", SPEC, 7, settings)


def answered(inst, text, finish_reason="stop"):
    (req,) = method().step(inst, [])
    return method().step(inst, [[Exchange(req, Response(text=text, finish_reason=finish_reason), "k")]])


def test_the_first_round_is_one_answering_request():
    (req,) = method().step(make(), [])
    assert req.request_id == "ami-task2_1-IS1001a.B.you.1/no_prompt/answer" and req.task["stage"] == "answer"


def test_the_request_asks_for_json_mode():
    (req,) = method().step(make(), [])
    assert req.decoding.json_object and "as a JSON object and nothing else" in req.messages[1].text()


def test_the_second_round_is_the_parsed_answer_and_its_option_value():
    inst = make("task2_2")
    final = answered(inst, f'{{"answer": "{inst["answer"]}"}}')
    assert isinstance(final, Final) and final.error is None
    assert (final.fields["answer"], final.fields["value"]) == (inst["answer"], "negative")


def test_its_answer_has_no_reasoning_and_its_trace_none():
    inst = make()
    final = answered(inst, f'{{"answer": "{inst["answer"]}"}}')
    assert final.fields["reasoning"] is None and final.trace == {}


def test_a_final_answer_line_is_read_as_for_every_other_method():
    inst = make()
    final = answered(inst, f'Looking at D.\nFinal answer: {{"answer": "{inst["answer"]}"}}')
    assert final.fields["answer"] == inst["answer"] and final.error is None


def test_a_truncated_invalid_answer_says_it_was_cut():
    final = answered(make(), '{"ans', finish_reason="length")
    assert final.error.startswith("answer truncated at max_tokens: no answer object")


def test_a_bad_setting_stops_before_any_call():
    with pytest.raises(ConfigError):
        method({"ingestion": "telepathy"}).step(make(), [])
