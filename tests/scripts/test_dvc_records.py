"""scripts/dvc_records.py: the records file of a good repository, and the parts it is built from (the
lock's outputs, the git checkout). Its bad-input cases (a write target that is a link, outside the
repository or an input; a lock of another shape; no git checkout) run in tests/bad_input/test_scripts.py."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "dvc_records.py"
LOCK = "schema: '2.0'\nstages:\n  moca_infer:\n    cmd: x\n    outs:\n    - path: results/predictions/moca\n"


def _module():
    spec = importlib.util.spec_from_file_location("dvc_records", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "results" / "runs").mkdir(parents=True)
    (root / "results" / "runs" / "a.stats.json").write_text("{}\n")
    (root / "dvc.lock").write_text(LOCK)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_a_good_repository_gets_its_records_file(repo):
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, str(SCRIPT), "--repo", str(repo)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["results/runs"] and "path: results/runs" in (repo / "records.dvc").read_text()


def test_the_lock_outputs_are_every_stages_paths():
    lock = {"stages": {"a": {"outs": [{"path": "x"}, {"path": "y"}]}, "b": {"cmd": "c"}}}
    assert _module().stage_outs(lock) == {"x", "y"}


@pytest.mark.parametrize(
    "lock, says",
    [
        ([1], "dvc.lock: not a dvc.lock"),
        ({"stages": {"s": {"outs": {"path": "x"}}}}, "dvc.lock, stage s: not a stage of dvc.lock"),
        ({"stages": {"s": {"outs": [{"path": ""}]}}}, "dvc.lock, stage s, outs[0]: expected a mapping with a 'path'"),
    ],
    ids=["not-a-mapping", "outs-not-a-list", "empty-path"],
)
def test_a_lock_of_another_shape_names_the_stage_and_entry(lock, says):
    records = _module()
    with pytest.raises(records.LockShape, match=says.replace("[", r"\[").replace("]", r"\]")):
        records.stage_outs(lock)


def test_a_folder_outside_git_has_no_checkout(tmp_path, repo):
    assert _module().git_toplevel(tmp_path) is None and _module().git_toplevel(repo) == repo.resolve()
