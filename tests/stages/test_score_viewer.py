"""socialbench score and viewer over several runs (``--results-dir``, ``--run MODEL/METHOD``): one process,
the results layout, each run's file the same bytes as the single-run form writes."""

import pytest
from typer.testing import CliRunner

from socialbench.cli import app
from socialbench.core.errors import SocialbenchError
from tests.stages.conftest import infer, method_args

runner = CliRunner()
RUNS = ("r/direct", "r/codar", "s/direct")


@pytest.fixture
def results(tmp_path, inputs):
    """(instances, results root) holding the predictions and traces of RUNS."""
    inst, params = inputs
    for model, methods in (("r", ("direct", "codar")), ("s", ("direct",))):
        res = infer(inst, params, "--model", model, "--results-dir", str(tmp_path / "results"), *method_args(methods))
        assert res.exit_code == 0, res.output
    return inst, tmp_path / "results"


def run_args(runs):
    return [a for r in runs for a in ("--run", r)]


def test_score_writes_each_runs_scores_where_the_layout_puts_them(results):
    inst, root = results
    args = ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), *run_args(RUNS)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert sorted(p.relative_to(root / "scores").as_posix() for p in root.glob("scores/**/*.json")) == [
        "moca/r/codar.json",
        "moca/r/direct.json",
        "moca/s/direct.json",
    ]


def test_score_of_several_runs_writes_the_bytes_of_single_runs(tmp_path, results):
    inst, root = results
    res = runner.invoke(
        app, ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), *run_args(RUNS)]
    )
    assert res.exit_code == 0, res.output
    for run in RUNS:
        model, method = run.split("/")
        single = tmp_path / "single" / f"{model}-{method}.json"
        pred = root / "predictions" / "moca" / model / f"{method}.jsonl"
        args = ["score", "--benchmark", "moca", "--instances", str(inst), "--predictions", str(pred)]
        res = runner.invoke(app, [*args, "--out", str(single)])
        assert res.exit_code == 0, res.output
        assert single.read_bytes() == (root / "scores" / "moca" / model / f"{method}.json").read_bytes()


def test_score_checks_each_runs_records_are_of_that_run(tmp_path, results):
    inst, root = results
    wrong = root / "predictions" / "moca" / "s" / "codar.jsonl"
    wrong.write_bytes((root / "predictions" / "moca" / "s" / "direct.jsonl").read_bytes())  # s/direct's records
    args = ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), "--run", "s/codar"]
    res = runner.invoke(app, args)
    assert isinstance(res.exception, SocialbenchError) and "field 'method'" in str(res.exception)


@pytest.mark.parametrize("run", ["direct", "r/", "r/direct/x"])
def test_a_run_that_is_not_model_slash_method_is_refused(results, run):
    inst, root = results
    args = ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), "--run", run]
    res = runner.invoke(app, args)
    assert isinstance(res.exception, SocialbenchError) and "MODEL/METHOD" in str(res.exception)


def test_score_run_without_results_dir_is_refused(results):
    inst, _ = results
    res = runner.invoke(app, ["score", "--benchmark", "moca", "--instances", str(inst), "--run", "r/direct"])
    assert isinstance(res.exception, SocialbenchError) and "--results-dir" in str(res.exception)


def test_viewer_writes_each_runs_page_and_shards_with_the_bytes_of_single_runs(tmp_path, results):
    inst, root = results
    args = ["viewer", "--benchmark", "moca", "--instances", str(inst), "--media-root", str(tmp_path)]
    res = runner.invoke(app, [*args, "--results-dir", str(root), *run_args(RUNS)])
    assert res.exit_code == 0, res.output
    for run in RUNS:
        model, method = run.split("/")
        single = tmp_path / "single" / model / f"{method}.html"
        res = runner.invoke(
            app,
            [
                *args,
                "--predictions",
                str(root / "predictions" / "moca" / model / f"{method}.jsonl"),
                "--traces",
                str(root / "traces" / "moca" / model / f"{method}.jsonl"),
                "--out",
                str(single),
            ],
        )
        assert res.exit_code == 0, res.output
        page = root / "viewer" / "moca" / model / f"{method}.html"
        assert single.read_bytes() == page.read_bytes()
        shards = sorted((page.parent / f"{method}.shards").iterdir())
        assert shards and [p.read_bytes() for p in shards] == [
            (single.parent / f"{method}.shards" / p.name).read_bytes() for p in shards
        ]


def test_viewer_results_dir_with_out_is_refused(tmp_path, results):
    inst, root = results
    args = ["viewer", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root)]
    res = runner.invoke(app, [*args, "--run", "r/direct", "--out", str(tmp_path / "p.html")])
    assert isinstance(res.exception, SocialbenchError) and not (tmp_path / "p.html").exists()
