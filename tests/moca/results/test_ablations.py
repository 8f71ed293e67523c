"""Table 5 (socialbench.moca.results.ablations): CoDAR's ablations against full CoDAR."""

import pytest

from tests.moca.results.paper_runs import (
    MODELS,
    answers,
    make_instances,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def test_table5_gives_atomic_average_and_changes_against_full_codar():
    inst = make_instances()
    runs = {
        ("a", "codar"): answers(inst, "a", "codar", lambda k, f: k < 20),
        ("a", "codar__wo_step5"): answers(
            inst, "a", "codar__wo_step5", lambda k, f: k < 10 or (f == "subject" and k < 30)
        ),
    }
    files, scores = run_tables(inst, runs, {"a": {"category": "x"}}, methods=("codar", "codar__wo_step5"))
    rows = read_csv(files["table5.csv"])
    full = next(r for r in rows if r["Scenario"] == "intent" and r["Variant"] == "CoDAR")
    ablated = next(r for r in rows if r["Scenario"] == "intent" and r["Variant"] == "w/o Step 5")
    s = scores[("a", "codar__wo_step5")]["intent"]
    atomic = round((s["label"] + s["subject"] + s["target"] + s["mechanism"]) / 4, 2)
    assert float(ablated["Atomic Avg."]) == atomic and float(full["Holis"]) == scores[("a", "codar")]["intent"]["holis"]
    assert "| intent | a | w/o Step 5 | 50.00 (-16.67) |" in files["table5.md"]
    assert "Not run: codar__wo_step2, codar__wo_steps34 (add to moca.methods)." in files["table5.md"]


def test_table5_takes_its_rows_and_labels_from_the_ablations_in_params():
    inst = make_instances(4)
    runs = {(m, meth): answers(inst, m, meth, lambda k, f: True) for m in ("a",) for meth in ("codar", "codar__x")}
    ablations = {"x": {"table": "table5", "label": "no checker", "stages": ["observer", "decoder"]}}
    files, _ = run_tables(inst, runs, {"a": {"category": "x"}}, methods=("codar", "codar__x"), ablations=ablations)
    assert [r["Variant"] for r in read_csv(files["table5.csv"]) if r["Scenario"] == "intent"] == ["CoDAR", "no checker"]


def test_table5_without_ablation_runs_says_which_methods_to_add():
    inst = make_instances(4)
    files, _ = run_tables(inst, {("a", "direct"): answers(inst, "a", "direct", lambda k, f: True)}, MODELS)
    assert (
        "add codar and its ablations (codar__wo_step2, codar__wo_steps34, codar__wo_step5) to moca.methods"
        in files["table5.md"]
    )
    assert read_csv(files["table5.csv"]) == [] and files["table5.csv"].startswith(
        "Scenario,Backbone,Variant,Atomic Avg."
    )


def test_table5_has_the_answer_format_line_of_tables_2_to_4_per_row():
    inst = make_instances(10)
    runs = {
        ("a", "codar"): answers(inst, "a", "codar", lambda k, f: k < 6),
        ("a", "codar__wo_step5"): answers(inst, "a", "codar__wo_step5", lambda k, f: k < 4),
    }
    for rec in runs[("a", "codar__wo_step5")][:2]:
        rec["format"] = {"retries": 1, "repairs": ["retry"], "ignored_keys": [], "last_tuple_kept": None}
    files, _ = run_tables(inst, runs, {"a": {"category": "x"}}, methods=("codar", "codar__wo_step5"))
    line = next(x for x in files["table5.md"].splitlines() if x.startswith("Answer format per row"))
    assert "a CoDAR (intent) 0.00 / 0; a w/o Step 5 (intent) 0.00 / 2 (retry 2);" in line
    assert line.endswith("answers.csv has every count (params moca.answer: the same policy for every method).")
    assert r"\footnotesize Answer format per row" in files["table5.tex"]
