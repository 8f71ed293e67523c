"""Tables 2-4 (socialbench.moca.results.tables): rows, formats, N and media notes, and the files of the
tables stage as a whole."""

import json

import pytest

from socialbench.core.errors import ConfigError
from socialbench.moca.results.paper import PaperTables
from socialbench.moca.results.settings import TableSettings
from socialbench.moca.results.tables import exclusions_table, scenario_table
from socialbench.results import tables as rt
from tests.moca.results.paper_runs import (
    MODELS,
    SCENARIOS,
    answers,
    bench,
    bench_tables,
    codar_runs,
    make_instances,
    md_row,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def to_markdown(*args, **kw) -> str:
    return rt.to_markdown(scenario_table(*args, **kw))


def to_latex(*args, **kw) -> str:
    return rt.to_latex(scenario_table(*args, **kw))


def to_csv(rows) -> str:
    return rt.to_csv(scenario_table("", rows))


def build_rows(scores, categories, scenario):
    """A scenario table's rows as the tables stage orders them."""
    return PaperTables(scores, categories, [], TableSettings()).named_rows(scenario)


def exclusions_markdown(params, methods) -> str:
    t = exclusions_table(params, methods)
    return "" if t is None else rt.to_markdown(t)


SC = {
    "label": 10.0,
    "subject": 20.0,
    "target": 30.0,
    "mechanism": 40.0,
    "dyad": 5.0,
    "faith": None,
    "holis": 1.25,
    "n": 4,
}


def test_rows_grouped_by_category_in_params_order():
    scores = {("b", "direct"): {"intent": SC}, ("a", "direct"): {"intent": SC}, ("c", "direct"): {"intent": SC}}
    cats = {"a": "open-weight", "b": "baseline", "c": "open-weight"}
    rows = build_rows(scores, cats, "intent")
    assert [(cat, name) for cat, name, _ in rows] == [("open-weight", "a"), ("open-weight", "c"), ("baseline", "b")]


def test_method_other_than_direct_is_suffixed():
    rows = build_rows({("a", "codar"): {"intent": SC}}, {"a": "x"}, "intent")
    assert rows[0][1] == "a + codar"


def test_formats_carry_the_paper_columns_and_null_faith():
    rows = build_rows({("a", "direct"): {"intent": SC}}, {"a": "baseline"}, "intent")
    md = to_markdown("intent", rows, 4)
    assert (
        "| Lab | Subj | Tgt | Mech | Dyad | Faith | Holis |" in md
        and "| 10.00 | 20.00 | 30.00 | 40.00 | 5.00 | – | 1.25 |" in md
    )
    assert to_csv(rows).splitlines()[1] == "baseline,a,10.00,20.00,30.00,40.00,5.00,,1.25"
    tex = to_latex("intent", rows)
    assert r"\toprule" in tex and r"\bottomrule" in tex and "-- & 1.25" in tex


def test_a_pipe_in_a_category_does_not_add_a_markdown_column():
    from socialbench.moca.results.tables import COLUMNS

    md = to_markdown("intent", [("R&D | lab", "m", [1.0] * len(COLUMNS))])
    row = md.strip().splitlines()[-1]
    assert "R&D \\| lab" in row and row.replace("\\|", "").count("|") == len(COLUMNS) + 3


def test_excluded_methods_are_named_with_their_reason_once():
    params = {"models": {"random": {"exclude_methods": {"codar": "a chance row cannot follow a chain"}}, "m": {}}}
    md = exclusions_markdown(params, ["direct", "codar"])
    assert "random + codar: not run (a chance row cannot follow a chain)" in md
    assert exclusions_markdown(params, ["direct"]) == ""


def test_a_model_kept_off_the_benchmark_is_not_listed_as_excluded():
    params = {"models": {"t": {"benchmarks": ["meetingtom"]}, "m": {}}}
    assert exclusions_markdown(params, ["direct"]) == ""


def test_a_pair_excluded_in_params_has_no_row_and_no_headline_and_its_reason_once_in_all_md():
    params = {
        "models": {
            "a": {"category": "baseline"},
            "r": {"category": "baseline", "exclude_methods": {"direct": "chance only"}},
        },
        "moca": {"methods": ["direct"]},
    }
    files, headline = bench_tables({("a", "direct"): {"intent": SC}}, params)
    assert "| r |" not in files["intent.md"] and "not run" not in files["intent.md"]
    assert files["all.md"].count("r: not run (chance only)") == 1
    assert set(headline) == {"a.direct"}


# ---- N and the instances whose media failed at evaluation time, under each table -------------
def _two_rows():
    return build_rows(
        {("a", "direct"): {"intent": SC}, ("b", "direct"): {"intent": SC}}, {"a": "x", "b": "x"}, "intent"
    )


def test_the_table_states_n_and_that_no_media_failed():
    md = to_markdown("intent", _two_rows(), 4, {"a": 0, "b": 0})
    assert md.rstrip().endswith("N = 4 per row; no instance had media that failed at evaluation time.")


def test_the_table_states_how_many_instances_had_media_that_failed():
    md = to_markdown("intent", _two_rows(), 4, {"a": 1, "b": 1})
    assert "N = 4 per row; 1 of them had media that failed at evaluation time (kept, scored invalid)." in md
    tex = to_latex("intent", _two_rows(), 4, {"a": 1, "b": 1})
    assert r"\footnotesize N = 4 per row; 1 of them had media" in tex and tex.index("footnotesize") < tex.index(
        r"\end{table}"
    )


def test_rows_with_different_media_failures_are_listed_one_by_one():
    md = to_markdown("intent", _two_rows(), 4, {"a": 1, "b": 0})
    assert "(kept, scored invalid): a 1, b 0." in md


def test_a_codar_row_shows_its_signed_change_over_its_backbone_with_the_test_mark():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    row = md_row(files["intent.md"], "a + codar")
    # Lab: 80.00 against 0.00 on 30 instances, 24 discordant pairs: McNemar p ~ 1e-7, significant after Holm
    assert row[2] == "**80.00** (+80.00\\*)"  # bold: the best Lab of its category
    assert md_row(files["intent.md"], "b + codar")[2] == "**50.00** (±0.00)"  # tied with b: both marked
    assert md_row(files["intent.md"], "a")[2] == "0.00"  # the backbone row itself has no change
    assert r"\textbf{80.00} (+80.00$^{*}$)" in files["intent.tex"]


def test_direct_rows_come_before_their_methods_and_the_csv_keeps_plain_numbers():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    names = [r["model"] for r in read_csv(files["intent.csv"])]
    assert names == ["a", "a + codar", "b", "b + codar"]
    assert read_csv(files["intent.csv"])[1]["Lab"] == "80.00"


def test_tables_2_to_4_change_only_by_the_notes_added_under_them():
    # The demo's tables (no human model, no codar): the table itself and its N line are as before.
    inst = make_instances()
    runs = {
        ("r", "direct"): answers(inst, "r", "direct", lambda k, f: k % 3 == 0),
        ("p", "direct"): answers(inst, "p", "direct", lambda k, f: k % 4 == 0),
    }
    models = {"r": {"category": "baseline"}, "p": {"category": "baseline"}}
    files, scores = run_tables(inst, runs, models)
    rows = build_rows(scores, {m: e["category"] for m, e in models.items()}, "intent")
    before = to_markdown("intent", rows, 30, {"r": 0, "p": 0})
    assert files["intent.md"].startswith(before)
    assert files["intent.csv"] == to_csv(rows) and files["intent.tex"] == to_latex("intent", rows, 30, {"r": 0, "p": 0})
    assert files["all.md"].startswith(files["affection.md"] if "affection.md" in files else files["intent.md"])


def test_all_tables_are_in_all_md_and_every_declared_output_is_written():
    from socialbench.moca.results.tables import output_files

    inst = make_instances(6)
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    assert set(files) == set(output_files(SCENARIOS))
    assert all(f"### Table {t}" in files["all.md"] for t in (5, 6, 7))


def test_the_same_inputs_give_the_same_bytes_in_every_file():
    inst = make_instances(8)
    first, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    again, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    assert first == again


def test_the_tables_command_reads_instances_and_outcomes_and_writes_tables_intervals_and_figures(
    tmp_path, rasterized_figures
):
    from typer.testing import CliRunner

    from socialbench.cli import app

    inst = make_instances(6)
    runs = codar_runs(inst)
    (tmp_path / "i.jsonl").write_text("".join(json.dumps(i) + "\n" for i in inst))
    scores = []
    for (m, meth), recs in runs.items():
        outcomes = tmp_path / "outcomes" / m / f"{meth}.jsonl"
        outcomes.parent.mkdir(parents=True, exist_ok=True)
        outcomes.write_text(
            "".join(json.dumps(r) + "\n" for r in bench().eval.score_with_outcomes(inst, recs, source="p.jsonl")[1])
        )
        scores.append(tmp_path / "scores" / m / f"{meth}.json")
        scores[-1].parent.mkdir(parents=True, exist_ok=True)
        scores[-1].write_text(json.dumps(bench().eval.score(inst, recs, source="p.jsonl")))
    (tmp_path / "params.yaml").write_text(
        "seed: 3\nmodels:\n  a: {backend: scripted, category: x}\n  b: {backend: scripted, category: y}\n"
        "moca: {methods: [direct, codar], tables: {resamples: 1000}}\n"
    )
    args = [
        "tables",
        "--benchmark",
        "moca",
        "--params",
        str(tmp_path / "params.yaml"),
        "--out-dir",
        str(tmp_path / "t"),
        "--headline",
        str(tmp_path / "h.json"),
        *map(str, scores),
    ]
    alone = CliRunner().invoke(app, [*args, "--instances", str(tmp_path / "i.jsonl")])
    assert isinstance(alone.exception, ConfigError) and "--instances and --outcomes-dir go together" in str(
        alone.exception
    )
    res = CliRunner().invoke(
        app, [*args, "--instances", str(tmp_path / "i.jsonl"), "--outcomes-dir", str(tmp_path / "outcomes")]
    )
    assert res.exit_code == 0, res.output
    out = tmp_path / "t"
    assert (out / "figures" / "fig9_gains.png").read_bytes().startswith(b"\x89PNG")
    assert len(read_csv((out / "intent.ci.csv").read_text())) == 4 * 9 and read_csv((out / "tests.csv").read_text())


def test_a_row_on_fewer_instances_than_the_table_prints_its_own_n():
    rows = build_rows(
        {("a", "direct"): {"intent": SC}, ("b", "direct"): {"intent": SC}}, {"a": "x", "b": "x"}, "intent"
    )
    md = to_markdown("intent", rows, 4, {"a": 0, "b": 0}, row_n={"a": 4, "b": 3})
    assert "N = 4 per row (but b: N = 3); no instance had media that failed at evaluation time." in md
    assert "(but" not in to_markdown("intent", rows, 4, {"a": 0, "b": 0}, row_n={"a": 4, "b": 4})


def test_a_scenario_table_notes_the_rows_whose_runs_sent_no_temperature():
    params = {
        "models": {"c": {"backend": "anthropic", "category": "x"}, "a": {"backend": "random", "category": "x"}},
        "moca": {"methods": ["direct"]},
    }
    files, _ = bench_tables({("c", "direct"): {"intent": SC}, ("a", "direct"): {"intent": SC}}, params)
    assert "No temperature sent: c (the anthropic API takes none)." in files["intent.md"]
    alone, _ = bench_tables({("a", "direct"): {"intent": SC}}, params)
    assert "temperature" not in alone["intent.md"]


def test_a_scenario_table_notes_the_rows_whose_server_ignored_json_mode():
    params = {
        "models": {
            "s": {"backend": "transformers_serve", "category": "x", "model_id": "m"},
            "a": {"backend": "random", "category": "x"},
        },
        "moca": {"methods": ["direct"]},
    }
    files, _ = bench_tables({("s", "direct"): {"intent": SC}, ("a", "direct"): {"intent": SC}}, params)
    assert "JSON mode not enforced: s (transformers serve ignores response_format)." in files["intent.md"]
    alone, _ = bench_tables({("a", "direct"): {"intent": SC}}, params)
    assert "JSON mode" not in alone["intent.md"]
