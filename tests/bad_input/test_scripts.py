"""Bad input to the DVC scripts (docs/bad-input.md, the scripts' table: "scripts: write target",
"scripts: no traceback"), run as a user runs them: a subprocess in the small repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bad_input.cases import (
    REPO,
    Case,
    link_out,
    snapshot,
    write,
)

# The DVC scripts: run as a user runs them (a subprocess, from the repository), by their own runner.
DVC_LOCK = "schema: '2.0'\nstages:\n  s:\n    cmd: x\n    outs:\n    - path: results/tables\n"


def dvc_repo(lock: str = DVC_LOCK, git: bool = True, prep: Callable[[Path], None] | None = None):
    """The small repository as a git checkout with a dvc.lock, and scripts/dvc_records.py run in it."""

    def setup(root: Path) -> list[str]:
        write("dvc.lock", lock)
        if git:
            subprocess.run(["git", "init", "-q", str(root)], check=True)
        if prep:
            prep(root)
        return [str(REPO / "scripts" / "dvc_records.py"), "--repo", "."]

    return setup


def with_args(setup: Callable[[Path], list[str]], *args: str):
    return lambda root: [*setup(root), *args]


SCRIPT_CASES = [
    Case(
        "dvc_records-out-is-the-lock",
        "write target",
        with_args(dvc_repo(), "--out", "dvc.lock"),
        "dvc.lock: --out must name a .dvc file",
    ),
    Case(
        "dvc_records-out-a-link-out-of-the-repository",
        "write target",
        dvc_repo(prep=link_out("records.dvc")),
        "records.dvc: is a symlink (to ",
    ),
    Case(
        "dvc_records-out-outside-the-repository",
        "write target",
        with_args(dvc_repo(), "--out", "../records.dvc"),
        "records.dvc, outside ",
    ),
    Case(
        "dvc_records-out-inside-a-tree-it-lists",
        "write target",
        with_args(dvc_repo(), "--out", "results/records.dvc"),
        "lies inside results/",
    ),
    Case(
        "dvc_records-outside-git",
        "no traceback",
        dvc_repo(git=False),
        ": not a git checkout; scripts/dvc_records.py lists the outputs git does not track",
    ),
    Case(
        "dvc_records-lock-stages-a-list",
        "no traceback",
        dvc_repo("stages: [1, 2]\n"),
        "dvc.lock: not a dvc.lock (expected a mapping with a 'stages' mapping)",
    ),
    Case(
        "dvc_records-lock-out-without-path",
        "no traceback",
        dvc_repo("stages:\n  s:\n    outs:\n    - {md5: abc}\n"),
        "dvc.lock, stage s, outs[0]: expected a mapping with a 'path'",
    ),
    Case(
        "dvc_records-lock-not-yaml",
        "no traceback",
        dvc_repo("stages: {s: [\n"),
        "dvc.lock: ",
    ),
    Case(
        "dvc_remote-outside-git",
        "no traceback",
        lambda root: shutil.copytree(REPO / "scripts", root / "scripts") and ["bash", "scripts/dvc_remote.sh", "push"],
        ": not a git checkout; scripts/dvc_remote.sh shares a run of the repository",
    ),
]


@pytest.mark.parametrize("case", SCRIPT_CASES, ids=[c.id for c in SCRIPT_CASES])
def test_a_dvc_script_on_bad_input_is_one_line_exit_2_and_writes_nothing(case, ws):
    argv = case.setup(ws)
    before = snapshot(ws)
    command = argv if argv[0] == "bash" else [sys.executable, *argv]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(command, cwd=ws, capture_output=True, text=True, timeout=120, env=env)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert case.says in lines[0], lines[0]
    assert snapshot(ws) == before
    assert not (ws.parent / "records.dvc").exists()


def test_the_script_cases_are_counted_by_class_in_the_docs():
    from collections import Counter

    doc = (REPO / "docs" / "bad-input.md").read_text("utf-8")
    for kind, n in Counter(c.kind for c in SCRIPT_CASES).items():
        assert f"| scripts: {kind} | {n} |" in doc, f"docs/bad-input.md: the scripts' row of {kind!r} should say {n}"
