import json

import pytest

from socialbench.moca.eval.parsing import read_answer

MAPS = {
    "subject": {"subject0": "the coach", "subject1": "the speaker"},
    "target": {"target0": "the player", "target1": "the crowd"},
}
MECHS = ["expressive aggression", "malicious manipulation"]
LABELS = ["mock", "provoke"]


def parse_answer(raw, *args, **kw):
    """(fields, field_errors, record_error) of read_answer."""
    a = read_answer(raw, *args, **kw)
    return a.fields, a.field_errors, a.record_error


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


def test_extra_keys_are_dropped_by_default_and_every_field_is_kept():
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
    assert errors == {} and rec is None and fields["target"] == "the crowd"


WITH_EXTRA = json.dumps(
    {"mechanism": "expressive aggression", "label": "mock", "subject": "subject0", "target": "target1", "why": "x"}
)


def test_the_dropped_extra_keys_are_noted():
    assert read_answer(WITH_EXTRA, MECHS, LABELS, MAPS).extra_keys == ("why",)


def test_extra_keys_make_the_whole_answer_a_format_failure_when_params_say_invalid():
    fields, errors, rec = parse_answer(WITH_EXTRA, MECHS, LABELS, MAPS, extra_keys="invalid")
    assert all(v is None for v in fields.values()) and len(errors) == 4
    assert rec.startswith("unexpected keys ['why']") and "moca.answer.extra_keys" in rec


def test_one_bad_value_keeps_the_other_fields():
    fields, errors, rec = parse(
        json.dumps({"mechanism": "expressive aggression", "label": 3, "subject": "subject0", "target": "target1"})
    )
    assert rec is None and set(errors) == {"label"} and fields["mechanism"] == "expressive aggression"


def test_a_removed_code_fence_is_noted_as_a_repair():
    assert read_answer("```json\n" + ANSWER + "\n```", MECHS, LABELS, MAPS, code_fence="tolerate").fence_removed
    assert not read_answer(ANSWER, MECHS, LABELS, MAPS, code_fence="tolerate").fence_removed


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


# ---- keys a contract has besides the four (CoDAR's decoder substeps) ---------------------------------
DECODED = {"counterfactual_cost": "c", "mechanism": "mock", "label": "mock", "subject": "subject0", "target": "x"}


def test_unscored_keys_are_kept_apart_and_are_not_extra_keys():
    a = read_answer(json.dumps(DECODED), MECHS, LABELS, MAPS, extra_keys="invalid", unscored=("counterfactual_cost",))
    assert a.record_error is None and a.extra_keys == () and a.unscored == {"counterfactual_cost": "c"}


def test_the_answered_values_are_kept_as_given_beside_their_resolution():
    a = read_answer(json.dumps(DECODED), MECHS, LABELS, MAPS, unscored=("counterfactual_cost",))
    assert a.values["target"] == "x" and a.fields["target"] is None and a.field_errors["target"].startswith("invalid")
