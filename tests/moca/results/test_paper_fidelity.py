"""The paper's tables and figures as the paper has them (issue 19, point 5): ablation rows in Table 5
only, the best value per category marked, Table 6 from a declared scaling group through the tables
stage, Figures 6a-d and 7 from params' selections, and the means Figure 9 draws written as numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from socialbench.core.errors import ConfigError
from socialbench.moca.results.settings import TableSettings
from socialbench.moca.results.tables import best_in_category
from tests.moca.results.test_tables import (
    MODELS,
    SCENARIOS,
    answers,
    bench,
    codar_runs,
    make_instances,
    md_row,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")

REPO = Path(__file__).resolve().parents[3]


# ---- rows of Tables 2-4 --------------------------------------------------------------------------
def test_ablation_runs_are_rows_of_table5_only():
    inst = make_instances(10)
    runs = {
        ("a", "direct"): answers(inst, "a", "direct", lambda k, f: k < 3),
        ("a", "codar"): answers(inst, "a", "codar", lambda k, f: k < 6),
        ("a", "codar__wo_step5"): answers(inst, "a", "codar__wo_step5", lambda k, f: k < 4),
    }
    files, _ = run_tables(inst, runs, {"a": {"category": "x"}}, methods=("direct", "codar", "codar__wo_step5"))
    assert [r["model"] for r in read_csv(files["intent.csv"])] == ["a", "a + codar"]
    assert "codar__wo_step5" not in files["intent.md"] + files["intent.ci.csv"]
    assert {r["method"] for r in read_csv(files["tests.csv"]) if r["table"] == "2-4"} == {"codar"}
    assert "w/o Step 5" in files["table5.md"]


# ---- best value per category ---------------------------------------------------------------------
def test_the_best_value_of_each_column_within_a_category_is_marked_ties_included():
    rows = [
        ("open", "a", [10.0, 5.0, None]),
        ("open", "b", [20.0, 5.0, None]),
        ("closed", "c", [1.0, 2.0, 3.0]),
        ("closed", "d", [0.5, None, 4.0]),
    ]
    assert best_in_category(rows) == {("b", 0), ("a", 1), ("b", 1), ("c", 0), ("c", 1), ("d", 2)}


def test_a_category_of_one_row_is_not_marked():
    assert best_in_category([("human", "h", [90.0, 80.0]), ("open", "a", [1.0, 2.0])]) == set()


def test_the_best_values_are_bold_in_markdown_and_latex_and_plain_in_csv():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    assert md_row(files["intent.md"], "a")[2] == "0.00" and md_row(files["intent.md"], "a + codar")[2].startswith(
        "**80.00**"
    )
    assert r"\textbf{80.00}" in files["intent.tex"] and "**" not in files["intent.csv"]
    assert "Bold: the best value of each column within its category." in files["intent.md"]


# ---- Table 6 from a declared scaling group, through the tables stage -----------------------------
def _write_scores(tmp_path: Path, runs: dict) -> list[Path]:
    inst = make_instances()
    paths = []
    for (m, meth), right in runs.items():
        path = tmp_path / "scores" / m / f"{meth}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(bench().eval.score(inst, answers(inst, m, meth, right), source=str(path))))
        paths.append(path)
    return paths


def _tables_stage(tmp_path: Path, tables: str) -> Path:
    from socialbench.stages.tables import render_tables

    scores = _write_scores(
        tmp_path,
        {
            ("s", "direct"): lambda k, f: k < 5 or (f in ("subject", "target") and k < 10),
            ("l", "direct"): lambda k, f: k < 12 or (f in ("subject", "target") and k < 25),
        },
    )
    params = tmp_path / "params.yaml"
    params.write_text(
        "seed: 3\nmodels:\n  s: {backend: random, category: x}\n  l: {backend: random, category: x}\n"
        f"moca: {{methods: [direct], tables: {tables}}}\n"
    )
    out = tmp_path / "tables"
    render_tables("moca", scores, out, tmp_path / "headline.json", params)
    return out


def test_the_tables_stage_fills_table6_from_the_declared_scaling_group(tmp_path):
    out = _tables_stage(tmp_path, "{scaling: [s, l]}")
    rows = read_csv((out / "table6.csv").read_text())
    assert [r["Scenario"] for r in rows] == list(SCENARIOS)
    assert all(float(r["ΔDyad"]) == 50.0 and r["C_sem|dyad s"] == "50.00" for r in rows)
    assert "### Table 6: Within-family scaling from s to l" in (out / "all.md").read_text()


def test_an_empty_table6_names_the_params_entry_that_fills_it(tmp_path):
    out = _tables_stage(tmp_path, "{}")
    assert read_csv((out / "table6.csv").read_text()) == []
    assert "moca.tables.scaling: [smaller, larger]" in (out / "table6.md").read_text()


def _uncommented_tables_examples() -> dict:
    """The commented examples under moca.tables in params.yaml, uncommented and parsed."""
    text = (REPO / "params.yaml").read_text()
    block = text[text.index("  tables:\n") : text.index("  # The real raw sources")]
    lines = [m.group(1) for m in re.finditer(r"^    # ((?:scaling|backbones|figure6|figure7): .*)$", block, re.M)]
    assert len(lines) == 4, lines
    return yaml.safe_load("\n".join(lines))


def test_the_commented_examples_in_params_yaml_are_valid_when_uncommented():
    from socialbench.core.config import validate_params

    examples = _uncommented_tables_examples()
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["moca"]["tables"].update(examples)
    names = {*examples["scaling"], *examples["backbones"], *examples["figure7"]["models"]}
    names |= {m for ms in examples["figure6"].values() for m in ms}
    params["models"].update({m: {"backend": "random", "category": "x"} for m in sorted(names)})
    validate_params(params)
    settings = TableSettings.from_params(params)
    assert settings.scaling == tuple(examples["scaling"]) and [g for g, _ in settings.figure6] == [
        "open-weight",
        "proprietary",
    ]


# ---- params of the figures -----------------------------------------------------------------------
def test_a_figure6_model_not_under_models_is_a_config_error_naming_the_entry():
    with pytest.raises(ConfigError, match=r"moca\.tables\.figure6\.open: 'x' is not a model under models"):
        TableSettings.from_params({"models": {"a": {}}, "moca": {"tables": {"figure6": {"open": ["x"]}}}})


def test_a_model_in_two_figure6_groups_is_a_config_error():
    with pytest.raises(ConfigError, match=r"moca\.tables\.figure6: a in more than one group"):
        TableSettings.from_params({"models": {"a": {}}, "moca": {"tables": {"figure6": {"o": ["a"], "p": ["a"]}}}})


# ---- figures ---------------------------------------------------------------------------------------
def test_figure6_draws_one_panel_per_declared_group_and_keeps_its_data(rasterized_figures):
    inst = make_instances(8)
    runs = codar_runs(inst)
    one, _ = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    grouped, _ = run_tables(
        inst, runs, MODELS, methods=("direct", "codar"), tables={"figure6": {"o": ["a"], "p": ["b"]}}
    )
    assert grouped["figures/fig6_intent.png"] != one["figures/fig6_intent.png"]
    assert grouped["figures/fig6d_holis.png"] != one["figures/fig6d_holis.png"]
    assert grouped["figures/fig6.csv"] == one["figures/fig6.csv"]  # the same rows, drawn in two panels


def test_figure6_plots_only_the_selected_baselines():
    inst = make_instances(8)
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"), tables={"figure6": {"o": ["b"]}})
    assert {r["model"] for r in read_csv(files["figures/fig6.csv"])} == {"b"}


def test_figure7_draws_params_models_in_params_scenario():
    inst = make_instances(8)
    files, _ = run_tables(
        inst,
        codar_runs(inst),
        MODELS,
        methods=("direct", "codar"),
        tables={"figure7": {"models": ["b"], "scenario": "stance"}},
    )
    rows = read_csv(files["figures/fig7.csv"])
    assert {(r["model"], r["scenario"]) for r in rows} == {("b", "stance")} and len(rows) == 7


def test_figure7_without_models_is_drawn_empty_with_its_data_empty(rasterized_figures):
    inst = make_instances(4)
    files, _ = run_tables(inst, {("a", "direct"): answers(inst, "a", "direct", lambda k, f: True)}, MODELS)
    assert files["figures/fig7.png"].startswith(b"\x89PNG") and read_csv(files["figures/fig7.csv"]) == []


def test_figure9_means_are_written_as_numbers_per_scenario_and_over_all_pairs():
    inst = make_instances()
    files, scores = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    rows = {r["Scenario"]: r for r in read_csv(files["figures/fig9_means.csv"])}
    gain = {
        (b, s): scores[(b, "codar")][s]["dyad"] - scores[(b, "direct")][s]["dyad"]
        for b in ("a", "b")
        for s in SCENARIOS
    }
    assert float(rows["intent"]["ΔDyad"]) == pytest.approx((gain[("a", "intent")] + gain[("b", "intent")]) / 2)
    assert float(rows["all (4 pairs)"]["ΔDyad"]) == pytest.approx(sum(gain.values()) / 4)
    assert "### Figure 9: mean CoDAR gain over the backbones (points)" in files["all.md"]


def test_figure9_means_follow_the_named_backbones():
    inst = make_instances()
    files, scores = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"), tables={"backbones": ["b"]})
    intent = next(r for r in read_csv(files["figures/fig9_means.csv"]) if r["Scenario"] == "intent")
    assert float(intent["ΔDyad"]) == 0.0 and "Backbones: b (moca.tables.backbones)." in files["figures/fig9_means.md"]
    assert {r["backbone"] for r in read_csv(files["figures/fig9.csv"])} == {"b"}
