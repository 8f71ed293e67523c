"""The demo pipeline in a scratch copy of the repository, for the end-to-end tests.

A full Snakemake run of the demo takes minutes, so the test command builds it once for all its xdist
workers (the ``demo_pipeline`` fixture in tests/conftest.py, ``shared_demo_pipeline`` here) and a test
that changes the tree works in a copy of the finished run (``copy_run``): every output, Snakemake's
metadata, the DVC cache, the MLflow store and the request cache come along with their mtimes, so
nothing in the copy is out of date.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]


class PipelineRun(NamedTuple):
    """A repository copy (``work``), the environment its commands run with, and what the run printed."""

    work: Path
    env: dict[str, str]
    out: str


def run(cmd: list[str], cwd: Path, env: dict[str, str], ok: bool = True, timeout: float | None = None) -> str:
    """Run a command; its stdout and stderr together. ``ok``: fail the test when it fails; ``timeout``
    (seconds): fail it, the command killed, when it runs longer."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if ok:
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


#: Shared stores the environment of the tests may name: a pipeline copy uses its own params' stores,
#: as on a fresh machine.
STORE_VARIABLES = ("MLFLOW_TRACKING_URI", "SOCIALBENCH_CACHE_URL")


def pipeline_env(work: Path) -> dict[str, str]:
    """The copy's own packages first (its code is what DVC and Snakemake track), this venv's tools."""
    return {
        **{k: v for k, v in os.environ.items() if k not in STORE_VARIABLES},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(work / "src"),
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DVC_NO_ANALYTICS": "1",
    }


def link_shared(work: Path, repo: Path = REPO) -> None:
    """../shared beside the copy, as beside the repository: the real-data run (MeetingToM on
    ../shared/data/ami) is part of the default pipeline and of the committed dvc.lock."""
    shared = repo.parent / "shared"
    if shared.is_dir() and not (work.parent / "shared").exists():
        (work.parent / "shared").symlink_to(shared.resolve())


def repo_copy(work: Path, repo: Path = REPO, skip: tuple[str, ...] = ()) -> Path:
    """What git would check out (tracked and untracked-but-not-ignored files) at ``work``, less the
    paths starting with one of ``skip``; mtimes kept. Its package's bytecode is written, as
    scripts/setup.sh writes a checkout's, so commands in the copy start as in a checkout (and where
    PYTHONDONTWRITEBYTECODE is set, a run outside the test scripts, they do not each compile it again)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=repo, capture_output=True, check=True
    ).stdout.decode()
    for f in filter(None, listed.split("\0")):
        src = repo / f
        if src.is_file() and not f.startswith(skip):
            (work / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, work / f)
    if (work / "src" / "socialbench").is_dir():
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "src/socialbench"], cwd=work, check=True, capture_output=True
        )
    return work


def git_snapshot(work: Path, env: dict[str, str]) -> None:
    """A git repository with everything committed (the DVC stages record the commit; `git diff` checks dvc.lock)."""
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"],
    ):
        run(cmd, work, env)


#: The test-only start-up hook that records what each `socialbench` command imported.
IMPORT_TRACE_HOOK = Path(__file__).resolve().parent / "import_trace"


def import_traces(run: PipelineRun) -> Path:
    """The folder of the build's import traces (tests/helpers/import_trace/sitecustomize.py): one
    JSON file per `socialbench` command the build ran, with its arguments and imported source files."""
    return run.work.parent / "import-traces"


def build_demo_pipeline(parent: Path) -> PipelineRun:
    """The whole demo pipeline (`snakemake --cores 2`) in a fresh copy of the repository at parent/repo,
    each command's imports recorded on the way (``import_traces``); the returned env records none."""
    work = repo_copy(parent / "repo")
    link_shared(work)
    env = pipeline_env(work)
    git_snapshot(work, env)
    traces = parent / "import-traces"
    traces.mkdir()
    traced = {
        **env,
        "PYTHONPATH": f"{IMPORT_TRACE_HOOK}{os.pathsep}{env['PYTHONPATH']}",
        "SOCIALBENCH_IMPORT_TRACE": str(traces),
    }
    return PipelineRun(work, env, run(["snakemake", "--cores", "2"], work, traced))


def shared_demo_pipeline(root: Path) -> PipelineRun:
    """The demo run at root/demo-pipeline, built by its first caller only: the xdist workers of one test
    command share ``root`` and take turns on a file lock, so the run is built once and every worker's
    demo tests read the same one. A failed build is reported to every later caller, not built again."""
    from filelock import FileLock

    parent, out, failed = root / "demo-pipeline", root / "demo-pipeline.out", root / "demo-pipeline.failed"
    with FileLock(str(root / "demo-pipeline.lock")):
        if failed.is_file():
            raise AssertionError(f"the session's demo build failed on another worker:\n{failed.read_text()}")
        if not out.is_file():
            parent.mkdir()
            try:
                built = build_demo_pipeline(parent)
            except BaseException as exc:
                failed.write_text(str(exc)[-6000:])
                raise
            out.write_text(built.out)
            return built
    work = parent / "repo"
    return PipelineRun(work, pipeline_env(work), out.read_text())


def _rebase_mlflow_artifacts(db: Path, old: Path, new: Path) -> None:
    """MLflow stores absolute artifact locations: point the copy's store at the copy's mlartifacts/,
    so a run logged in the copy never writes into the original."""
    old_uri, new_uri = old.resolve().as_uri(), new.resolve().as_uri()
    con = sqlite3.connect(db)
    try:
        with con:
            con.execute(
                "UPDATE experiments SET artifact_location = replace(artifact_location, ?, ?)", (old_uri, new_uri)
            )
            con.execute("UPDATE runs SET artifact_uri = replace(artifact_uri, ?, ?)", (old_uri, new_uri))
    finally:
        con.close()


def _link_or_copy(src: str, dst: str) -> None:
    """A read-only file of the DVC cache is hard-linked (DVC writes an object once, read-only, and
    never in place: a copy that commits an output writes a new file); any other file is copied."""
    if f"{os.sep}.dvc{os.sep}cache{os.sep}" in src and not os.stat(src).st_mode & 0o222:
        os.link(src, dst)
    else:
        shutil.copy2(src, dst)


def _dvc_tmp(folder: str, names: list[str]) -> list[str]:
    return ["tmp"] if Path(folder).name == ".dvc" and "tmp" in names else []


def copy_run(base: PipelineRun, parent: Path) -> PipelineRun:
    """A copy of a finished run at parent/repo that is as up to date as the original: the whole tree
    (.git, .snakemake/ metadata, .dvc/cache, mlflow.db, .cache/) with mtimes (copy2) and links as
    links; the DVC cache's read-only objects (a third of the demo run's bytes) hard-linked, not copied.
    DVC's state database is keyed by inode and left behind, so the copy's first `dvc status` rehashes
    the workspace."""
    work = parent / "repo"
    # .dvc/tmp holds DVC's locks and its state database, keyed by inode (of no use to a copy) and written
    # by any dvc command another worker runs in the original meanwhile
    shutil.copytree(base.work, work, symlinks=True, copy_function=_link_or_copy, ignore=_dvc_tmp)
    if (base.work.parent / "shared").is_symlink():
        (parent / "shared").symlink_to(os.readlink(base.work.parent / "shared"))
    if (work / "mlflow.db").is_file():
        _rebase_mlflow_artifacts(work / "mlflow.db", base.work, work)
    return PipelineRun(work, {**base.env, "PYTHONPATH": str(work / "src")}, base.out)
