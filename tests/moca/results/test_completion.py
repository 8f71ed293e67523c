"""Table 7 (socialbench.moca.results.completion): semantic completion, CoDAR against its backbones."""

import pytest

from tests.moca.results.paper_runs import (
    MODELS,
    answers,
    codar_runs,
    make_instances,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def test_table7_macro_averages_completion_over_the_backbones_with_the_human_rate():
    inst = make_instances()
    runs = {**codar_runs(inst), ("h", "direct"): answers(inst, "h", "direct", lambda k, f: k < 27)}
    models = {**MODELS, "h": {"category": "human"}}
    files, scores = run_tables(
        inst, runs, models, tables={"human": "h", "backbones": ["a", "b"]}, methods=("direct", "codar")
    )
    row = next(r for r in read_csv(files["table7.csv"]) if r["Scenario"] == "stance")
    c = {k: scores[k]["stance"]["c_sem_dyad"] for k in runs}
    assert float(row["Baseline"]) == round((c[("a", "direct")] + c[("b", "direct")]) / 2, 2) == 50.0
    assert float(row["CoDAR"]) == round((c[("a", "codar")] + c[("b", "codar")]) / 2, 2) == 100.0
    assert float(row["ΔCoDAR"]) == 50.0 and float(row["Human"]) == 100.0
    assert "Macro-averaged over: a, b (moca.tables.backbones)." in files["table7.md"]
    ci = read_csv(files["table7.ci.csv"])
    delta = next(r for r in ci if r["Scenario"] == "stance" and r["column"] == "ΔCoDAR")
    assert float(delta["value"]) == 50.0 and float(delta["low"]) <= 50.0 <= float(delta["high"])


def test_table7_without_codar_runs_says_to_add_codar():
    inst = make_instances(4)
    files, _ = run_tables(inst, {("a", "direct"): answers(inst, "a", "direct", lambda k, f: True)}, MODELS)
    assert "No rows: no backbone has both a direct and a codar row; add codar to moca.methods." in files["table7.md"]
