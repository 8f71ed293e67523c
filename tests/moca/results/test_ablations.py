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


# ---- one backbone in Table 5, as the paper's (issue 40, point 9) -----------------------------------
def two_backbones(inst):
    return {
        (m, meth): answers(inst, m, meth, lambda k, f: k < 2)
        for m in ("a", "b")
        for meth in ("codar", "codar__wo_step5")
    }


MODELS_AB = {"a": {"category": "x"}, "b": {"category": "x"}}


def test_table5_holds_the_named_backbone_and_the_others_go_to_the_extra_table():
    inst = make_instances(4)
    methods = ("codar", "codar__wo_step5")
    files, _ = run_tables(inst, two_backbones(inst), MODELS_AB, {"ablation_backbone": "b"}, methods=methods)
    assert {r["Backbone"] for r in read_csv(files["table5.csv"])} == {"b"}
    assert {r["Backbone"] for r in read_csv(files["table5_other_backbones.csv"])} == {"a"}
    assert "Backbone:" not in files["table5.md"]  # named: no note on how it was chosen


def test_without_a_named_backbone_table5_takes_the_first_and_says_so():
    inst = make_instances(4)
    files, _ = run_tables(inst, two_backbones(inst), MODELS_AB, methods=("codar", "codar__wo_step5"))
    assert {r["Backbone"] for r in read_csv(files["table5.csv"])} == {"a"}
    assert "Backbone: a, the first model with codar and ablation runs" in files["table5.md"]
    assert "b in table5_other_backbones" in files["table5.md"]


def test_the_extra_table_says_when_no_other_backbone_has_ablations():
    inst = make_instances(4)
    runs = {("a", m): answers(inst, "a", m, lambda k, f: True) for m in ("codar", "codar__wo_step5")}
    files, _ = run_tables(inst, runs, {"a": {"category": "x"}}, methods=("codar", "codar__wo_step5"))
    assert read_csv(files["table5_other_backbones.csv"]) == []
    assert "No rows: no model but Table 5's (a) has codar and ablation runs." in files["table5_other_backbones.md"]


def test_a_named_backbone_without_ablation_runs_leaves_table5_empty_and_says_why():
    inst = make_instances(4)
    models = {**MODELS_AB, "c": {"category": "x"}}
    files, _ = run_tables(
        inst, two_backbones(inst), models, {"ablation_backbone": "c"}, methods=("codar", "codar__wo_step5")
    )
    assert read_csv(files["table5.csv"]) == []
    assert "No rows: c (moca.tables.ablation_backbone) has no codar and ablation runs." in files["table5.md"]
    assert {r["Backbone"] for r in read_csv(files["table5_other_backbones.csv"])} == {"a", "b"}
