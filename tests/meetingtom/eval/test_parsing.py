"""The answer rule (socialbench.meetingtom.eval.parsing), one for every method: a JSON object naming
option labels (fence, trailing period, single quotes tolerated), with an optional reasoning key, or
the last "Final answer:" line with an object or bare labels; Task 3.2's sets of labels."""

import pytest

from socialbench.meetingtom.eval.parsing import normalize, parse_final, split_reasoning

LABELS = ["1", "2", "3"]


def parse_choice(raw, labels, *, multi=False):
    """``(answer, error, note)`` of a response: parse_final without the reasoning."""
    out = parse_final(raw, labels, multi=multi)
    return out["answer"], out["error"], out["note"]


def test_a_json_object_with_an_option_label_is_the_answer():
    assert parse_choice('{"answer": "2"}', LABELS) == ("2", None, None)


def test_surrounding_whitespace_is_accepted():
    assert parse_choice('  {"answer": " 3 "}\n', LABELS)[0] == "3"


@pytest.mark.parametrize(
    "raw",
    [
        '```json\n{"answer": "2"}\n```',
        '```\n{"answer": "2"}\n```',
        '{"answer": "2"}.',
        "{'answer': '2'}",
        '{"answer": 2}',
        'Final answer: {"answer": "2"}',
        "Final answer: 2",
        "Final answer: 2.",
        "Because of the gaze.\nFinal answer: ```json\n{'answer': '2'}\n```",
    ],
)
def test_the_tolerated_forms_all_read_the_same_answer(raw):
    assert parse_final(raw, LABELS)["answer"] == "2"


@pytest.mark.parametrize(
    "raw,reason",
    [
        (None, "no response"),
        ('The answer is {"answer": "2"}', "no answer object and no 'Final answer:' line"),
        ("I think it is 2.", "no answer object and no 'Final answer:' line"),
        ('["2"]', "no answer object"),
        ('{"choice": "2"}', "missing answer"),
        ('{"answer": true}', "not an option label"),
        ('{"answer": "4"}', "not an option label"),
        ('{"answer": "Participant C"}', "not an option label"),
        ('{"answer": "B"}', "not an option label"),
    ],
)
def test_anything_else_is_invalid_with_its_reason(raw, reason):
    label, error, _ = parse_choice(raw, LABELS)
    assert label is None and reason in error


def test_keys_besides_the_answer_and_reasoning_are_noted_not_held_against_it():
    assert parse_choice('{"answer": "1", "why": "gaze"}', LABELS) == ("1", None, "keys besides answer: ['why']")


def test_a_json_reasoning_key_is_the_reasoning():
    out = parse_final('{"reasoning": "C replies at once.", "answer": "3"}', LABELS)
    assert (out["answer"], out["reasoning"], out["note"]) == ("3", "C replies at once.", None)


# ---- Task 3.2: a set of options ---------------------------------------------------------------------
PEOPLE = ["1", "2", "3", "4"]


def test_a_multi_answer_is_the_sorted_labels():
    assert parse_choice('{"answer": ["4", "2"]}', PEOPLE, multi=True) == (["2", "4"], None, None)


def test_a_single_label_string_is_a_multi_answer_of_one():
    assert parse_choice('{"answer": "3"}', PEOPLE, multi=True)[0] == ["3"]


@pytest.mark.parametrize("line", ["Final answer: 1, 3", "Final answer: 3 and 1", "Final answer: 1; 3."])
def test_bare_multi_labels_after_the_marker_are_a_set(line):
    assert parse_final(f"Both hesitate.\n{line}", PEOPLE, multi=True)["answer"] == ["1", "3"]


@pytest.mark.parametrize(
    "raw,reason",
    [
        ('{"answer": []}', "selects no option"),
        ('{"answer": ["2", " 2"]}', "repeats an option"),
        ('{"answer": ["2", "5"]}', "'5' is not an option label"),
        ('{"answer": [true]}', "not a list of option labels"),
        ('{"answer": ["2", null]}', "not a list of option labels"),
    ],
)
def test_a_bad_multi_answer_is_invalid_with_its_reason(raw, reason):
    answer, error, _ = parse_choice(raw, PEOPLE, multi=True)
    assert answer is None and reason in error


def test_a_list_is_no_single_choice_answer():
    assert "not an option label" in parse_choice('{"answer": ["2"]}', LABELS)[1]


def test_normalize_is_the_same_rule_for_a_prediction_files_value():
    assert normalize([" 3", "1"], PEOPLE, multi=True) == (["1", "3"], None)
    assert normalize(2, LABELS) == ("2", None)
    assert normalize([], PEOPLE, multi=True)[0] is None


# ---- the "Final answer:" line --------------------------------------------------------------------------
COT = (
    'B says "you" while looking at C.\nFinal answer: {"answer": "1"}'
    ' is tempting, but\nC replies at once.\nFinal answer: {"answer": "3"}'
)


def test_the_answer_is_after_the_last_final_answer_line_and_the_text_before_is_the_reasoning():
    parsed = parse_final(COT, LABELS)
    assert parsed["answer"] == "3" and parsed["error"] is None
    assert (
        parsed["reasoning"]
        == 'B says "you" while looking at C.\nFinal answer: {"answer": "1"} is tempting, but\nC replies at once.'
    )


def test_split_reasoning_without_a_marker_is_no_reasoning_and_the_whole_response():
    assert split_reasoning("just prose") == (None, "just prose") and split_reasoning(None) == (None, None)


@pytest.mark.parametrize(
    "line",
    [
        'final answer: {"answer": "2"}',
        '**Final Answer**: {"answer": "2"}',
        'Final answer:\n{"answer": "2"}',
        '  FINAL ANSWER : {"answer": "2"}',
        '**Final answer:** {"answer": "2"}',
    ],
)
def test_the_marker_is_case_insensitive_and_may_be_bold_or_end_its_line(line):
    assert parse_final(f"Step one.\n{line}", LABELS)["answer"] == "2"


def test_the_marker_counts_only_at_the_start_of_a_line():
    parsed = parse_final('So my Final answer: {"answer": "2"}', LABELS)
    assert parsed["answer"] is None and parsed["error"].startswith("no answer object and no 'Final answer:' line")


def test_a_bad_final_line_is_invalid_with_the_answer_rules_reason_and_keeps_the_reasoning():
    parsed = parse_final('C is looked at.\nFinal answer: {"answer": "9"}', LABELS)
    assert (
        parsed["answer"] is None
        and "'9' is not an option label" in parsed["error"]
        and parsed["reasoning"] == "C is looked at."
    )


def test_text_after_the_final_object_is_invalid():
    error = parse_final('Why.\nFinal answer: {"answer": "2"}\nHope this helps.', LABELS)["error"]
    assert error.startswith("the 'Final answer:' line is no answer")
