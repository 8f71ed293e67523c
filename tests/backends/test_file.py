"""The file backend: recorded (human) answers in the prediction format, replayed as a model."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from socialbench.core.backend import ModelSpec, create_backend
from socialbench.core.errors import ConfigError, DataError
from tests.helpers.moca_requests import moca_request

# moca_request(0): instance inst-0000; subject0 = "the coach", subject1 = "the fan",
# target0 = "the crowd", target1 = "the referee"
HUMAN = {
    "id": "inst-0000",
    "mechanism": "affective deception",
    "label": "mock",
    "subject": "the fan",
    "target": "the referee",
}


def write_answers(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def file_backend(path, **options):
    return create_backend(ModelSpec(name="human", backend="file", options={"path": str(path), **options}))


def test_it_answers_the_direct_request_with_the_recorded_answer_and_slot_ids_for_the_text(tmp_path):
    backend = file_backend(write_answers(tmp_path / "h.jsonl", HUMAN))
    resp = backend.complete(moca_request(0))
    assert resp.error is None and resp.finish_reason == "stop"
    assert json.loads(resp.text) == {
        "mechanism": "affective deception",
        "label": "mock",
        "subject": "subject1",
        "target": "target1",
    }


def test_text_that_differs_in_case_and_separators_still_names_its_option(tmp_path):
    backend = file_backend(write_answers(tmp_path / "h.jsonl", {**HUMAN, "subject": "The_Fan", "label": "MOCK"}))
    answer = json.loads(backend.complete(moca_request(0)).text)
    assert (answer["subject"], answer["label"]) == ("subject1", "mock")


def test_a_value_naming_no_option_is_passed_on_as_it_is_for_the_scorer_to_count_invalid(tmp_path):
    backend = file_backend(write_answers(tmp_path / "h.jsonl", {**HUMAN, "target": "the moon", "label": None}))
    answer = json.loads(backend.complete(moca_request(0)).text)
    assert (answer["target"], answer["label"]) == ("the moon", None)


def test_a_stage_of_another_method_is_an_error_response_not_an_answer(tmp_path):
    backend = file_backend(write_answers(tmp_path / "h.jsonl", HUMAN))
    resp = backend.complete(replace(moca_request(0), request_id="inst-0000/codar/decoder"))
    assert (
        resp.text is None
        and resp.finish_reason == "error"
        and "cannot answer stage 'decoder' of method 'codar'" in resp.error
    )


def test_a_free_text_request_is_an_error_response(tmp_path):
    backend = file_backend(write_answers(tmp_path / "h.jsonl", HUMAN))
    req = moca_request(0)
    resp = backend.complete(replace(req, task={k: v for k, v in req.task.items() if k != "choices"}))
    assert resp.text is None and "asks for free text" in resp.error


def test_an_instance_without_an_answer_is_an_error_response(tmp_path):
    backend = file_backend(write_answers(tmp_path / "h.jsonl", HUMAN))
    resp = backend.complete(moca_request(1))
    assert resp.text is None and "no answer for instance 'inst-0001'" in resp.error
    assert resp.finish_reason == "no_record"  # a benchmark can tell "not covered" from a failed call


def test_only_the_no_record_answer_is_given_without_a_call_for_the_planner(tmp_path):
    backend = file_backend(write_answers(tmp_path / "h.jsonl", HUMAN))
    assert backend.answer_without_call(moca_request(1)).finish_reason == "no_record"
    assert backend.answer_without_call(moca_request(0)) is None  # a recorded answer goes through the cache


def test_an_answer_without_an_asked_field_is_an_error_response(tmp_path):
    backend = file_backend(write_answers(tmp_path / "h.jsonl", {k: v for k, v in HUMAN.items() if k != "target"}))
    assert "has no field 'target'" in backend.complete(moca_request(0)).error


def test_an_instance_id_holding_a_slash_is_found(tmp_path):
    backend = file_backend(write_answers(tmp_path / "h.jsonl", {**HUMAN, "id": "src/0001"}))
    assert backend.complete(moca_request(0, instance="src/0001")).error is None


def test_changed_answers_change_the_identity_so_they_are_new_cache_entries(tmp_path):
    path = write_answers(tmp_path / "h.jsonl", HUMAN)
    before = file_backend(path).identity()
    write_answers(path, {**HUMAN, "label": "mitigate"})
    assert file_backend(path).identity() != before


def test_a_duplicate_id_is_a_data_error_naming_both_lines(tmp_path):
    path = write_answers(tmp_path / "h.jsonl", HUMAN, HUMAN)
    with pytest.raises(
        DataError,
        match=r"h\.jsonl, record line 2, field 'id': a second answer for 'inst-0000' \(the first is on line 1\)",
    ):
        file_backend(path)


def test_a_line_that_is_not_json_is_a_data_error_naming_it(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(HUMAN) + "\n{oops\n")
    with pytest.raises(DataError, match=r"record line 2: line 2 is not valid JSON"):
        file_backend(path)


def test_a_record_without_an_id_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="field 'id': must be a non-empty string"):
        file_backend(write_answers(tmp_path / "h.jsonl", {k: v for k, v in HUMAN.items() if k != "id"}))


def test_no_path_option_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match=r"models\.human\.options\.path: the file backend needs the answers file"):
        create_backend(ModelSpec(name="human", backend="file"))


def test_a_missing_answers_file_is_a_data_error_naming_it(tmp_path):
    with pytest.raises(DataError, match="nope.jsonl: answers file of models.human not found"):
        file_backend(tmp_path / "nope.jsonl")
