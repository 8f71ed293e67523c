"""Answer format per run (socialbench.moca.results.answers): answers.csv and the line under each table."""

import pytest

from tests.moca.results.paper_runs import (
    MODELS,
    codar_runs,
    make_instances,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def test_answers_csv_counts_invalid_output_and_repairs_per_run_and_scenario():
    inst = make_instances()
    runs = codar_runs(inst)
    for k, rec in enumerate(runs[("a", "codar")]):
        rec["format"] = {
            "retries": 1,
            "repairs": ["retry"] if k < 3 else [],
            "ignored_keys": [],
            "last_tuple_kept": None,
        }
    files, _ = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    rows = {(r["model"], r["method"], r["scenario"]): r for r in read_csv(files["answers.csv"])}
    a = rows[("a", "codar", "intent")]
    assert (a["repaired"], a["retry"], a["code_fence"], a["invalid_tuple"]) == ("3", "3", "0", "0")
    assert rows[("a", "direct", "intent")]["repaired"] == "0" and set(rows) == {
        (m, meth, s) for m in ("a", "b") for meth in ("direct", "codar") for s in ("intent", "stance")
    }


def test_the_scenario_notes_give_each_rows_invalid_rate_and_repaired_answers():
    inst = make_instances()
    runs = codar_runs(inst)
    for rec in runs[("a", "codar")][:2]:
        rec["format"] = {"retries": 0, "repairs": ["invalid_tuple"], "ignored_keys": [], "last_tuple_kept": None}
    files, scores = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    inv = scores[("a", "codar")]["intent"]["invalid_rate"]
    assert f"a + codar {inv:.2f} / 2 (invalid tuple 2)" in files["intent.md"]


def test_a_run_with_failures_says_how_many_of_its_n_failed():
    inst = make_instances(10)
    runs = codar_runs(inst)
    runs[("b", "direct")][0] = {**runs[("b", "direct")][0], "error": "answer truncated at max_tokens"}
    files, _ = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    assert ", 1 of N = 10 failed (scored invalid);" in files["intent.md"]
    assert "failed (scored invalid)" not in files["stance.md"]
