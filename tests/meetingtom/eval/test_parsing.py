"""The strict answer rule (socialbench.meetingtom.eval.parsing): one JSON object naming option letters, Task 3.2's
sets of letters, and the reasoning methods' "Final answer:" line."""

import pytest

from socialbench.meetingtom.eval.parsing import parse_choice, parse_final, split_reasoning

LABELS = ["A", "B", "C"]


def test_a_json_object_with_an_option_letter_is_the_answer():
    assert parse_choice('{"answer": "B"}', LABELS) == ("B", None, None)


def test_surrounding_whitespace_and_lower_case_are_accepted():
    assert parse_choice('  {"answer": " c "}\n', LABELS)[0] == "C"


@pytest.mark.parametrize(
    "raw,reason",
    [
        (None, "no response"),
        ('The answer is {"answer": "B"}', "unparsable"),
        ('```json\n{"answer": "B"}\n```', "unparsable"),
        ('["B"]', "not an object"),
        ('{"choice": "B"}', "missing answer"),
        ('{"answer": 2}', "not a string"),
        ('{"answer": "D"}', "not an option letter"),
        ('{"answer": "Participant C"}', "not an option letter"),
    ],
)
def test_anything_else_is_invalid_with_its_reason(raw, reason):
    label, error, _ = parse_choice(raw, LABELS)
    assert label is None and reason in error


def test_keys_besides_the_answer_are_noted_not_held_against_it():
    assert parse_choice('{"answer": "A", "why": "gaze"}', LABELS) == ("A", None, "keys besides answer: ['why']")


# ---- Task 3.2: a set of options ---------------------------------------------------------------------
PEOPLE = ["A", "B", "C", "D"]


def test_a_multi_answer_is_the_sorted_upper_cased_letters():
    assert parse_choice('{"answer": ["d", "B"]}', PEOPLE, multi=True) == (["B", "D"], None, None)


def test_a_single_letter_string_is_a_multi_answer_of_one():
    assert parse_choice('{"answer": "C"}', PEOPLE, multi=True)[0] == ["C"]


@pytest.mark.parametrize(
    "raw,reason",
    [
        ('{"answer": []}', "selects no option"),
        ('{"answer": ["B", "b"]}', "repeats an option"),
        ('{"answer": ["B", "E"]}', "'E' is not an option letter"),
        ('{"answer": 2}', "not a list of letters"),
        ('{"answer": ["B", 2]}', "not a list of letters"),
    ],
)
def test_a_bad_multi_answer_is_invalid_with_its_reason(raw, reason):
    answer, error, _ = parse_choice(raw, PEOPLE, multi=True)
    assert answer is None and reason in error


def test_a_list_is_no_single_choice_answer():
    assert "not a string" in parse_choice('{"answer": ["B"]}', LABELS)[1]


# ---- reasoning responses: the "Final answer:" line ---------------------------------------------------
COT = (
    'B says "you" while looking at C.\nFinal answer: {"answer": "A"}'
    ' is tempting, but\nC replies at once.\nFinal answer: {"answer": "C"}'
)


def test_the_answer_is_after_the_last_final_answer_line_and_the_text_before_is_the_reasoning():
    parsed = parse_final(COT, LABELS, marked=True)
    assert parsed["answer"] == "C" and parsed["error"] is None
    assert (
        parsed["reasoning"]
        == 'B says "you" while looking at C.\nFinal answer: {"answer": "A"} is tempting, but\nC replies at once.'
    )


def test_split_reasoning_without_a_marker_is_no_reasoning_and_the_whole_response():
    assert split_reasoning("just prose") == (None, "just prose") and split_reasoning(None) == (None, None)


@pytest.mark.parametrize(
    "line",
    [
        'final answer: {"answer": "B"}',
        '**Final Answer**: {"answer": "B"}',
        'Final answer:\n{"answer": "B"}',
        '  FINAL ANSWER : {"answer": "B"}',
    ],
)
def test_the_marker_is_case_insensitive_and_may_be_bold_or_end_its_line(line):
    assert parse_final(f"Step one.\n{line}", LABELS, marked=True)["answer"] == "B"


def test_the_marker_counts_only_at_the_start_of_a_line():
    parsed = parse_final('So my Final answer: {"answer": "B"}', LABELS, marked=True)
    assert parsed["answer"] is None and parsed["error"].startswith("no 'Final answer:' line")


def test_a_reasoning_response_that_is_the_bare_object_is_accepted():
    assert parse_final(' {"answer": "B"}\n', LABELS, marked=True) == {
        "answer": "B",
        "error": None,
        "note": None,
        "reasoning": None,
    }


def test_prose_without_the_marker_is_invalid_saying_the_line_is_missing():
    error = parse_final("I think it is B.", LABELS, marked=True)["error"]
    assert error.startswith("no 'Final answer:' line, and the response is not the bare answer object (unparsable")


def test_a_bad_final_line_is_invalid_with_the_answer_rules_reason_and_keeps_the_reasoning():
    parsed = parse_final('C is looked at.\nFinal answer: {"answer": "Z"}', LABELS, marked=True)
    assert (
        parsed["answer"] is None
        and "'Z' is not an option letter" in parsed["error"]
        and parsed["reasoning"] == "C is looked at."
    )


def test_text_after_the_final_object_is_invalid():
    assert (
        "unparsable"
        in parse_final('Why.\nFinal answer: {"answer": "B"}\nHope this helps.', LABELS, marked=True)["error"]
    )


def test_unmarked_parsing_takes_a_final_answer_line_as_prose():
    # No Prompt's whole response must be the object (JSON mode): its marker is not looked for.
    parsed = parse_final('Final answer: {"answer": "B"}', LABELS)
    assert parsed["answer"] is None and parsed["error"].startswith("unparsable") and parsed["reasoning"] is None


def test_a_marked_multi_answer_is_the_sorted_set():
    assert parse_final('Both hesitate.\nFinal answer: {"answer": ["D", "A"]}', PEOPLE, multi=True, marked=True)[
        "answer"
    ] == ["A", "D"]


def test_no_response_is_invalid_without_the_marker_message():
    assert parse_final(None, LABELS, marked=True)["error"] == "no response"


def test_a_bold_final_answer_marker_with_the_colon_inside_the_bold_is_read():
    from socialbench.meetingtom.eval.parsing import parse_final

    out = parse_final('Reasoning.\n**Final answer:** {"answer": "b"}', ["A", "B", "C"], marked=True)
    assert out["answer"] == "B" and out["error"] is None and out["reasoning"] == "Reasoning."
