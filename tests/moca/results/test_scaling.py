"""Table 6 (socialbench.moca.results.scaling): within-family scaling."""

import pytest

from tests.moca.results.paper_runs import (
    MODELS,
    answers,
    make_instances,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def test_table6_gives_the_changes_from_the_smaller_to_the_larger_model_and_each_completion_rate():
    inst = make_instances()
    runs = {
        ("s", "direct"): answers(inst, "s", "direct", lambda k, f: k < 5 or (f in ("subject", "target") and k < 10)),
        ("l", "direct"): answers(inst, "l", "direct", lambda k, f: k < 12 or (f in ("subject", "target") and k < 25)),
    }
    files, scores = run_tables(
        inst, runs, {"s": {"category": "x"}, "l": {"category": "x"}}, tables={"scaling": ["s", "l"]}
    )
    row = next(r for r in read_csv(files["table6.csv"]) if r["Scenario"] == "intent")
    small, large = scores[("s", "direct")]["intent"], scores[("l", "direct")]["intent"]
    assert float(row["ΔDyad"]) == round(large["dyad"] - small["dyad"], 2) == 50.0
    assert float(row["ΔHolis"]) == round(large["holis"] - small["holis"], 2)
    assert (
        (float(row["C_sem|dyad s"]), float(row["C_sem|dyad l"]))
        == (small["c_sem_dyad"], large["c_sem_dyad"])
        == (50.0, 48.0)
    )
    assert "| intent | +50.00\\* |" in files["table6.md"]  # 15 discordant pairs, all one way


def test_table6_without_scaling_models_says_what_to_set():
    inst = make_instances(4)
    files, _ = run_tables(inst, {("a", "direct"): answers(inst, "a", "direct", lambda k, f: True)}, MODELS)
    assert (
        "No rows: name the smaller and the larger model of one family in moca.tables.scaling: [smaller, larger]."
        in files["table6.md"]
    )
