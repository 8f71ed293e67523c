"""A MeetingToM instance's answer (socialbench.meetingtom.eval.answers): the option label(s) read from the
answering call with the option values, the reasoning kept where the request asked for it, and the answers
made without a call."""

import json

import pytest

from socialbench.core.backend import ModelSpec, Response
from socialbench.core.benchmarks import Exchange, get_benchmark
from socialbench.meetingtom.eval.answers import final_answer, no_call_answer, not_evaluated_answer, value_of_answer
from socialbench.meetingtom.eval.prompts import build_request
from tests.meetingtom.eval.test_prompts import make

BENCH = get_benchmark("meetingtom")
SPEC = ModelSpec(name="m", backend="random")


def exchange(inst, text, *, reasons=False, **response):
    name = "naive_cot" if reasons else "no_prompt"
    run = BENCH.method(name, SPEC, 1)
    templates = (run.template("system.txt"), run.template("user.txt"), None)
    req = build_request(inst, templates, SPEC, {}, name, reasons=reasons)
    return Exchange(req, Response(text=text, **{"finish_reason": "stop", **response}), "k"), run


def test_the_answer_is_the_label_and_its_option_value():
    inst = make("task3_1")
    ex, run = exchange(inst, json.dumps({"answer": inst["answer"]}))
    final = final_answer(inst, ex, run)
    assert final.error is None and final.fields["answer"] == inst["answer"]
    assert final.fields["value"] == "pseudo_consensus" and final.trace == {}


def test_a_reasoning_request_keeps_the_reasoning_in_the_trace():
    inst = make("task3_1")
    ex, run = exchange(inst, json.dumps({"reasoning": "C frowns.", "answer": inst["answer"]}), reasons=True)
    assert ex.request.shown == {"reasons": True} and "shown" not in ex.request.key()
    assert final_answer(inst, ex, run).trace == {"reasoning": "C frowns."}


def test_an_instance_the_recorded_answers_do_not_cover_is_not_evaluated():
    inst = make()
    ex, run = exchange(inst, None, finish_reason="no_record", error="no record for it")
    final = final_answer(inst, ex, run)
    assert final.error is None and final.fields["not_evaluated"].startswith("not covered by the recorded answers")


@pytest.mark.parametrize(
    ("final", "key", "error"),
    [
        (no_call_answer(make(), "clip missing"), "media_error", "media: clip missing"),
        (not_evaluated_answer(make(), "Task 1 with priors"), "not_evaluated", None),
    ],
)
def test_an_answer_without_a_call_says_why_and_has_no_label(final, key, error):
    assert final.fields[key] and final.fields["answer"] is None and final.error == error


def test_the_value_of_a_multi_answer_is_the_sorted_participants():
    inst = make("task3_2")
    assert value_of_answer(inst, inst["answer"]) == ["B", "D"]


def test_no_answer_has_no_value():
    assert value_of_answer(make(), None) is None
