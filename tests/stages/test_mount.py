"""``socialbench`` mounts its commands lazily (src/socialbench/cli.py): running a command imports its
stage module and what that stage uses, nothing else, so each stage's dependencies are its own."""

import json
import subprocess
import sys

import pytest

from tests.stages.conftest import method_args

#: What inference never uses: the tracking, tables, viewer and book code, and a benchmark's data
#: building and report code.
NOT_INFER = [
    "mlflow",
    "socialbench.results.scores",
    "socialbench.results.viewer",
    "socialbench.results.viewer_html",
    "socialbench.results.viewer_media",
    "socialbench.results.viewer_page",
    "socialbench.results.tracking",
    "socialbench.results.book",
    "socialbench.results.stats",
    "socialbench.moca.dataset",
    "socialbench.moca.results",
    "socialbench.meetingtom.dataset",
    "socialbench.meetingtom.results",
    "socialbench.stages.score",
    "socialbench.stages.track",
    "socialbench.stages.tables",
    "socialbench.stages.viewer",
]

PROBE = """
import json, sys
from socialbench.cli import main
sys.argv = ["socialbench", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(m for m in sys.modules if m.startswith(("socialbench", "mlflow")))}))
"""


def imported_by(args, cwd=None):
    """(exit code, the socialbench and mlflow modules imported) of ``socialbench ARGS`` in a fresh process
    (run from ``cwd``, the folder its relative paths are read from)."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps([str(a) for a in args])],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["code"], set(result["modules"])


def loaded(modules, names):
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


@pytest.mark.parametrize("command", ["infer", "score"])
def test_a_commands_help_imports_only_its_stage(command):
    code, modules = imported_by([command, "--help"])
    assert code == 0 and f"socialbench.stages.{command}" in modules
    assert loaded(modules, [m for m in NOT_INFER if m != f"socialbench.stages.{command}"]) == []


def test_an_infer_run_imports_nothing_inference_does_not_use(tmp_path, inputs):
    inst, params = inputs
    args = ["infer", "--benchmark", "moca", "--instances", inst, "--params", params, "--model", "r", "--no-progress"]
    code, modules = imported_by(
        [*args, "--results-dir", tmp_path / "results", *method_args(["direct", "codar"])], cwd=tmp_path
    )
    assert code == 0 and (tmp_path / "results" / "predictions" / "moca" / "r" / "codar.jsonl").is_file()
    assert loaded(modules, NOT_INFER) == []


def test_the_command_list_imports_no_stage():
    code, modules = imported_by(["--help"])
    assert code == 0 and loaded(modules, ["socialbench.stages", "socialbench.moca.cli", "socialbench.media"]) == []


def test_the_command_list_names_every_command():
    from typer.testing import CliRunner

    from socialbench.cli import COMMANDS, SUB_APPS, app

    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert all(f" {name} " in out for name in [*COMMANDS, *SUB_APPS, "moca", "meetingtom"]), out


def test_a_mistyped_command_is_answered_with_the_nearest_one():
    from typer.testing import CliRunner

    from socialbench.cli import app

    res = CliRunner().invoke(app, ["infr"])
    assert res.exit_code == 2 and "Did you mean 'infer'?" in res.output
