"""Scoring (socialbench.meetingtom.eval.scoring): accuracy, Macro-F1 over option values (checked by hand
and against scikit-learn), chance, Task 3.2 conditional on Task 3.1, nulls, and bad files named."""

import json
from fractions import Fraction

import pytest

from socialbench.core.errors import DataError
from socialbench.meetingtom.eval.scoring import (
    METRICS,
    TASKS,
    Group,
    chance,
    keyed_by_group,
    keyed_by_string,
    macro_f1,
    outcome_row,
    outcomes,
    parse_scores,
    score,
)

T1_VALUES = ["active_engagement", "focused_listening", "hesitation"]


def inst(i, source="demo", n_options=3, answer="A", task="task2_1", values=None, clip=None):
    values = values or [f"v{k}" for k in range(n_options)]
    return {
        "id": f"i{i}",
        "task": task,
        "source": source,
        "answer": answer,
        "clip_id": clip or f"c{i}",
        "options": [{"label": "ABCDEFG"[k], "value": v} for k, v in enumerate(values)],
    }


def pred(i, answer, error=None):
    return {"id": f"i{i}", "answer": answer, "error": error}


def t1(i, gold_value, order):
    """A Task 1 instance whose options list ``order`` (values), gold ``gold_value``: letters differ per instance."""
    return inst(i, task="task1", values=order, answer="ABC"[order.index(gold_value)])


def test_accuracy_and_chance_by_hand():
    insts = [inst(0), inst(1), inst(2, n_options=4), inst(3, source="ami", n_options=2)]
    preds = [pred(0, "A"), pred(1, "B"), pred(2, None, "unparsable"), pred(3, "A")]
    s = score(insts, preds, source="p.jsonl")
    # demo: 1 of 3 right; chance = (1/3 + 1/3 + 1/4) / 3 = 11/36 = 30.56 %; one invalid
    assert s["task2_1/demo"] == {
        "accuracy": 33.33,
        "chance": 30.56,
        "correct": 1,
        "invalid": 1,
        "invalid_rate": 33.33,
        "n": 3,
        "n_total": 3,
        "macro_f1": None,
    }
    assert s["task2_1/ami"] == {
        "accuracy": 100.0,
        "chance": 50.0,
        "correct": 1,
        "invalid": 0,
        "invalid_rate": 0.0,
        "n": 1,
        "n_total": 1,
        "macro_f1": None,
    }


def test_every_group_has_every_metric():
    insts = [inst(0), t1(1, "hesitation", T1_VALUES)]
    assert all(set(m) == set(METRICS) for m in score(insts, [], source="p").values())


def test_the_chance_baseline_is_the_mean_of_one_over_the_option_counts():
    assert chance([3, 4]) == Fraction(7, 24)


def test_the_multi_select_chance_is_uniform_over_non_empty_subsets():
    # 4 participants: 15 non-empty subsets; 3 participants: 7
    assert chance([4, 3], multi=True) == (Fraction(1, 15) + Fraction(1, 7)) / 2


def test_an_instance_without_a_prediction_is_wrong_and_invalid():
    s = score([inst(0), inst(1)], [pred(0, "A")], source="p.jsonl")
    assert (s["task2_1/demo"]["correct"], s["task2_1/demo"]["invalid"]) == (1, 1)


def test_a_record_with_an_error_is_no_answer_even_with_a_letter():
    s = score([inst(0)], [pred(0, "A", error="answer truncated")], source="p")
    assert (s["task2_1/demo"]["correct"], s["task2_1/demo"]["invalid"]) == (0, 1)


def test_a_label_no_option_has_is_invalid_and_wrong():
    s = score([inst(0, n_options=2)], [pred(0, "D")], source="p")
    assert (s["task2_1/demo"]["correct"], s["task2_1/demo"]["invalid"]) == (0, 1)


def test_percentages_round_half_up():
    insts = [inst(i) for i in range(8)]
    s = score(insts, [pred(0, "A")] + [pred(i, "B") for i in range(1, 8)], source="p")
    assert s["task2_1/demo"]["accuracy"] == 12.5  # exactly 1/8
    insts = [inst(i) for i in range(3)]
    assert score(insts, [pred(0, "A"), pred(1, "A"), pred(2, "B")], source="p")["task2_1/demo"]["accuracy"] == 66.67


# ---- Macro-F1 ------------------------------------------------------------------------------------
# Six Task 1 instances with shuffled letters. Gold values: act, act, act, foc, foc, hes.
# Predicted values: act, act, foc, foc, act, (invalid).
#   active_engagement: TP 2, FP 1 (i4), FN 1 (i2) -> F1 = 4 / (4 + 1 + 1) = 2/3
#   focused_listening: TP 1, FP 1 (i2), FN 1 (i4) -> F1 = 2 / 4 = 1/2
#   hesitation:        TP 0, FP 0, FN 1 (invalid) -> F1 = 0
#   Macro-F1 = (2/3 + 1/2 + 0) / 3 = 7/18 = 38.89 %
ORDERS = [T1_VALUES, T1_VALUES[::-1], [T1_VALUES[1], T1_VALUES[2], T1_VALUES[0]]]
GOLD = ["active_engagement"] * 3 + ["focused_listening"] * 2 + ["hesitation"]
PRED = ["active_engagement", "active_engagement", "focused_listening", "focused_listening", "active_engagement", None]


def f1_case():
    insts = [t1(k, g, ORDERS[k % 3]) for k, g in enumerate(GOLD)]
    preds = [pred(k, None if p is None else "ABC"[ORDERS[k % 3].index(p)]) for k, p in enumerate(PRED)]
    return insts, preds


def test_macro_f1_by_hand_over_option_values():
    insts, preds = f1_case()
    assert macro_f1(GOLD, PRED) == Fraction(7, 18)
    assert score(insts, preds, source="p")["task1/demo"]["macro_f1"] == 38.89


def test_macro_f1_equals_scikit_learn():
    from sklearn.metrics import f1_score

    insts, preds = f1_case()
    ours = score(insts, preds, source="p")["task1/demo"]["macro_f1"]
    # sklearn's default labels are those of y_true and y_pred; the invalid answer is a miss, no class
    y_pred = [p if p is not None else "<invalid>" for p in PRED]
    labels = sorted(set(GOLD) | {p for p in PRED if p is not None})
    ref = f1_score(GOLD, y_pred, labels=labels, average="macro", zero_division=0)
    assert ours == round(100 * ref, 2)


@pytest.mark.parametrize("seed", range(5))
def test_macro_f1_matches_scikit_learn_on_random_answers(seed):
    import random

    from sklearn.metrics import f1_score

    rng = random.Random(seed)
    classes = ["a", "b", "c", "d"]
    gold = [rng.choice(classes[:3]) for _ in range(40)]
    pred_ = [rng.choice(classes + [None]) for _ in range(40)]
    labels = sorted(set(gold) | {p for p in pred_ if p is not None})
    ref = f1_score(gold, [p or "<invalid>" for p in pred_], labels=labels, average="macro", zero_division=0)
    assert float(macro_f1(gold, pred_)) == pytest.approx(ref, abs=1e-12)


def test_a_class_predicted_but_never_gold_counts_with_f1_zero():
    # gold a, a; predicted a, b: F1(a) = 2/3, F1(b) = 0 -> 1/3
    assert macro_f1(["a", "a"], ["a", "b"]) == Fraction(1, 3)


def test_macro_f1_is_null_for_tasks_without_it_and_set_for_task3_1():
    insts = [inst(0), inst(1, task="task3_1", values=["genuine_consensus", "pseudo_consensus", "no_consensus"])]
    s = score(insts, [pred(0, "A"), pred(1, "A")], source="p")
    assert s["task2_1/demo"]["macro_f1"] is None and s["task3_1/demo"]["macro_f1"] == 100.0


# ---- Task 3.2, conditional on Task 3.1 -------------------------------------------------------------
CONSENSUS = ["genuine_consensus", "pseudo_consensus", "no_consensus"]


def clip(k, dissenters, source="demo"):
    """A consensus clip: its Task 3.1 instance (gold pseudo_consensus = B) and Task 3.2 instance
    (participants A-D, options in the order D, C, B, A, so labels differ from letters)."""
    c31 = inst(f"{k}-31", task="task3_1", values=CONSENSUS, answer="B", clip=f"clip{k}", source=source)
    c32 = inst(
        f"{k}-32",
        task="task3_2",
        values=["D", "C", "B", "A"],
        clip=f"clip{k}",
        source=source,
        answer=sorted("ABCD"["DCBA".index(p)] for p in dissenters),
    )
    return c31, c32


def test_task3_2_counts_only_instances_whose_task3_1_answer_is_right():
    insts = [x for k, d in enumerate(["A", "AB", "C"]) for x in clip(k, d)]
    # participant A is label D, B is C, C is B
    preds = [
        pred("0-31", "B"),
        pred("0-32", ["D"]),  # 3.1 right, 3.2 right
        pred("1-31", "B"),
        pred("1-32", ["D"]),  # 3.1 right, 3.2 wrong (A only, gold A and B)
        pred("2-31", "A"),
        pred("2-32", ["B"]),
    ]  # 3.1 wrong: 3.2 not counted although right
    s = score(insts, preds, source="p")["task3_2/demo"]
    assert (s["n"], s["n_total"], s["correct"], s["accuracy"]) == (2, 3, 1, 50.0)
    assert s["chance"] == 6.67 and s["macro_f1"] is None  # 1/15


def test_task3_2_matches_sets_not_order():
    insts = list(clip(0, "AB"))
    s = score(insts, [pred("0-31", "B"), pred("0-32", ["C", "D"])], source="p")["task3_2/demo"]
    assert s["correct"] == 1


def test_task3_2_accuracy_is_null_when_no_task3_1_answer_is_right():
    insts = list(clip(0, "A"))
    s = score(insts, [pred("0-31", "C"), pred("0-32", ["D"])], source="p")["task3_2/demo"]
    assert (s["n"], s["n_total"], s["accuracy"]) == (0, 1, None)
    assert parse_scores(json.dumps({"task3_2/demo": s}).encode(), "s.json")["task3_2/demo"]["accuracy"] is None


def test_task3_2_invalid_answers_count_over_all_its_instances():
    insts = list(clip(0, "A"))
    s = score(insts, [pred("0-31", "C")], source="p")["task3_2/demo"]
    assert (s["invalid"], s["invalid_rate"], s["n"]) == (1, 100.0, 0)


def test_a_task3_2_instance_without_its_task3_1_instance_is_named():
    with pytest.raises(DataError, match="without a task3_1 instance of its clip") as err:
        score([clip(0, "A")[1]], [], source="p", instances_source="test.jsonl")
    assert "test.jsonl" in str(err.value) and "i0-32" in str(err.value)


@pytest.mark.parametrize("task,answer", [("task3_2", "D"), ("task2_1", ["A"])])
def test_an_answer_of_the_wrong_shape_is_named(task, answer):
    insts = list(clip(0, "A")) + [inst(9)]
    pid = {"task3_2": "0-32", "task2_1": 9}[task]
    with pytest.raises(DataError, match="answer") as err:
        score(insts, [pred(pid, answer)], source="p.jsonl", lines=[4])
    assert "p.jsonl" in str(err.value) and "line 4" in str(err.value)


@pytest.mark.parametrize(
    "preds,match",
    [
        ([{"answer": "A"}], "prediction without an id"),
        ([pred(0, "A"), pred(0, "B")], "duplicate prediction"),
        ([pred(9, "A")], "names no instance"),
    ],
)
def test_a_bad_prediction_file_is_named_with_the_line(preds, match):
    with pytest.raises(DataError, match=match) as err:
        score([inst(0)], preds, source="p.jsonl", lines=[3 + k for k in range(len(preds))])
    assert "p.jsonl" in str(err.value) and "line" in str(err.value)


# ---- score files read back ------------------------------------------------------------------------
def test_a_score_file_reads_back():
    insts, preds = f1_case()
    insts += [inst(9)] + list(clip(0, "A"))
    s = score(insts, preds + [pred(9, "A"), pred("0-31", "B")], source="p")
    assert parse_scores(json.dumps(s).encode(), "s.json") == s


GOOD = {
    "accuracy": 50,
    "chance": 1,
    "correct": 1,
    "invalid": 0,
    "invalid_rate": 0,
    "n": 2,
    "n_total": 2,
    "macro_f1": None,
}


@pytest.mark.parametrize(
    "group,change,match,field",
    [
        ("task2_1/demo", {"accuracy": 150}, "percentage", "accuracy"),
        ("task2_1/demo", {"correct": 3}, "whole number in", "correct"),
        ("task2_1/demo", {"n_total": 0, "n": 0}, ">= 1", "n_total"),
        ("task2_1/demo", {"n": 99}, "whole number in", "n"),
        ("task2_1/demo", {"macro_f1": 40.0}, "must be null", "macro_f1"),
        ("task1/demo", {}, "percentage", "macro_f1"),
        ("task3_2/demo", {"n": 3}, r"\[0, 2\]", "n"),
        ("task3_2/demo", {"n": 0, "correct": 0}, "must be null", "accuracy"),
        ("task2_1/demo", {"accuracy": None}, "percentage", "accuracy"),
    ],
)
def test_a_bad_score_file_is_refused_naming_group_and_field(group, change, match, field):
    with pytest.raises(DataError, match=match) as err:
        parse_scores(json.dumps({group: {**GOOD, **change}}).encode(), "s.json")
    assert f"group {group!r}" in str(err.value) and f"field {field!r}" in str(err.value)


@pytest.mark.parametrize(
    "bad,match",
    [
        ({}, "non-empty"),
        ({"task2_1/demo": {"accuracy": 50}}, "missing metric"),
        ({"task9/demo": GOOD}, "a group is <task>/<source>"),
    ],
)
def test_a_malformed_score_file_is_refused(bad, match):
    with pytest.raises(DataError, match=match):
        parse_scores(json.dumps(bad).encode(), "s.json")


def test_runs_with_different_task3_2_denominators_are_tabled_together():
    from socialbench.results.scores import collect_scores

    insts = list(clip(0, "A")) + list(clip(1, "B"))
    a = score(insts, [pred("0-31", "B"), pred("1-31", "B")], source="a")
    b = score(insts, [pred("0-31", "B")], source="b")
    from socialbench.core.benchmarks import get_benchmark

    size = get_benchmark("meetingtom").group_size
    got = collect_scores(
        [("a.json", "m", "x", a), ("b.json", "m", "y", b)], {"m": "baseline"}, "params.yaml", group_size=size
    )
    assert (got[("m", "x")]["task3_2/demo"]["n"], got[("m", "y")]["task3_2/demo"]["n"]) == (2, 1)


# ---- parity with the parser: a prediction file written without it scores the same ---------------------------
@pytest.mark.parametrize("answer", [[], ["D", "D"], ["D", "Z"]])
def test_a_task3_2_answer_the_parser_rejects_is_invalid_in_a_prediction_file(answer):
    insts = list(clip(0, "A"))  # participant A is label D
    s = score(insts, [pred("0-31", "B"), pred("0-32", answer)], source="p")["task3_2/demo"]
    assert (s["invalid"], s["correct"]) == (1, 0)


def test_labels_in_a_prediction_file_are_read_with_the_parsers_case_and_spaces():
    insts = list(clip(0, "A")) + [inst(9)]
    preds = [pred("0-31", " b"), pred("0-32", ["d "]), pred(9, "a")]
    s = score(insts, preds, source="p")
    assert [s[g]["correct"] for g in ("task2_1/demo", "task3_1/demo", "task3_2/demo")] == [1, 1, 1]


@pytest.mark.parametrize(
    "task,raw,stored",
    [
        ("task3_2", '{"answer": ["d", "D"]}', ["D", "D"]),
        ("task3_2", '{"answer": []}', []),
        ("task3_2", '{"answer": [" d"]}', [" d"]),
        ("task2_1", '{"answer": " a "}', " a "),
        ("task2_1", '{"answer": "Q"}', "Q"),
    ],
)
def test_a_parsed_answer_and_the_raw_one_in_a_file_score_alike(task, raw, stored):
    from socialbench.meetingtom.eval.parsing import parse_final

    insts = list(clip(0, "A")) + [inst(9)]
    pid, target = ("0-32", insts[1]) if task == "task3_2" else (9, insts[2])
    parsed = parse_final(raw, [o["label"] for o in target["options"]], multi=task == "task3_2")
    via_parser = pred(pid, parsed["answer"], parsed["error"])
    via_file = pred(pid, stored)
    group = f"{task}/demo"
    a = score(insts, [pred("0-31", "B"), via_parser], source="p")[group]
    b = score(insts, [pred("0-31", "B"), via_file], source="p")[group]
    assert (a["correct"], a["invalid"]) == (b["correct"], b["invalid"])


# ---- groups: (task, source) in memory, ``<task>/<source>`` on disk -------------------------------
def test_a_group_prints_as_score_files_key_it_and_parses_back():
    g = Group("task2_1", "ami")
    assert str(g) == "task2_1/ami" and f"{g}" == "task2_1/ami"
    assert Group.parse("task2_1/ami") == g and (g.task, g.source) == ("task2_1", "ami")


@pytest.mark.parametrize("key", ["task2_1", "task9/demo", "task1/", "/demo", "task1/demo/x"])
def test_a_string_that_is_no_group_is_an_error_naming_it(key):
    with pytest.raises(ValueError, match=f"group {key!r}: a group is <task>/<source>"):
        Group.parse(key)


def test_groups_sort_as_their_string_forms():
    groups = [Group(t, s) for t in TASKS for s in ("ami", "demo")]
    assert sorted(groups) == sorted(groups, key=str)


def test_score_files_key_groups_by_string_and_the_tables_read_them_back_by_group():
    scores = {Group("task1", "demo"): {"n": 1}}
    assert keyed_by_string(scores) == {"task1/demo": {"n": 1}}
    assert keyed_by_group(keyed_by_string(scores)) == scores


def test_an_outcome_row_holds_the_instances_group_flags_and_values_as_scored():
    insts = list(clip(0, "AB"))
    rows = [outcome_row(o) for o in outcomes(insts, [pred("0-31", "B"), pred("0-32", ["C", "D"])], source="p")]
    assert rows == [
        {
            "id": o.id,
            "group": str(o.group),
            "evaluated": o.evaluated,
            "correct": o.correct,
            "gold": o.gold,
            "pred": o.pred,
        }
        for o in outcomes(insts, [pred("0-31", "B"), pred("0-32", ["C", "D"])], source="p")
    ]
    assert rows[1]["group"] == "task3_2/demo" and rows[1]["correct"] is True


def test_an_outcome_row_of_an_invalid_answer_has_no_predicted_value():
    rows = [outcome_row(o) for o in outcomes([inst(0)], [pred(0, "Z")], source="p")]
    assert (rows[0]["pred"], rows[0]["correct"], rows[0]["gold"]) == (None, False, "v0")
