"""Answer stability under option order (src/socialbench/results/stability.py): circular accuracy,
agreement, the gap and their intervals from per-order correctness."""

import numpy as np
import pytest

from socialbench.results.stability import (
    agreement,
    answer_codes,
    circular,
    effective,
    stability,
    stability_table,
)
from socialbench.results.tables import SIGNED, to_csv, to_markdown


def _cell(correct, answers, distinct, **kw):
    c = np.array(correct, dtype=bool)[:, :, None]
    return stability(c, answers, distinct, ["correct"], "correct", seed=1, key=("m", "r"), n_resamples=200, **kw)


def test_circular_counts_an_instance_right_under_every_order_only():
    correct = np.array([[[1], [1], [0]], [[1], [0], [0]], [[1], [1], [1]]], dtype=bool)  # (K=3, N=3, 1)
    assert circular(correct, np.array([3, 3, 3])).tolist() == [[True], [False], [False]]


def test_an_instance_with_fewer_distinct_orders_uses_its_distinct_ones():
    # instance 0 has 2 distinct orders: its order 2 repeats order 0, so a miss recorded there does not count
    correct = np.array([[[1]], [[1]], [[0]]], dtype=bool)
    assert effective(correct, np.array([2]))[:, 0, 0].tolist() == [True, True, True]
    assert circular(correct, np.array([2])).tolist() == [[True]]
    assert circular(correct, np.array([3])).tolist() == [[False]]


def test_agreement_is_the_same_resolved_answer_under_every_order_with_none_as_an_answer():
    answers = [["x", None, "y"], ["x", None, "z"]]
    assert agreement(answers, np.array([2, 2, 2])).tolist() == [True, True, False]


def test_answer_codes_are_equal_exactly_where_the_answers_are():
    codes = answer_codes([("a", "b"), ["a", "b"], {"x": 1, "y": [2]}, {"y": [2], "x": 1}, ("a", "c"), None, None])
    assert codes.dtype == np.dtype("S16") and codes.shape == (7,)
    assert codes[0] == codes[1] and codes[2] == codes[3] and codes[5] == codes[6]  # tuples as lists, keys in any order
    assert len({codes[0], codes[2], codes[4], codes[5]}) == 4  # different answers, None among them


def test_a_cell_from_answer_codes_is_the_cell_from_the_answers():
    answers = [[("s1", "l1"), None, ("s2", "l2")], [("s1", "l1"), None, ("s3", "l2")], [["s1", "l1"], None, None]]
    correct = [[1, 0, 1], [1, 0, 0], [1, 0, 0]]
    assert _cell(correct, [answer_codes(a) for a in answers], [3] * 3) == _cell(correct, answers, [3] * 3)


def test_a_position_bound_model_loses_accuracy_to_the_circular_count_and_a_content_bound_one_does_not():
    gold = ["a", "b", "c", "d"]
    # content-bound: the same (right) answer under every order
    content = _cell([[1, 1, 1, 1]] * 3, [gold] * 3, [3] * 4)
    assert content.orders[0].point == content.mean.point == 100.0
    assert content.circular["correct"].point == 100.0 and content.agreement.point == 100.0
    assert content.gap.point == 0.0
    # position-bound: right wherever the gold sits in the first slot, a different option under each order
    pos = _cell(
        [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0]],
        [["a", "x", "y", "d"], ["p", "b", "y", "q"], ["r", "s", "c", "t"]],
        [3] * 4,
    )
    assert [o.point for o in pos.orders] == [50.0, 25.0, 25.0]
    assert (pos.mean.point, pos.low_order.point, pos.high_order.point) == (33.33, 25.0, 50.0)
    assert pos.circular["correct"].point == 0.0 and pos.agreement.point == 0.0
    assert pos.gap.point == 50.0
    assert pos.gap.low is not None and pos.gap.low <= 50.0 <= pos.gap.high


def test_the_statistics_are_the_same_bytes_for_the_same_inputs_and_seed():
    args = ([[1, 0, 1, 1], [1, 1, 0, 1]], [["a", "b", "c", "d"], ["a", "x", "c", "d"]], [2] * 4)
    assert _cell(*args) == _cell(*args)


def test_fewer_than_two_orders_is_refused():
    with pytest.raises(ValueError, match="at least 2 orders"):
        _cell([[1, 1]], [["a", "b"]], [2, 2])


def one_cell_table(st):
    return stability_table(
        "S",
        {("m", "r", "all"): st},
        [("all", "All")],
        [("correct", "accuracy")],
        "Accuracy",
        style=SIGNED,
        label="t",
        group_columns=("task", "source"),
        group_key=lambda g: (g, g),
    )


def test_the_table_prints_each_cell_with_its_interval_and_the_gap_signed():
    st = _cell([[1, 0], [0, 0]], [["a", "b"], ["c", "b"]], [2, 2])
    table = one_cell_table(st)
    md = to_markdown(table)
    row = next(line for line in md.splitlines() if line.startswith("| m |"))
    assert "| 2 | 50.00 [" in row and "+50.00 [" in row


def test_the_csv_is_one_line_per_statistic_named_by_its_group_model_run_and_metric():
    st = _cell([[1, 0], [0, 0]], [["a", "b"], ["c", "b"]], [2, 2])
    lines = to_csv(one_cell_table(st)).splitlines()
    assert lines[0] == "task,source,model,run,metric,value,ci_low,ci_high,n"
    metrics = [line.split(",")[4] for line in lines[1:]]
    assert metrics == [
        "accuracy_order_0",
        "accuracy_order_1",
        "accuracy_mean",
        "accuracy_min",
        "accuracy_max",
        "circular_accuracy",
        "agreement",
        "gap",
    ]
    assert lines[1].startswith("all,all,m,r,accuracy_order_0,50.0,") and lines[1].endswith(",2")
