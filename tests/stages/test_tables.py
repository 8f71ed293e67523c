"""``socialbench tables`` (src/socialbench/stages/tables.py): the tables and headline from score files;
a bad score file is one clear error and nothing is half-written; order runs (params robustness,
``<run>__order<k>``) reach the stability tables only, never the paper tables or the headline."""

import json

import pytest

from socialbench.cli import app
from socialbench.core.benchmarks import register
from socialbench.core.errors import SocialbenchError
from socialbench.core.subset import SubsetInfo
from socialbench.stages.tables import render_tables, with_subset_note
from tests.helpers.toybench.benchmark import ToyBenchmark
from tests.stages.conftest import cli_params, metrics, runner, score_file


def tables_args(tmp_path, *score_paths):
    return [
        "tables",
        "--benchmark",
        "moca",
        "--params",
        str(cli_params(tmp_path)),
        "--out-dir",
        str(tmp_path / "tables"),
        "--headline",
        str(tmp_path / "head.json"),
        *map(str, score_paths),
    ]


def test_tables_writes_every_scenario_from_good_score_files(tmp_path):
    a = score_file(tmp_path, "a", {"intent": metrics(), "stance": metrics()})
    b = score_file(tmp_path, "b", {"intent": metrics(20.0), "stance": metrics()})
    res = runner.invoke(app, tables_args(tmp_path, a, b))
    assert res.exit_code == 0, res.output
    from socialbench.moca.results.stability import output_files as stability_files
    from socialbench.moca.results.tables import output_files

    assert {p.name for p in (tmp_path / "tables").iterdir()} == {
        f.split("/")[0] for f in [*output_files(["intent", "stance"]), *stability_files()]
    }
    assert set(json.loads((tmp_path / "head.json").read_text())) == {"a.direct", "b.direct"}


def bad_metric_missing():
    m = metrics()
    del m["holis"]
    return {"intent": metrics(), "stance": m}


@pytest.mark.parametrize(
    "content, where",
    [
        ('{"intent": {"label": 5', "not valid JSON"),
        ({}, "no scenarios"),
        ({"intent": 5}, "record scenario 'intent': must be an object"),
        ({"intent": {**metrics(), "holis": "high"}}, "record scenario 'intent', field 'holis'"),
        (bad_metric_missing(), "record scenario 'stance', field 'holis': missing"),
    ],
    ids=["truncated", "empty-object", "scenario-is-a-number", "string-metric", "missing-metric"],
)
def test_tables_bad_score_file_is_an_error_and_writes_nothing(tmp_path, content, where):
    good = score_file(tmp_path, "a", {"intent": metrics(), "stance": metrics()})
    bad = score_file(tmp_path, "b", content)
    res = runner.invoke(app, tables_args(tmp_path, good, bad))
    assert isinstance(res.exception, SocialbenchError), res.exception
    assert str(res.exception).startswith(str(bad)) and where in str(res.exception), res.exception
    assert not (tmp_path / "tables").exists() and not (tmp_path / "head.json").exists()


def test_tables_score_file_of_a_model_not_in_params_is_an_error(tmp_path):
    ghost = score_file(tmp_path, "ghost", {"intent": metrics()})
    res = runner.invoke(app, tables_args(tmp_path, ghost))
    assert isinstance(res.exception, SocialbenchError) and "model 'ghost'" in str(res.exception)
    assert not (tmp_path / "tables").exists()


def test_tables_missing_score_file_is_an_error_and_writes_nothing(tmp_path):
    good = score_file(tmp_path, "a", {"intent": metrics()})
    res = runner.invoke(app, tables_args(tmp_path, good, tmp_path / "scores" / "b" / "direct.json"))
    assert isinstance(res.exception, SocialbenchError) and "score file not found" in str(res.exception)
    assert not (tmp_path / "tables").exists()


def test_tables_put_the_macro_over_scenarios_beside_the_per_scenario_scores(tmp_path):
    a = score_file(tmp_path, "a", {"intent": metrics(10.0), "stance": metrics(20.0)})
    res = runner.invoke(app, tables_args(tmp_path, a))
    assert res.exit_code == 0, res.output
    head = json.loads((tmp_path / "head.json").read_text())["a.direct"]
    assert head["overall"] == {"dyad": 25.0, "faith": None, "holis": 15.0}
    all_md = (tmp_path / "tables" / "all.md").read_text()
    assert "### Overall: macro over scenarios (intent, stance; N = 3 each)" in all_md
    assert "| baseline | a | 50.00 | 50.00 | 50.00 | 50.00 | 25.00 | – | 15.00 |" in all_md


def test_every_markdown_and_latex_table_of_a_subset_run_says_so():
    info = SubsetInfo(n=10, seed=1, total=0, taken=0, by="scenario")
    files = with_subset_note({"a.md": "| x |\n", "a.tex": "\\begin{tabular}\n", "a.csv": "x\n", "f.png": b"."}, info)
    assert "not full-run numbers" in files["a.md"] and "not full-run numbers" in files["a.tex"]
    assert files["a.csv"] == "x\n" and files["f.png"] == b"."
    assert with_subset_note({"a.md": "| x |\n"}, None) == {"a.md": "| x |\n"}


# ---- order runs (params robustness, issue 34) ---------------------------------------------------------
def _scores(root, run, accuracy):
    path = root / "scores" / "toybench" / "r" / f"{run}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"all": {"accuracy": accuracy, "n": 2}}))
    return path


def _render(tmp_path, name, scores):
    params = tmp_path / "params.yaml"
    params.write_text("seed: 1\nmodels: {r: {backend: random, category: baseline}}\ntoybench: {methods: [direct]}\n")
    out = tmp_path / name
    render_tables("toybench", scores, out / "tables", out / "headline.json", params)
    return (out / "tables" / "accuracy.md").read_bytes(), json.loads((out / "headline.json").read_text())


def test_order_runs_leave_the_paper_tables_and_the_headline_byte_identical(tmp_path):
    register(ToyBenchmark)
    paper = _scores(tmp_path, "direct", 50.0)
    orders = [_scores(tmp_path, "direct__order1", 0.0), _scores(tmp_path, "direct__order2", 100.0)]
    alone, head_alone = _render(tmp_path, "alone", [paper])
    with_orders, head = _render(tmp_path, "with", [paper, *orders])
    assert with_orders == alone and b"order" not in with_orders
    assert head == head_alone == {"r.direct": 50.0}
