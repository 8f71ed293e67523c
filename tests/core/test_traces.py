"""What the viewer shows of a method's trace (socialbench.core.traces): a chain's stage passes (titles,
marks, folded inputs), its verdicts, and the tags of the method's trace filter."""

from __future__ import annotations

from socialbench.core.traces import nested_verdicts, stage_pass, staged_section

CODAR_LIKE = {
    "stages": [
        {"stage": "observer", "pass": 1, "output": {"caption": "Two people <em>argue</em>."}},
        {"stage": "conflict", "pass": 1, "output": {"The_Conflict": "praise vs failure"}},
        {"stage": "checker", "pass": 1, "output": {"status": "REJECTED", "breakpoint": 3, "refine": "unsupported"}},
        {"stage": "conflict", "pass": 2, "output": {"The_Conflict": "praise against a visible failure"}},
        {"stage": "checker", "pass": 2, "output": {"status": "ACCEPTED", "breakpoint": None, "refine": ""}},
    ],
    "retrieval": {"routes": ["model_prior"], "status": "none: answer from model prior"},
}


def section(trace, accepted=None):
    return staged_section(trace, nested_verdicts(trace), accepted)


def test_each_stage_pass_is_its_own_block_titled_by_stage_and_pass():
    titles = [p.title for p in section(CODAR_LIKE).passes]
    assert titles[:2] == ["observer · pass 1", "conflict · pass 1"] and len(titles) == 5


def test_a_pass_that_gave_a_verdict_is_marked_by_it():
    marks = [p.marks for p in section(CODAR_LIKE).passes]
    assert marks[2] == (("REJECTED → stage 3", "bad"),) and marks[4] == (("ACCEPTED", "ok"),)


def test_keys_outside_the_stages_are_the_rest():
    assert section(CODAR_LIKE).rest == {"retrieval": CODAR_LIKE["retrieval"]}


def test_verdicts_are_found_wherever_they_are_nested_in_order():
    assert nested_verdicts(CODAR_LIKE) == [
        {"status": "REJECTED", "breakpoint": 3},
        {"status": "ACCEPTED", "breakpoint": None},
    ]


def test_a_revised_then_accepted_chain_is_tagged_as_both_and_marked_by_its_last_verdict():
    s = section(CODAR_LIKE)
    assert s.tags == ("revised", "accepted") and s.marks == (("ACCEPTED", "ok"),)


def test_a_given_accepted_flag_decides_over_the_last_verdict():
    s = section(CODAR_LIKE, accepted=False)
    assert s.tags == ("revised", "not-accepted") and ("not accepted", "bad") in s.marks


def test_a_trace_without_verdicts_has_no_tags_and_no_marks():
    s = staged_section({"notes": "x"}, [], None)
    assert (s.tags, s.marks, s.passes, s.rest) == ((), (), (), {"notes": "x"})


def test_a_retry_is_titled_by_its_attempt_and_a_failed_attempt_is_marked_as_an_error():
    p = stage_pass({"stage": "decoder", "pass": 0, "attempt": 2, "error": "not JSON", "output": None})
    assert p.title == "decoder · pass 0 · attempt 2" and p.marks == (("error", "bad"),)
    assert stage_pass({"stage": "decoder", "pass": 0, "attempt": 1}).title == "decoder · pass 0"


def test_what_a_stage_was_given_is_folded_and_its_empty_keys_left_out():
    p = stage_pass({"stage": "d", "pass": 0, "inputs": {"The_Conflict": "c"}, "output": {"a": 1}, "error": None})
    assert p.given == {"The_Conflict": "c"} and p.body == {"output": {"a": 1}}
