"""``socialbench commit`` (src/socialbench/stages/commit.py): the closing commit, run as the workflow runs it. Its
work is tested in tests/results/test_commit.py, its refusals in tests/bad_input/test_data.py."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from socialbench.stages.commit import app


def test_a_repository_without_stages_commits_none_and_says_where(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=tmp_path, check=True)
    res = CliRunner().invoke(app, ["--repo", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == f"commit: 0 stage(s) recorded in {tmp_path / 'dvc.lock'}"
