"""The demo pipeline through Slurm (profiles/slurm) on a one-node cluster started on this machine.

scripts/slurm_cluster.sh installs slurm-wlm and munge with apt-get (once) and starts slurmctld and
slurmd on localhost; the pipeline then runs with ``--profile profiles/slurm`` in a fresh copy of the
repository. Every job Snakemake did not run itself (its localrules) must have gone through Slurm and
completed there, and every output must be byte-identical to what the committed dvc.lock records: the
check tests/test_pipeline.py makes of the local run, so the two runs give the same bytes without this test
needing a local run on its own worker. Root only. The test command runs it on a worker of
its own, beside the local demo run: about 4 minutes here, one of them installing slurm-wlm and munge the
first time. Skip with ``-m "not slurm"``.

The test cluster has no slurmdbd (it needs a MySQL server), so plain ``sacct`` has no database: Slurm
writes each finished job to a job completion log (jobcomp/filetxt), which ``sacct -c`` reads, and
the plugin asks ``squeue`` for job states (``--slurm-status-command squeue``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.pipeline import REPO, git_snapshot, link_shared, pipeline_env, repo_copy, run

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SCRIPT = REPO / "scripts" / "slurm_cluster.sh"


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root (installs slurm-wlm and munge, starts slurmctld and slurmd)"
    if not shutil.which("slurmctld") and not shutil.which("apt-get"):
        return "needs apt-get to install slurm-wlm and munge (or them installed)"
    if Path("/etc/slurm/slurm.conf").is_file() and "slurm_cluster.sh" not in Path("/etc/slurm/slurm.conf").read_text(
        errors="replace"
    ):
        return "this machine has its own Slurm configuration (/etc/slurm/slurm.conf); not replacing it"
    return None


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    why = _why_not()
    if why:
        pytest.skip(why)
    pytest.importorskip("snakemake_executor_plugin_slurm", reason="needs the `cluster` extra")
    state = tmp_path_factory.mktemp("slurm")
    env = {**os.environ, "SLURM_TEST_DIR": str(state)}
    proc = subprocess.run(["bash", str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode == 3:  # the script's "cannot install" status
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, f"slurm_cluster.sh start failed:\n{proc.stdout}\n{proc.stderr}"
    yield state
    subprocess.run(["bash", str(SCRIPT), "stop"], env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster, tmp_path_factory):
    """The demo pipeline under profiles/slurm in a fresh copy: (work dir, snakemake's output)."""
    work = repo_copy(tmp_path_factory.mktemp("slurm-pipeline") / "repo")
    link_shared(work)
    env = pipeline_env(work)
    git_snapshot(work, env)
    # the test cluster has no accounts and no slurmdbd (see the module docstring)
    cmd = ["snakemake", "--profile", "profiles/slurm", "--slurm-no-account", "--slurm-status-command", "squeue"]
    # poll squeue a second after each finished job (the plugin adds 10 s per poll that finds none
    # finished): on a real cluster the profile's default spares slurmctld, here it only adds idle time
    cmd += ["--slurm-init-seconds-before-status-checks", "1"]
    # a job whose end Snakemake never learns of leaves it waiting for good: fail instead (about 4 min
    # on a quiet machine; the limit leaves room for a loaded one)
    return work, run(cmd, work, env, timeout=3600)


def _submitted(out: str) -> dict[str, str]:
    """{Slurm job id: rule} of every job the plugin submitted."""
    pattern = r"has been submitted with SLURM jobid (\d+) \(log: \S*/rule_([^/]+)/"
    return {m.group(1): m.group(2) for m in re.finditer(pattern, out)}


def _remote_rules(out: str) -> list[str]:
    """Rules of the jobs Snakemake did not run itself ("rule x:"; its local ones print "localrule x:")."""
    return re.findall(r"^rule (\S+):$", out, flags=re.M)


def _completed_in_slurm(state: Path) -> set[str]:
    """Slurm job ids the job completion log records as COMPLETED (sacct -c reads it)."""
    proc = subprocess.run(
        ["sacct", "-c", "-n", "-P", "-o", "JobID,State"],
        capture_output=True,
        text=True,
        env={**os.environ, "SLURM_TEST_DIR": str(state)},
    )
    assert proc.returncode == 0, proc.stderr
    return {line.split("|")[0] for line in proc.stdout.splitlines() if line.endswith("|COMPLETED")}


def test_every_non_local_job_ran_through_slurm(slurm_run, slurm_cluster):
    work, out = slurm_run
    submitted = _submitted(out)
    remote = _remote_rules(out)
    assert any("_infer_" in r for r in remote), "no inference job was submitted"
    assert sorted(submitted.values()) == sorted(remote)
    missing = set(submitted) - _completed_in_slurm(slurm_cluster)
    assert not missing, f"Slurm has no completed record of jobs {sorted(missing)}"


def test_slurm_run_outputs_are_byte_identical_to_what_the_committed_lock_records(shared_dir, slurm_run):
    # The run ends with `dvc commit`: dvc.lock stays as committed only if every output (predictions,
    # scores, tables, data) has the md5 the lock records, which the local run is held to as well.
    # The committed lock is built with ../shared beside the repository, hence shared_dir.
    work, _ = slurm_run
    proc = subprocess.run(
        ["git", "diff", "--stat", "--exit-code", "dvc.lock"], cwd=work, capture_output=True, text=True
    )
    assert proc.returncode == 0, "the Slurm run's outputs differ from the committed dvc.lock:\n" + proc.stdout
