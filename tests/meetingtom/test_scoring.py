"""Scoring (socialbench.meetingtom.scoring): accuracy and chance per task and source, checked by
hand; bad prediction files named."""

import json
from fractions import Fraction

import pytest

from socialbench.errors import DataError
from socialbench.meetingtom.scoring import chance, parse_scores, score


def inst(i, source="demo", n_options=3, answer="A"):
    return {"id": f"i{i}", "task": "task2_1", "source": source, "answer": answer,
            "options": [{"label": "ABCD"[k]} for k in range(n_options)]}  # fmt: skip


def pred(i, answer, error=None):
    return {"id": f"i{i}", "answer": answer, "error": error}


def test_accuracy_and_chance_by_hand():
    insts = [inst(0), inst(1), inst(2, n_options=4), inst(3, source="ami", n_options=2)]
    preds = [pred(0, "A"), pred(1, "B"), pred(2, None, "unparsable"), pred(3, "A")]
    s = score(insts, preds, source="p.jsonl")
    # demo: 1 of 3 right; chance = (1/3 + 1/3 + 1/4) / 3 = 11/36 = 30.56 %; one invalid
    assert s["task2_1/demo"] == {"accuracy": 33.33, "chance": 30.56, "correct": 1, "invalid": 1, "invalid_rate": 33.33, "n": 3}
    assert s["task2_1/ami"] == {"accuracy": 100.0, "chance": 50.0, "correct": 1, "invalid": 0, "invalid_rate": 0.0, "n": 1}


def test_the_chance_baseline_is_the_mean_of_one_over_the_option_counts():
    assert chance([3, 4]) == Fraction(7, 24)


def test_an_instance_without_a_prediction_is_wrong_and_invalid():
    s = score([inst(0), inst(1)], [pred(0, "A")], source="p.jsonl")
    assert (s["task2_1/demo"]["correct"], s["task2_1/demo"]["invalid"]) == (1, 1)


def test_percentages_round_half_up():
    insts = [inst(i) for i in range(8)]
    s = score(insts, [pred(0, "A")] + [pred(i, "B") for i in range(1, 8)], source="p")
    assert s["task2_1/demo"]["accuracy"] == 12.5  # exactly 1/8
    insts = [inst(i) for i in range(3)]
    assert score(insts, [pred(0, "A"), pred(1, "A"), pred(2, "B")], source="p")["task2_1/demo"]["accuracy"] == 66.67


@pytest.mark.parametrize("preds,match", [
    ([{"answer": "A"}], "prediction without an id"),
    ([pred(0, "A"), pred(0, "B")], "duplicate prediction"),
    ([pred(9, "A")], "names no instance"),
])  # fmt: skip
def test_a_bad_prediction_file_is_named_with_the_line(preds, match):
    with pytest.raises(DataError, match=match) as err:
        score([inst(0)], preds, source="p.jsonl", lines=[3 + k for k in range(len(preds))])
    assert "p.jsonl" in str(err.value) and "line" in str(err.value)


def test_a_score_file_reads_back():
    s = score([inst(0)], [pred(0, "A")], source="p")
    assert parse_scores(json.dumps(s).encode(), "s.json") == s


@pytest.mark.parametrize("bad,match", [
    ({}, "non-empty"),
    ({"task2_1/demo": {"accuracy": 50}}, "missing metric"),
    ({"task2_1/demo": {"accuracy": 150, "chance": 1, "correct": 1, "invalid": 0, "invalid_rate": 0, "n": 2}}, "percentage"),
    ({"task2_1/demo": {"accuracy": 50, "chance": 1, "correct": 3, "invalid": 0, "invalid_rate": 0, "n": 2}}, "whole number in"),
    ({"task2_1/demo": {"accuracy": 50, "chance": 1, "correct": 1, "invalid": 0, "invalid_rate": 0, "n": 0}}, ">= 1"),
])  # fmt: skip
def test_a_bad_score_file_is_refused(bad, match):
    with pytest.raises(DataError, match=match):
        parse_scores(json.dumps(bad).encode(), "s.json")
