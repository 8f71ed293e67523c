"""The strict answer rule (socialbench.meetingtom.parsing.parse_choice)."""

import pytest

from socialbench.meetingtom.parsing import parse_choice

LABELS = ["A", "B", "C"]


def test_a_json_object_with_an_option_letter_is_the_answer():
    assert parse_choice('{"answer": "B"}', LABELS) == ("B", None, None)


def test_surrounding_whitespace_and_lower_case_are_accepted():
    assert parse_choice('  {"answer": " c "}\n', LABELS)[0] == "C"


@pytest.mark.parametrize("raw,reason", [
    (None, "no response"),
    ('The answer is {"answer": "B"}', "unparsable"),
    ('```json\n{"answer": "B"}\n```', "unparsable"),
    ('["B"]', "not an object"),
    ('{"choice": "B"}', "missing answer"),
    ('{"answer": 2}', "not a string"),
    ('{"answer": "D"}', "not an option letter"),
    ('{"answer": "Participant C"}', "not an option letter"),
])  # fmt: skip
def test_anything_else_is_invalid_with_its_reason(raw, reason):
    label, error, _ = parse_choice(raw, LABELS)
    assert label is None and reason in error


def test_keys_besides_the_answer_are_noted_not_held_against_it():
    assert parse_choice('{"answer": "A", "why": "gaze"}', LABELS) == ("A", None, "keys besides answer: ['why']")
