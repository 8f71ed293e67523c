"""``socialbench prune-outputs`` and ``socialbench prune-lock`` (src/socialbench/stages/prune.py): the
commands over results/prune.py, whose pruning rules tests/results/test_prune.py tests."""

import json

from typer.testing import CliRunner

from socialbench.cli import app
from socialbench.core.errors import ConfigError
from tests.results.test_prune import make_results


def test_prune_outputs_command_appends_its_report_with_reasons(tmp_path, repo_root):
    results = tmp_path / "results"
    make_results(results, [("prior", "direct"), ("gone", "direct")])
    report = tmp_path / "pruned.jsonl"
    res = CliRunner().invoke(
        app,
        [
            "prune-outputs",
            "--benchmark",
            "moca",
            "--params",
            str(repo_root / "params.yaml"),
            "--results",
            str(results),
            "--report",
            str(report),
        ],
    )
    assert res.exit_code == 0, res.output
    records = [json.loads(line) for line in report.read_text().splitlines()]
    assert {r["reason"] for r in records} == {"model gone is not in params.yaml models"} and len(records) == 3


def test_prune_outputs_command_refuses_an_unknown_kind_naming_it(tmp_path, repo_root):
    args = ["prune-outputs", "--benchmark", "moca", "--params", str(repo_root / "params.yaml")]
    res = CliRunner().invoke(app, [*args, "--results", str(tmp_path / "results"), "--kind", "pages"])
    assert isinstance(res.exception, ConfigError) and "--kind pages is no result kind" in str(res.exception)


def test_prune_lock_of_a_repository_without_a_lock_drops_nothing_and_says_so(tmp_path):
    (tmp_path / ".dvc").mkdir()
    res = CliRunner().invoke(app, ["prune-lock", "--repo", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == f"prune-lock: 0 stale stage(s) dropped from {tmp_path / 'dvc.lock'}"
