"""The codar_script test double: stage-aware canned answers, scripted rejections, unparsable answers
and failures, all deterministic."""

from __future__ import annotations

import json

import pytest

from socialbench.core.backend import Message, ModelSpec, Request, create_backend
from socialbench.core.errors import ConfigError
from socialbench.moca.eval.testing import parse_request_id, pick_answer

CHOICES = [
    {"field": "mechanism", "options": [{"value": "m1", "text": ""}, {"value": "m2", "text": ""}]},
    {
        "field": "label",
        "options": [{"value": "l1", "text": ""}, {"value": "l2", "text": ""}, {"value": "l3", "text": ""}],
    },
    {"field": "subject", "options": [{"value": "subject0", "text": "a"}, {"value": "subject1", "text": "b"}]},
    {
        "field": "target",
        "options": [{"value": "target0", "text": "c"}, {"value": "target1", "text": "d"}],
        "distinct_from": "subject",
    },
]
DECODER_KEYS = ["counterfactual_cost", "conflict_utility", "subject", "target", "mechanism", "label"]


def backend(**options):
    return create_backend(ModelSpec(name="d", backend="codar_script", options=options))


def request(stage, rid=None, **task):
    return Request(
        rid or f"x1/codar/{stage}",
        (Message("user", (f"{stage} prompt",)),),
        {"benchmark": "moca", "method": "codar", "stage": stage, **task},
    )


def answer(b, req):
    resp = b.complete(req)
    assert resp.error is None, resp.error
    return json.loads(resp.text)


@pytest.mark.parametrize(
    "stage, keys",
    [
        ("observer", ["explicit_perception"]),
        ("query", ["entities", "questions"]),
        ("context", ["fact", "connection", "social_norm", "uncertainty"]),
        ("conflict", ["context_expectation", "explicit_reality", "the_conflict", "abductive_question"]),
    ],
)
def test_each_chain_stage_gets_its_own_keys(stage, keys):
    assert list(answer(backend(), request(stage))) == keys


def test_the_decoder_answers_its_listed_keys_with_values_from_the_choices():
    got = answer(backend(), request("decoder", choices=CHOICES, keys=DECODER_KEYS))
    assert list(got) == DECODER_KEYS
    assert (
        got["mechanism"] in ("m1", "m2") and got["label"] in ("l1", "l2", "l3") and got["target"].startswith("target")
    )


def test_the_direct_answer_stage_gets_the_four_fields():
    assert set(answer(backend(), request("answer", choices=CHOICES))) == {"mechanism", "label", "subject", "target"}


def test_a_revised_decoder_answer_differs_from_the_first():
    first = pick_answer({"choices": CHOICES}, "x1")
    assert pick_answer({"choices": CHOICES}, "x1", shift=1) != first


def test_the_checker_accepts_unless_told_otherwise():
    assert answer(backend(reject_every=0), request("checker", breakpoints=[1, 2, 3, 4]))["status"] == "ACCEPTED"


def test_a_rejected_instance_is_rejected_once_at_an_offered_breakpoint():
    b = backend(reject_every=1)
    first = answer(b, request("checker", breakpoints=[1, 3, 4]))
    again = answer(b, request("checker", "x1/codar/checker.rev1", breakpoints=[1, 3, 4]))
    assert first["status"] == "REJECTED" and first["breakpoint"] in (1, 3, 4) and first["refine"]
    assert again == {"status": "ACCEPTED", "breakpoint": None, "refine": ""}


def test_a_forced_breakpoint_is_used_when_offered():
    assert answer(backend(reject_every=1, breakpoint=3), request("checker", breakpoints=[1, 3, 4]))["breakpoint"] == 3


def test_never_accept_rejects_every_pass():
    b = backend(never_accept=["x1"])
    assert answer(b, request("checker", "x1/codar/checker.rev4", breakpoints=[4]))["status"] == "REJECTED"


def test_invalid_values_give_a_mechanism_outside_the_choices_on_the_first_pass_only():
    b = backend(invalid_values=["x1"])
    assert answer(b, request("decoder", choices=CHOICES))["mechanism"] == "not a mechanism"
    assert answer(b, request("decoder", "x1/codar/decoder.rev1", choices=CHOICES))["mechanism"] in ("m1", "m2")


def test_unparsable_ids_get_text_that_is_not_json():
    resp = backend(unparsable=["x1/codar/observer"]).complete(request("observer"))
    with pytest.raises(json.JSONDecodeError):
        json.loads(resp.text)


def test_failed_ids_and_unknown_stages_are_error_responses():
    b = backend(fail_ids=["x1/codar/observer"])
    assert b.complete(request("observer")).error == "scripted failure"
    assert "no canned answer for stage 'poem'" in b.complete(request("poem")).error


def test_answers_are_the_same_for_the_same_request():
    a, b = backend(reject_every=2), backend(reject_every=2)
    reqs = [
        request(s, f"i{k}/codar/{s}", choices=CHOICES, breakpoints=[1, 2])
        for k in range(5)
        for s in ("decoder", "checker")
    ]
    assert [a.complete(r).text for r in reqs] == [b.complete(r).text for r in reqs]


def test_every_call_is_recorded_in_order():
    b = backend()
    b.complete(request("observer"))
    b.complete(request("query", "x1/codar/query.rev1.retry1"))
    assert b.calls == ["x1/codar/observer", "x1/codar/query.rev1.retry1"]


def test_request_ids_give_instance_and_pass():
    assert parse_request_id("a/b/c/codar/decoder.rev2.retry1") == ("a/b/c", 2)
    assert parse_request_id("x1/codar/decoder") == ("x1", 0)


def test_the_doubles_code_is_part_of_the_identity_so_a_changed_answer_is_never_replayed():
    from socialbench.core.hashing import module_sources_sha256

    assert backend().identity()["behaviour"] == module_sources_sha256(["socialbench.moca.eval.testing"])


def test_the_script_is_part_of_the_identity_but_injected_failures_are_not():
    assert backend(reject_every=2).identity() != backend(reject_every=3).identity()
    assert backend(fail_ids=["x"]).identity() == backend().identity()


@pytest.mark.parametrize(
    "options, words",
    [
        ({"reject": 2}, "unknown key(s) ['reject']"),
        ({"reject_every": -1}, "reject_every: expected a whole number >= 0"),
        ({"never_accept": "x1"}, "never_accept: expected a list of ids"),
        ({"route": "google"}, "route: one of model_prior, web_search, hybrid"),
    ],
)
def test_bad_options_are_a_config_error_naming_them(options, words):
    with pytest.raises(ConfigError) as err:
        backend(**options)
    assert words in str(err.value)


# ---- malformed outputs at a rate (option malformed_rate) ------------------------------------------------
def test_a_malformed_rate_of_one_breaks_every_intermediate_stage_but_not_the_direct_answer():
    b = backend(malformed_rate=1.0)
    assert b.complete(request("observer")).text.startswith("Sure! ")
    assert json.loads(b.complete(request("answer", rid="x1/direct/answer", choices=CHOICES)).text)


def test_under_intermediate_breakage_the_decoder_leaves_out_only_its_substeps():
    text = backend(malformed_rate=1.0).complete(request("decoder", choices=CHOICES, keys=DECODER_KEYS)).text
    assert set(json.loads(text)) == {"mechanism", "label", "subject", "target"}


def test_with_malformed_calls_all_the_answering_calls_are_prose():
    b = backend(malformed_rate=1.0, malformed_calls="all")
    assert b.complete(request("answer", rid="x1/direct/answer", choices=CHOICES)).text.startswith("I would say")


def test_an_instances_first_answering_call_is_one_draw_for_direct_and_codar():
    from socialbench.moca.eval.testing import is_malformed

    draws = [
        (is_malformed(f"i{k}/direct/answer", "answer", 0.3), is_malformed(f"i{k}/codar/decoder", "decoder", 0.3))
        for k in range(40)
    ]
    assert all(a == b for a, b in draws) and 0 < sum(a for a, _ in draws) < 40


@pytest.mark.parametrize("options", [{"malformed_rate": 1.5}, {"malformed_rate": True}, {"malformed_calls": "some"}])
def test_bad_malformed_options_are_a_config_error(options):
    with pytest.raises(ConfigError, match="malformed"):
        backend(**options)


def test_the_context_answer_has_the_fields_the_request_lists():
    three = ["fact", "connection", "social_norm"]
    assert list(answer(backend(), request("context", keys=three))) == three
