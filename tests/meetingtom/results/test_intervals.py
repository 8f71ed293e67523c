"""MeetingToM's intervals (socialbench.meetingtom.results.intervals), from the shared statistics."""

import numpy as np
import pytest

from socialbench.core.errors import DataError
from socialbench.meetingtom.results.intervals import RESAMPLES, accuracy_ci, conditional_ci, macro_f1_ci, run_summary


def test_an_interval_contains_its_point_and_is_the_same_every_time():
    lo, hi = accuracy_ci(18, 60, 7, ("m", "direct", "g"))
    assert lo < 30.0 < hi and (lo, hi) == accuracy_ci(18, 60, 7, ("m", "direct", "g"))


def test_the_conditional_interval_is_undefined_without_a_counted_instance():
    assert conditional_ci(0, 0, 5, 7, ("m", "x", "task3_2/demo")) == (None, None)
    lo, hi = conditional_ci(6, 10, 30, 7, ("m", "x", "task3_2/demo"))
    assert lo < 60.0 < hi


def test_the_macro_f1_interval_brackets_its_point_and_is_deterministic():
    from socialbench.meetingtom.eval.scoring import macro_f1

    gold = ["a"] * 20 + ["b"] * 10 + ["c"] * 5
    pred = ["a"] * 15 + ["b"] * 5 + ["b"] * 6 + ["a"] * 4 + ["c", None, "a", "c", "b"]
    point = float(100 * macro_f1(gold, pred))
    lo, hi = macro_f1_ci(gold, pred, 7, ("m", "x", "task1/demo", "macro_f1"))
    assert lo < point < hi and (lo, hi) == macro_f1_ci(gold, pred, 7, ("m", "x", "task1/demo", "macro_f1"))


def test_the_conditional_interval_is_the_ratio_of_resampled_counts_on_the_cells_seed():
    # written here from the definition: all 30 instances resampled, correct / eligible per resample
    from socialbench.results.stats import cell_seed

    idx = np.random.default_rng(cell_seed(7, "m", "x", "task3_2/demo")).integers(0, 30, size=(RESAMPLES, 30))
    eligible, right = (idx < 10).sum(axis=1), (idx < 6).sum(axis=1)
    ratios = 100 * right[eligible > 0] / eligible[eligible > 0]
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    assert conditional_ci(6, 10, 30, 7, ("m", "x", "task3_2/demo")) == (round(lo, 2), round(hi, 2))


def outcome_rows():
    from socialbench.meetingtom.eval.scoring import outcome_row, outcomes
    from tests.meetingtom.results.test_tables import instances, predictions

    insts = instances()
    source, recs = predictions()[("gem", "no_prompt")]
    recs = [*recs[:-1], {**recs[-1], "error": "failed"}]  # one record without a usable answer
    return [outcome_row(o) for o in outcomes(insts, recs, source=source)]


def test_a_run_summary_keeps_the_flags_values_and_answer_codes_of_its_outcome_rows():
    from socialbench.meetingtom.eval.scoring import Group
    from socialbench.results.stability import answer_codes

    rows = outcome_rows()
    run = run_summary(rows, "o.jsonl")
    t1 = [r for r in rows if r["group"] == "task1/demo"]
    assert run.f1 == {Group("task1", "demo"): ([r["gold"] for r in t1], [r["pred"] for r in t1])}
    assert run.evaluated.tolist() == [r["evaluated"] for r in rows]
    assert run.correct.tolist() == [r["correct"] for r in rows]
    assert run.answers.tolist() == answer_codes(r["pred"] for r in rows).tolist()


def test_an_outcome_row_of_no_known_group_is_an_error_naming_the_file_instance_and_field():
    rows = outcome_rows()
    rows[0] = {**rows[0], "group": "task9/demo"}
    with pytest.raises(DataError, match=r"o\.jsonl, record instance 't1-0', field 'group': must be <task>/<source>"):
        run_summary(rows, "o.jsonl")


def test_an_outcome_row_without_its_correctness_is_an_error_naming_it():
    rows = outcome_rows()
    del rows[3]["correct"]
    with pytest.raises(DataError, match=r"field 'correct': missing"):
        run_summary(rows, "o.jsonl")
