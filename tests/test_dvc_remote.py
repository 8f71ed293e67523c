"""A finished run shared through a DVC remote (docs/scale-out.md, "DVC remote"): pushed from one
repository, pulled into a fresh clone, which then has nothing to rebuild and makes no model call.

Two remotes: a local path (a shared file system) and SSH, against a throwaway sshd on loopback
(scripts/sshd_loopback.sh; root and apt-get install Debian's openssh-server when it is absent).
"""

from __future__ import annotations

import getpass
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.pipeline import PipelineRun, copy_run, run

REPO = Path(__file__).resolve().parents[1]


def _records_module():
    spec = importlib.util.spec_from_file_location("dvc_records", REPO / "scripts" / "dvc_records.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- which outputs records.dvc lists (pure) ---------------------------------------------------------


def test_records_take_a_folder_without_stage_outputs_whole():
    records = _records_module()
    files = ["results/runs/moca/random/direct.stats.json", "results/runs/moca/prior/direct.stats.json"]
    assert records.uncovered(files, {"results/predictions/moca/random/direct.jsonl"}) == ["results/runs"]


def test_records_skip_files_inside_a_stage_output():
    records = _records_module()
    assert records.uncovered(["results/scores/moca/random/direct.json"], {"results/scores/moca"}) == []


def test_records_take_single_files_beside_a_stage_output_folder():
    records = _records_module()
    files = ["results/metrics/moca.json", "results/metrics/moca/random/direct.json"]
    assert records.uncovered(files, {"results/metrics/moca"}) == ["results/metrics/moca.json"]


def test_records_never_take_a_files_root_folder_whole():
    records = _records_module()
    assert records.uncovered(["results/dvc-committed.txt"], set()) == ["results/dvc-committed.txt"]


# ---- the loopback sshd ------------------------------------------------------------------------------


def _ssh_skip_reason() -> str | None:
    if importlib.util.find_spec("dvc_ssh") is None:
        return "needs dvc-ssh (pip install 'socialbench[cluster]')"
    if not Path("/usr/sbin/sshd").exists():
        if os.geteuid() != 0:
            return "needs Debian's openssh-server, and root to install it with apt-get"
        if shutil.which("apt-get") is None:
            return "needs Debian's openssh-server, and apt-get to install it"
    if shutil.which("ssh-keygen") is None:
        return "needs ssh-keygen (Debian's openssh-client)"
    return None


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """A loopback sshd (scripts/sshd_loopback.sh) for this module's tests: its state folder and port."""
    reason = _ssh_skip_reason()
    if reason:
        pytest.skip(reason)
    state = tmp_path_factory.mktemp("sshd")
    script = str(REPO / "scripts" / "sshd_loopback.sh")
    proc = subprocess.run(["bash", script, "start", str(state)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"scripts/sshd_loopback.sh could not start an sshd: {proc.stderr.strip()[-500:]}")
    yield state, int((state / "port").read_text())
    subprocess.run(["bash", script, "stop", str(state)], capture_output=True)


@pytest.mark.ssh
@pytest.mark.scaleout
def test_loopback_sshd_accepts_the_generated_client_key(sshd):
    state, _ = sshd
    proc = subprocess.run(
        ["ssh", "-F", str(state / "ssh_config"), "-o", "BatchMode=yes", "loopback", "echo", "ok"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == "ok", proc.stderr


# ---- push, clone, pull ------------------------------------------------------------------------------


def _configure_remote(work: Path, env: dict[str, str], kind: str, target: Path, sshd_state) -> None:
    """The remote in .dvc/config.local (git-ignored: a user's or a machine's own settings)."""
    if kind == "local":
        run(["dvc", "remote", "add", "--local", "--default", "store", str(target)], work, env)
        return
    state, port = sshd_state
    url = f"ssh://{getpass.getuser()}@127.0.0.1:{port}{target}"
    run(["dvc", "remote", "add", "--local", "--default", "store", url], work, env)
    run(["dvc", "remote", "modify", "--local", "store", "keyfile", str(state / "client_key")], work, env)


def _ssh_home(base: Path, sshd_state) -> Path:
    """A HOME whose ~/.ssh/known_hosts holds the loopback server's key (the user's own is left alone)."""
    home = base / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    shutil.copy(sshd_state[0] / "known_hosts", home / ".ssh" / "known_hosts")
    return home


@pytest.fixture(
    scope="module",
    params=[
        pytest.param("local", marks=pytest.mark.scaleout),
        pytest.param("ssh", marks=[pytest.mark.ssh, pytest.mark.scaleout]),
    ],
)
def pulled(request, demo_pipeline, tmp_path_factory) -> PipelineRun:
    """A fresh git clone of a finished run, its data pulled from a remote it was pushed to."""
    kind = request.param
    sshd_state = None
    if kind == "ssh":
        sshd_state = request.getfixturevalue("sshd")
    base = tmp_path_factory.mktemp(f"remote-{kind}")
    origin = copy_run(demo_pipeline, base / "origin")
    env = dict(origin.env)
    if sshd_state is not None:
        env["HOME"] = str(_ssh_home(base, sshd_state))
    store = base / "store"
    store.mkdir()
    _configure_remote(origin.work, env, kind, store, sshd_state)
    run(["bash", "scripts/dvc_remote.sh", "push"], origin.work, env)
    run(["git", "add", "-A"], origin.work, env)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "pushed run"], origin.work, env)

    clone = base / "clone" / "repo"
    clone.parent.mkdir()
    run(["git", "clone", "-q", str(origin.work), str(clone)], base, env)
    if (origin.work.parent / "shared").is_symlink():
        (clone.parent / "shared").symlink_to(os.readlink(origin.work.parent / "shared"))
    env = {**env, "PYTHONPATH": str(clone / "src")}
    _configure_remote(clone, env, kind, store, sshd_state)
    run(["bash", "scripts/dvc_remote.sh", "pull"], clone, env)
    return PipelineRun(clone, env, "")


@pytest.mark.slow
def test_pull_restores_the_run_accounting(pulled):
    assert sorted((pulled.work / "results" / "runs").rglob("*.stats.json"))


@pytest.mark.slow
def test_pulled_clone_is_up_to_date_for_dvc(pulled):
    out = run(["dvc", "status"], pulled.work, pulled.env)
    assert "Data and pipelines are up to date." in out, out


@pytest.mark.slow
def test_pulled_clone_gives_snakemake_nothing_to_do(pulled):
    out = run(["snakemake", "-n", "--cores", "1"], pulled.work, pulled.env)
    assert "Nothing to be done" in out, out


@pytest.mark.slow
def test_dvc_repro_in_a_pulled_clone_runs_no_stage_and_calls_no_model(pulled):
    out = run(["dvc", "repro"], pulled.work, pulled.env)
    assert "Running stage" not in out, out
    # every model call goes through the request cache; a clone that made none has none
    assert not (pulled.work / ".cache" / "socialbench").exists()
