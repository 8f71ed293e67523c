"""The five subtasks' question templates and option vocabularies (socialbench.meetingtom.schema.questions)."""

import re
from pathlib import Path

import pytest

from socialbench.meetingtom.schema.questions import (
    ANNOTATED,
    ATTITUDES,
    CONSENSUS,
    STATES,
    TASKS,
    act_words,
    answer_format,
    label_of,
    meeting_stage,
    participant_options,
    question,
    shuffled,
    value_of,
    vocabulary_options,
)

#: One set of task variables per template: what the instance builders fill in.
VARIABLES = {
    "task1": {"duration": 5.0, "target": "C"},
    "task2_1": {"duration": 50.0, "speaker": "B", "you_time": 20.5, "utterance": "Could you check it?"},
    "task2_2": {
        "duration": 50.0,
        "speaker": "B",
        "addressee": "D",
        "you_time": 20.5,
        "utterance": "Could you check it?",
    },
    "task3_1": {"duration": 50.0, "moment_start": 20.0, "moment_end": 22.3},
    "task3_2": {"duration": 50.0, "moment_start": 20.0, "moment_end": 22.3},
}


def test_the_annotated_tasks_are_every_task_but_addressee_identification():
    assert TASKS == ("task1", "task2_1", "task2_2", "task3_1", "task3_2")
    assert set(TASKS) - set(ANNOTATED) == {"task2_1"}


def test_task1_has_the_papers_seven_mental_states():
    assert sorted(STATES) == sorted(
        [
            "active_engagement",
            "supportive_endorsement",
            "focused_listening",
            "cognitive_conflict",
            "confused_bewilderment",
            "hesitation",
            "disengaged_withdrawal",
        ]
    )


def test_task22_has_four_attitudes_and_task31_three_consensus_kinds():
    assert sorted(ATTITUDES) == ["negative", "neutral", "positive", "uncertain"]
    assert sorted(CONSENSUS) == ["genuine_consensus", "no_consensus", "pseudo_consensus"]


@pytest.mark.parametrize("task,vocab", [("task1", STATES), ("task2_2", ATTITUDES), ("task3_1", CONSENSUS)])
def test_vocabulary_options_show_name_colon_definition_under_number_labels(task, vocab):
    opts = vocabulary_options(task, 7, "x-1")
    assert [o["label"] for o in opts] == [str(k + 1) for k in range(len(vocab))]
    assert sorted(o["value"] for o in opts) == sorted(vocab)
    assert all(o["text"] == f"{vocab[o['value']][0]}: {vocab[o['value']][1]}" for o in opts)


def test_option_order_is_reproducible_for_the_same_seed_and_instance():
    assert vocabulary_options("task1", 7, "x-1") == vocabulary_options("task1", 7, "x-1")
    assert participant_options("ABCD", 7, "x-1") == participant_options("ABCD", 7, "x-1")


def test_option_order_differs_between_instances():
    orders = {tuple(o["value"] for o in vocabulary_options("task1", 7, f"x-{k}")) for k in range(20)}
    assert len(orders) > 1


def test_option_order_depends_on_the_seed():
    orders = {tuple(shuffled("ABCDEFG", seed, "x-1")) for seed in range(20)}
    assert len(orders) > 1


def test_participant_options_carry_the_letter_as_value_and_participant():
    opts = participant_options(["D", "A", "C", "B"], 7, "x-1", exclude=["B"])
    assert sorted(o["value"] for o in opts) == ["A", "C", "D"]
    assert all(o["participant"] == o["value"] and o["text"] == f"Participant {o['value']}" for o in opts)
    assert [o["label"] for o in opts] == ["1", "2", "3"]


def test_label_of_and_value_of_translate_between_labels_and_values():
    opts = vocabulary_options("task3_1", 7, "x-1")
    for o in opts:
        assert value_of(opts, label_of(opts, o["value"])) == o["value"]
    assert label_of(opts, "unanimous") is None and value_of(opts, "Z") is None


@pytest.mark.parametrize("task", TASKS)
def test_every_template_is_filled_by_its_task_variables_alone(task):
    text = question(task, VARIABLES[task])
    assert "$" not in text and text.strip()


def test_the_task1_question_names_the_target_and_the_clip_length():
    assert question("task1", VARIABLES["task1"]) == "What is participant C's mental state in this 5.0-second clip?"


def test_the_task22_question_names_speaker_addressee_and_utterance():
    text = question("task2_2", VARIABLES["task2_2"])
    assert "participant B addresses participant D" in text and '"Could you check it?"' in text and "at 20.5 s" in text


def test_the_task3_questions_name_the_decision_moment():
    assert "between 20.0 s and 22.3 s" in question("task3_1", VARIABLES["task3_1"])
    assert "between 20.0 s and 22.3 s" in question("task3_2", VARIABLES["task3_2"])


def test_a_missing_task_variable_is_an_error_not_a_blank():
    with pytest.raises(KeyError):
        question("task1", {"duration": 5.0})


def test_the_multi_select_task_asks_for_a_list_of_numbers():
    assert re.search(r'\{"answer": \["<number>"', answer_format("task3_2"))
    for task in ("task1", "task2_1", "task2_2", "task3_1"):
        assert answer_format(task).startswith('{"answer": "<number>"}')


@pytest.mark.parametrize("people", ["ABCD", "ABCDEFGH"])
def test_no_option_label_is_a_participant_name(people):
    """A participant's letter is never an option label, so answering "Participant B" by its letter
    cannot be read as another option (issue 19, point 6)."""
    for iid in ("x-1", "x-2", "ami-task2_1-IS1001b.A.you.12"):
        labels = {o["label"] for o in participant_options(people, 7, iid)}
        labels |= {o["label"] for t in ("task1", "task2_2", "task3_1") for o in vocabulary_options(t, 7, iid)}
        assert labels.isdisjoint(people)


@pytest.mark.parametrize(
    "topic,position,stage",
    [
        ("opening", 0.9, "opening"),
        ("closing", 0.2, "closing"),
        ("marketing expert presentation", 0.5, "presentation"),
        ("discussion", 0.3, "discussion"),
        ("costing", 0.8, "decision"),
        ("evaluation of prototype(s)", None, "discussion"),
        (None, 0.05, "opening"),
        (None, 0.95, "closing"),
        (None, 0.7, "decision"),
        (None, None, None),
    ],
)
def test_the_meeting_stage_comes_from_the_topic_and_the_position(topic, position, stage):
    assert meeting_stage(topic, position) == stage


def test_dialogue_acts_are_shown_in_words():
    assert [act_words(c) for c in ("el.inf", "bck", None, "new")] == ["elicit inform", "backchannel", "no act", "new"]


# ---- option orders (params meetingtom.robustness, issue 34) ----------------------------------------
def test_order_0_of_an_instances_options_is_its_own_list():
    from socialbench.meetingtom.schema.questions import rotated_options, vocabulary_options

    options = vocabulary_options("task1", 7, "i-1")
    assert rotated_options(options, 0) == options


def test_order_k_rotates_the_options_by_k_places_and_numbers_them_again():
    from socialbench.meetingtom.schema.questions import rotated_options, vocabulary_options

    options = vocabulary_options("task1", 7, "i-1")
    got = rotated_options(options, 2)
    assert [o["value"] for o in got] == [o["value"] for o in options[2:] + options[:2]]
    assert [o["label"] for o in got] == [o["label"] for o in options]  # 1, 2, ... again
    assert {o["value"]: o["text"] for o in got} == {o["value"]: o["text"] for o in options}


def test_a_two_option_item_has_two_distinct_orders():
    from socialbench.meetingtom.schema.questions import participant_options, rotated_options

    two = participant_options(["A", "B"], 7, "i-2")
    assert rotated_options(two, 2) == two
    assert rotated_options(two, 3) == rotated_options(two, 1) != two


def test_the_task_list_is_written_here_only():
    # scoring, the tables and the workflow's task files read TASKS; none spells the list again
    root = Path(__file__).resolve().parents[3]
    spelled = re.compile(r"""["']task1["'],\s*["']task2_1["']""")
    files = [*(root / "src" / "socialbench").rglob("*.py"), *(root / "rules").glob("*.smk"), root / "Snakefile"]
    where = sorted(str(p.relative_to(root)) for p in files if spelled.search(p.read_text("utf-8")))
    assert where == ["src/socialbench/meetingtom/schema/questions.py"]
