"""Per-instance correctness (socialbench.moca.results.correctness): checked against the score files,
a failed record is no answer; a run's summary keeps what the scorer gives of its whole records."""

import numpy as np
import pytest

from socialbench.core.errors import DataError
from tests.moca.results.paper_runs import (
    MODELS,
    answers,
    bench,
    codar_runs,
    make_instances,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def test_predictions_that_no_longer_give_the_score_file_are_an_error_naming_it():
    inst = make_instances()
    runs = codar_runs(inst)
    b = bench()
    scores = {k: b.score(inst, recs, source="x") for k, recs in runs.items()}
    stale = dict(runs)
    stale[("a", "direct")] = answers(inst, "a", "direct", lambda k, f: True)
    params = {"seed": 7, "models": MODELS, "moca": {"methods": ["direct", "codar"], "tables": {"resamples": 1000}}}
    with pytest.raises(
        DataError,
        match=r"p\.jsonl, record scenario 'intent', field 'label': gives label = 100\.0 but the score"
        r" file of a/direct says 0\.0",
    ):
        b.tables(scores, params, inst, {k: b.run_summary(inst, recs, source="p.jsonl") for k, recs in stale.items()})


def test_a_failed_record_counts_as_no_answer_in_the_intervals_as_in_the_scores():
    inst = make_instances(10)
    recs = answers(inst, "a", "direct", lambda k, f: True)
    recs[0] = {**recs[0], "error": "answer truncated at max_tokens"}  # its fields are gold, but it failed
    files, scores = run_tables(inst, {("a", "direct"): recs}, MODELS)
    row = next(r for r in read_csv(files["intent.ci.csv"]) if r["metric"] == "label")
    assert float(row["value"]) == scores[("a", "direct")]["intent"]["label"] == 90.0


def test_a_run_summary_keeps_what_the_scorer_gives_of_the_whole_records():
    from socialbench.moca.results.answers import answer_counts
    from socialbench.moca.results.correctness import correctness, resolved
    from socialbench.results.stability import answer_codes

    inst = make_instances(6)
    recs = answers(inst, "a", "direct", lambda k, f: k % 2 == 0 or f == "label")
    recs[1] = {**recs[1], "error": "answer truncated at max_tokens"}
    b = bench()
    labels, mechanisms = b.taxonomy.as_sets()
    run = b.run_summary(inst, recs, source="p.jsonl")
    assert run.source == "p.jsonl" and run.scores == b.score(inst, recs, source="p.jsonl")
    whole = correctness(inst, recs, labels, mechanisms)
    assert list(run.cells) == list(whole) and all(np.array_equal(run.cells[s], whole[s]) for s in whole)
    assert run.answers == answer_counts(inst, recs, labels, mechanisms)
    assert run.resolved.tolist() == answer_codes(resolved(r) for r in recs).tolist()  # records in instance order
    assert run.resolved[1] == answer_codes([None])[0]  # the failed record: no answer
