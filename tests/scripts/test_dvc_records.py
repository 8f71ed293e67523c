"""scripts/dvc_records.py (and scripts/dvc_remote.sh) on bad input: writes stay where they belong (the
records file only, inside the repository, never through a link or onto what it reads), and a lock of
another shape or a folder outside git is one line, exit 2, nothing written (issue 33, points 3 and 6)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "dvc_records.py"
LOCK = "schema: '2.0'\nstages:\n  moca_infer:\n    cmd: x\n    outs:\n    - path: results/predictions/moca\n"


def run_script(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, env=env)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "results" / "runs").mkdir(parents=True)
    (root / "results" / "runs" / "a.stats.json").write_text("{}\n")
    (root / "dvc.lock").write_text(LOCK)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_a_good_repository_gets_its_records_file(repo):
    done = run_script("--repo", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "path: results/runs" in (repo / "records.dvc").read_text()


def test_the_lock_it_reads_is_never_its_output(repo):
    line = one_error_line(run_script("--repo", str(repo), "--out", "dvc.lock", cwd=repo))
    assert "--out must name a .dvc file" in line and (repo / "dvc.lock").read_text() == LOCK


def test_a_symlink_to_a_file_outside_the_repository_is_never_written_through(repo, tmp_path):
    outside = tmp_path / "outside.dvc"
    outside.write_text("keep\n")
    (repo / "records.dvc").symlink_to(outside)
    line = one_error_line(run_script("--repo", str(repo), cwd=repo))
    assert f"{repo / 'records.dvc'}: is a symlink (to {outside}); --out never writes through a link" in line
    assert outside.read_text() == "keep\n" and (repo / "records.dvc").is_symlink()


def test_an_output_outside_the_repository_is_refused(repo, tmp_path):
    line = one_error_line(run_script("--repo", str(repo), "--out", "../elsewhere.dvc", cwd=repo))
    assert f"leads to {tmp_path / 'elsewhere.dvc'}, outside {repo}" in line
    assert not (tmp_path / "elsewhere.dvc").exists()


def test_an_output_inside_a_tree_it_lists_is_refused(repo):
    line = one_error_line(run_script("--repo", str(repo), "--out", "results/records.dvc", cwd=repo))
    assert "lies inside results/" in line and not (repo / "results" / "records.dvc").exists()


def test_a_folder_outside_git_says_so_in_one_line(repo):
    subprocess.run(["rm", "-rf", str(repo / ".git")], check=True)
    line = one_error_line(run_script("--repo", str(repo), cwd=repo))
    assert f"{repo}: not a git checkout" in line and not (repo / "records.dvc").exists()


@pytest.mark.parametrize(
    "lock, says",
    [
        ("stages: [1, 2]\n", "dvc.lock: not a dvc.lock (expected a mapping with a 'stages' mapping)"),
        ("stages:\n  s: 3\n", "dvc.lock, stage s: not a stage of dvc.lock"),
        (
            "stages:\n  s:\n    outs:\n    - {md5: abc}\n",
            "dvc.lock, stage s, outs[0]: expected a mapping with a 'path'",
        ),
        ("stages: {s: [\n", "dvc.lock: "),
    ],
    ids=["stages-a-list", "stage-a-number", "out-without-path", "not-yaml"],
)
def test_a_lock_of_another_shape_is_one_line_naming_the_entry(repo, lock, says):
    (repo / "dvc.lock").write_text(lock)
    line = one_error_line(run_script("--repo", str(repo), cwd=repo))
    assert says in line and not (repo / "records.dvc").exists()


def test_dvc_remote_outside_a_git_checkout_says_so_in_one_line(tmp_path):
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "dvc_remote.sh"
    script.write_text((REPO / "scripts" / "dvc_remote.sh").read_text())
    done = subprocess.run(["bash", str(script), "push"], capture_output=True, text=True)
    line = one_error_line(done)
    assert f"{tmp_path}: not a git checkout" in line
