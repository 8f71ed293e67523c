"""socialbench score over several runs (``--results-dir``, ``--run MODEL/METHOD``): one process, the results
layout, each run's file the same bytes as the single-run form writes."""

import pytest

from socialbench.cli import app
from socialbench.core.errors import SocialbenchError
from tests.stages.conftest import RUNS, run_args, runner


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
