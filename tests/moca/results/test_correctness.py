"""Per-instance correctness (socialbench.moca.results.correctness): a run's summary is what its outcome
rows give (the score stage's, read back), a failed record is no answer, and a bad row or a score file
without outcomes is an error naming it."""

import numpy as np
import pytest

from socialbench.core.errors import DataError
from tests.moca.results.paper_runs import (
    MODELS,
    answers,
    bench,
    make_instances,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def rows_of(n=6):
    inst = make_instances(n)
    recs = answers(inst, "a", "direct", lambda k, f: k % 2 == 0 or f == "label")
    recs[1] = {**recs[1], "error": "answer truncated at max_tokens"}
    return bench().eval.score_with_outcomes(inst, recs, source="p.jsonl")[1]


def test_a_failed_record_counts_as_no_answer_in_the_intervals_as_in_the_scores():
    inst = make_instances(10)
    recs = answers(inst, "a", "direct", lambda k, f: True)
    recs[0] = {**recs[0], "error": "answer truncated at max_tokens"}  # its fields are gold, but it failed
    files, scores = run_tables(inst, {("a", "direct"): recs}, MODELS)
    row = next(r for r in read_csv(files["intent.ci.csv"]) if r["metric"] == "label")
    assert float(row["value"]) == scores[("a", "direct")]["intent"]["label"] == 90.0


def test_a_run_summarys_cells_are_its_rows_correctness_and_invalid_per_scenario_in_order():
    from socialbench.moca.eval.scoring import FIELDS
    from socialbench.moca.results.correctness import run_summary

    rows = rows_of()
    run = run_summary(rows, "o.jsonl")
    assert list(run.cells) == ["intent", "stance"]
    want = [[r["correct"][k] for k in FIELDS] + [r["invalid"]] for r in rows if r["group"] == "stance"]
    assert np.array_equal(run.cells["stance"], np.array(want, dtype=bool))


def test_a_run_summary_counts_the_rows_answers_and_codes_their_resolved_answers():
    from socialbench.moca.results.answers import answer_counts
    from socialbench.moca.results.correctness import run_summary
    from socialbench.results.stability import answer_codes

    rows = rows_of()
    run = run_summary(rows, "o.jsonl")
    assert run.answers == answer_counts(rows)
    assert run.resolved.tolist() == answer_codes(r["answer"] for r in rows).tolist()
    assert run.resolved[1] == answer_codes([None])[0]  # the failed record: no answer


def test_an_outcome_row_without_a_fields_correctness_is_an_error_naming_the_file_instance_and_field():
    from socialbench.moca.results.correctness import run_summary

    rows = rows_of()
    rows[2] = {**rows[2], "correct": {k: v for k, v in rows[2]["correct"].items() if k != "mechanism"}}
    with pytest.raises(DataError, match=r"o\.jsonl, record instance 'intent-002', field 'correct\.mechanism': missing"):
        run_summary(rows, "o.jsonl")


def test_an_outcome_flag_that_is_no_boolean_is_an_error_naming_it():
    from socialbench.moca.results.correctness import run_summary

    rows = rows_of()
    rows[0] = {**rows[0], "invalid": "no"}
    with pytest.raises(DataError, match=r"field 'invalid': must be true or false, got 'no'"):
        run_summary(rows, "o.jsonl")


def test_a_score_file_without_outcomes_is_an_error_naming_its_run():
    from socialbench.moca.results.correctness import correctness_cells, run_summary

    summaries = {("a", "direct"): run_summary(rows_of(), "o.jsonl")}
    with pytest.raises(DataError, match=r"b/direct: no outcomes given for this score file"):
        correctness_cells(summaries, {("a", "direct"): {}, ("b", "direct"): {}})
