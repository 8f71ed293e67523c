import json

import pytest

from socialbench.moca.eval.parsing import parse_answer

MAPS = {
    "subject": {"subject0": "the coach", "subject1": "the speaker"},
    "target": {"target0": "the player", "target1": "the crowd"},
}
MECHS = ["expressive aggression", "malicious manipulation"]
LABELS = ["mock", "provoke"]


def parse(raw):
    return parse_answer(raw, MECHS, LABELS, MAPS)


def test_valid_answer_maps_slot_ids_back_to_options():
    fields, errors, rec = parse(
        json.dumps({"mechanism": "Expressive-Aggression", "label": "mock", "subject": "subject1", "target": "target0"})
    )
    assert fields == {
        "mechanism": "expressive aggression",
        "label": "mock",
        "subject": "the speaker",
        "target": "the player",
    }
    assert errors == {} and rec is None


def test_unparsable_output_marks_every_field():
    fields, errors, rec = parse("The answer is mock.")
    assert all(v is None for v in fields.values())
    assert set(errors) == {"mechanism", "label", "subject", "target"}
    assert rec.startswith("unparsable")


def test_json_that_is_not_an_object_is_unparsable():
    _, errors, rec = parse('["mock"]')
    assert "not an object" in rec and len(errors) == 4


def test_missing_field_is_recorded_and_others_kept():
    fields, errors, _ = parse(
        json.dumps({"mechanism": "expressive aggression", "label": "mock", "subject": "subject0"})
    )
    assert errors == {"target": "missing"}
    assert fields["subject"] == "the coach" and fields["target"] is None


def test_scenario_invalid_label_is_rejected():
    fields, errors, _ = parse(
        json.dumps({"mechanism": "expressive aggression", "label": "happy", "subject": "subject0", "target": "target0"})
    )
    assert fields["label"] is None and "invalid for scenario" in errors["label"]


def test_descriptive_text_instead_of_slot_id_is_rejected():
    fields, errors, _ = parse(
        json.dumps({"mechanism": "expressive aggression", "label": "mock", "subject": "the coach", "target": "target0"})
    )
    assert fields["subject"] is None and "invalid slot id" in errors["subject"]


def test_extra_keys_are_reported_without_invalidating_fields():
    fields, errors, rec = parse(
        json.dumps(
            {
                "mechanism": "expressive aggression",
                "label": "mock",
                "subject": "subject0",
                "target": "target1",
                "why": "x",
            }
        )
    )
    assert errors == {} and "unexpected keys" in rec and fields["target"] == "the crowd"


def test_no_response_is_recorded():
    fields, errors, rec = parse(None)
    assert rec == "no response" and all(v is None for v in fields.values())


ANSWER = json.dumps({"mechanism": "expressive aggression", "label": "mock", "subject": "subject0", "target": "target0"})


def test_a_fenced_answer_is_unparsable_when_strict_and_the_error_says_why():
    fields, errors, rec = parse("```json\n" + ANSWER + "\n```")
    assert all(v is None for v in fields.values()) and set(errors.values()) == {"unparsable"}
    assert "code fence" in rec and "moca.answer.code_fence: tolerate" in rec


@pytest.mark.parametrize(
    "fenced", ["```json\n" + ANSWER + "\n```", "```\n" + ANSWER + "\n```", "\n ```JSON\n" + ANSWER + "```  \n"]
)
def test_one_enclosing_fence_is_removed_when_tolerated(fenced):
    fields, errors, rec = parse_answer(fenced, MECHS, LABELS, MAPS, code_fence="tolerate")
    assert errors == {} and rec is None and fields["label"] == "mock"


@pytest.mark.parametrize(
    "text",
    [
        "Here it is:\n```json\n" + ANSWER + "\n```",  # prose before the fence
        "```json\n" + ANSWER + "\n```\n```json\n" + ANSWER + "\n```",  # two fences
        "```json " + ANSWER + "```",  # no line break after the opening fence
    ],
)
def test_anything_but_one_enclosing_fence_stays_unparsable_when_tolerated(text):
    _, errors, rec = parse_answer(text, MECHS, LABELS, MAPS, code_fence="tolerate")
    assert rec.startswith("unparsable") and len(errors) == 4


def test_an_unfenced_answer_parses_the_same_either_way():
    assert parse_answer(ANSWER, MECHS, LABELS, MAPS, code_fence="tolerate") == parse(ANSWER)


def test_an_unknown_code_fence_setting_is_refused():
    with pytest.raises(ValueError, match="code_fence"):
        parse_answer(ANSWER, MECHS, LABELS, MAPS, code_fence="loose")
