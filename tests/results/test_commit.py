"""The closing commit (src/socialbench/results/commit.py): DVC's own commit, each params file and git's index read
once, on a small DVC repository the tests make (git and DVC initialised, two stages, their outputs written)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import dvc.dependency.param as param
import dvc.utils.serialize._yaml as dvc_yaml
import pytest
from dvc.fs import LocalFileSystem
from scmrepo.git.backend.dulwich import DulwichBackend

from socialbench.core.errors import DataError
from socialbench.results.commit import commit_outputs, read_once

STAGES = """stages:
  first:
    cmd: echo first
    deps: [data/in.txt]
    params: [seed, model.name]
    outs: [data/mid]
  second:
    cmd: echo second
    deps: [data/mid]
    params: [model]
    outs: [results/out.json]
"""


def _run(root: Path, *argv: str) -> None:
    subprocess.run(argv, cwd=root, check=True, capture_output=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A DVC repository whose two stages' outputs exist and are not yet committed."""
    root = tmp_path_factory.mktemp("commit") / "repo"
    (root / "data" / "mid").mkdir(parents=True)
    (root / "results").mkdir()
    (root / "data" / "in.txt").write_text("in\n")
    (root / "data" / "mid" / "a.txt").write_text("a\n")
    (root / "results" / "out.json").write_text("{}\n")
    (root / "params.yaml").write_text("seed: 7\nmodel: {name: m, size: 2}\n")
    (root / "dvc.yaml").write_text(STAGES)
    _run(root, "git", "init", "-q")
    _run(root, sys.executable, "-m", "dvc", "init", "-q")
    _run(root, sys.executable, "-m", "dvc", "config", "core.analytics", "false")
    _run(root, "git", "add", ".dvc", "dvc.yaml", "params.yaml", "data/in.txt")  # the outputs are DVC's
    return root


def test_the_lock_is_the_one_dvc_commit_writes(built, tmp_path):
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    shutil.copytree(built, theirs, symlinks=True)
    shutil.copytree(built, ours, symlinks=True)
    _run(theirs, sys.executable, "-m", "dvc", "commit", "--force", "--no-relink", "--quiet")
    assert commit_outputs(ours) == 2
    assert (ours / "dvc.lock").read_bytes() == (theirs / "dvc.lock").read_bytes()
    assert (ours / "data" / ".gitignore").read_text() == (theirs / "data" / ".gitignore").read_text()


def test_each_params_file_is_read_once_while_it_is_unchanged(built, monkeypatch):
    reads = []
    real = param.read_param_file
    monkeypatch.setattr(param, "read_param_file", lambda *a, **k: reads.append(a[1]) or real(*a, **k))
    fs = LocalFileSystem()
    path = str(built / "params.yaml")
    with read_once():
        assert [param.read_param_file(fs, path, ["seed"]) for _ in range(3)] == [{"seed": 7}] * 3
    assert reads == [path]


def test_dvc_lock_is_parsed_plainly_for_its_rewrite_and_other_yaml_files_round_trip():
    text = "schema: '2.0'\nstages:\n  a:\n    cmd: echo  # a comment\n"
    with read_once():
        lock = dvc_yaml.parse_yaml_for_update(text, "x/dvc.lock")
        other = dvc_yaml.parse_yaml_for_update(text, "dvc.yaml")
    assert type(lock) is dict and lock["stages"] == {"a": {"cmd": "echo"}}
    assert type(other) is not dict and hasattr(other, "ca")  # ruamel's round-trip map keeps the comment


def test_dvcs_own_readers_are_back_afterwards():
    before = (param.read_param_file, DulwichBackend.is_tracked, dvc_yaml.parse_yaml_for_update)
    with pytest.raises(RuntimeError), read_once():
        raise RuntimeError("a failed commit")
    assert (param.read_param_file, DulwichBackend.is_tracked, dvc_yaml.parse_yaml_for_update) == before


def test_a_folder_that_is_no_dvc_repository_is_refused_naming_it(tmp_path):
    with pytest.raises(DataError, match=f"{tmp_path}: not a DVC repository"):
        commit_outputs(tmp_path)
