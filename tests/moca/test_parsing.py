import json

from socialbench.moca.parsing import parse_answer

MAPS = {"subject": {"subject0": "the coach", "subject1": "the speaker"}, "target": {"target0": "the player", "target1": "the crowd"}}
MECHS = ["expressive aggression", "malicious manipulation"]
LABELS = ["mock", "provoke"]


def parse(raw):
    return parse_answer(raw, MECHS, LABELS, MAPS)


def test_valid_answer_maps_slot_ids_back_to_options():
    fields, errors, rec = parse(json.dumps({"mechanism": "Expressive-Aggression", "label": "mock", "subject": "subject1", "target": "target0"}))
    assert fields == {"mechanism": "expressive aggression", "label": "mock", "subject": "the speaker", "target": "the player"}
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
    fields, errors, _ = parse(json.dumps({"mechanism": "expressive aggression", "label": "mock", "subject": "subject0"}))
    assert errors == {"target": "missing"}
    assert fields["subject"] == "the coach" and fields["target"] is None


def test_scenario_invalid_label_is_rejected():
    fields, errors, _ = parse(json.dumps({"mechanism": "expressive aggression", "label": "happy", "subject": "subject0", "target": "target0"}))
    assert fields["label"] is None and "invalid for scenario" in errors["label"]


def test_descriptive_text_instead_of_slot_id_is_rejected():
    fields, errors, _ = parse(json.dumps({"mechanism": "expressive aggression", "label": "mock", "subject": "the coach", "target": "target0"}))
    assert fields["subject"] is None and "invalid slot id" in errors["subject"]


def test_extra_keys_are_reported_without_invalidating_fields():
    fields, errors, rec = parse(json.dumps({"mechanism": "expressive aggression", "label": "mock", "subject": "subject0", "target": "target1", "why": "x"}))
    assert errors == {} and "unexpected keys" in rec and fields["target"] == "the crowd"


def test_no_response_is_recorded():
    fields, errors, rec = parse(None)
    assert rec == "no response" and all(v is None for v in fields.values())
