"""The pipeline through Slurm (profiles/slurm) on a one-node cluster started on this machine.

scripts/slurm_cluster.sh installs slurm-wlm and munge with apt-get (once) and starts slurmctld and
slurmd on localhost; the pipeline then runs with ``--profile profiles/slurm`` in a fresh copy of the
repository. Every job Snakemake did not run itself (its localrules) must have gone through Slurm and
completed there, and every output it built must have the bytes the committed dvc.lock records (the
check tests/test_pipeline.py makes of the local run, so the two executors give the same bytes).

What the test command runs (docs/decisions/scale-out.md, "What the Slurm test runs"): MoCA's frames
and each MoCA model's inference and the first demo meeting's stage, which hold every kind of job the
profile submits (frames, a meeting's clips, inference) and the local jobs their data comes from; about
60 CPU-s, against 170 for the whole demo a second time. The whole demo through Slurm is marked
``scaleout`` as well, left out of the default command with the other full-size scale-out checks:
``bash scripts/test.sh -m scaleout``. Root only. Skip with ``-m "not slurm"``.

The test cluster has no slurmdbd (it needs a MySQL server), so plain ``sacct`` has no database: Slurm
writes each finished job to a job completion log (jobcomp/filetxt), which ``sacct -c`` reads, and
the plugin asks ``squeue`` for job states (``--slurm-status-command squeue``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.pipeline import REPO, git_snapshot, link_shared, pipeline_env, repo_copy, run

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SCRIPT = REPO / "scripts" / "slurm_cluster.sh"
#: The rules the profile submits, by kind: each must go through Slurm in the test command's run.
SUBMITTED_KINDS = {"frames": r"moca_frames", "clips": r"meetingtom_clips", "inference": r"\w+_infer_\w+"}


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


def _slurm_snakemake(work: Path, env: dict[str, str], targets: list[str]) -> str:
    """``snakemake --profile profiles/slurm`` with the test cluster's settings: snakemake's output."""
    # the test cluster has no accounts and no slurmdbd (see the module docstring)
    cmd = ["snakemake", "--profile", "profiles/slurm", "--slurm-no-account", "--slurm-status-command", "squeue"]
    # poll squeue a second after each finished job (the plugin adds 10 s per poll that finds none
    # finished): on a real cluster the profile's default spares slurmctld, here it only adds idle time
    cmd += ["--slurm-init-seconds-before-status-checks", "1"]
    # a job whose end Snakemake never learns of leaves it waiting for good: fail instead (a few minutes
    # on a quiet machine; the limit leaves room for a loaded one)
    return run([*cmd, *targets], work, env, timeout=3600)


def _fresh_copy(parent: Path) -> tuple[Path, dict[str, str]]:
    work = repo_copy(parent / "repo")
    link_shared(work)
    env = pipeline_env(work)
    git_snapshot(work, env)
    return work, env


def _stages_to_build(work: Path) -> dict[str, list[str]]:
    """{DVC stage: the Snakemake targets its command builds} of the stages whose jobs the profile submits,
    one of each kind: MoCA's frames, each MoCA model's inference and the first demo meeting's media and
    clips (their data comes from local jobs: the demo data, MoCA's validation, the meeting's release,
    media and extraction)."""
    stages = yaml.safe_load((work / "dvc.yaml").read_text())["stages"]
    meeting = yaml.safe_load((work / "params.yaml").read_text())["meetingtom"]["demo"]["meetings"][0]
    picked = {name: stages[name]["cmd"] for name in stages if name == "moca_frames" or name.startswith("moca_infer_")}
    picked[f"meetingtom_demo_meeting@{meeting}"] = stages["meetingtom_demo_meeting"]["cmd"].replace(
        "${item.meeting}", meeting
    )
    return {name: cmd.split()[cmd.split().index("1") + 1 :] for name, cmd in picked.items()}  # after `--cores 1`


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster, tmp_path_factory):
    """MoCA's frames and inference and the first demo meeting's stage under profiles/slurm in a fresh copy:
    (work dir, its environment, snakemake's output, the DVC stages it was asked for)."""
    work, env = _fresh_copy(tmp_path_factory.mktemp("slurm-pipeline"))
    stages = _stages_to_build(work)
    targets = list(dict.fromkeys(t for ts in stages.values() for t in ts))
    return work, env, _slurm_snakemake(work, env, targets), sorted(stages)


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


def _assert_every_non_local_job_completed_in_slurm(out: str, state: Path) -> None:
    submitted = _submitted(out)
    assert sorted(submitted.values()) == sorted(_remote_rules(out))
    missing = set(submitted) - _completed_in_slurm(state)
    assert not missing, f"Slurm has no completed record of jobs {sorted(missing)}"


def test_every_kind_of_job_the_profile_submits_ran_and_completed_in_slurm(slurm_run, slurm_cluster):
    _, _, out, _ = slurm_run
    remote = _remote_rules(out)
    for kind, pattern in SUBMITTED_KINDS.items():
        assert any(re.fullmatch(pattern, r) for r in remote), f"no {kind} job was submitted: {remote}"
    _assert_every_non_local_job_completed_in_slurm(out, slurm_cluster)


#: Run in the copy: {stage: {output: DVC's workspace status}} of every stage whose outputs all exist, each
#: output compared with the hash dvc.lock records (no cache needed: the run ends before any `dvc commit`).
WORKSPACE_STATUS = """
import json
from dvc.repo import Repo
with Repo(".") as repo:
    built = [s for s in repo.index.stages if s.outs and all(o.exists for o in s.outs)]
    print(json.dumps({s.addressing: {k: v for o in s.outs for k, v in o.workspace_status().items()} for s in built}))
"""


def test_slurm_run_outputs_have_the_bytes_the_committed_lock_records(slurm_run):
    # The stages read nothing of ../shared, so this holds without it (the whole demo's check needs it).
    work, env, _, asked = slurm_run
    status = json.loads(run([sys.executable, "-c", WORKSPACE_STATUS], work, env).splitlines()[-1])
    assert {*asked, "moca_demo_data", "moca_prepare", "meetingtom_demo_data"} <= set(status), sorted(status)
    differ = {stage: outs for stage, outs in status.items() if outs}
    assert not differ, f"the Slurm run's outputs differ from the committed dvc.lock: {differ}"


@pytest.mark.scaleout
def test_the_whole_demo_through_slurm_leaves_the_committed_lock_as_it_is(slurm_cluster, shared_dir, tmp_path_factory):
    # The run ends with `dvc commit`: dvc.lock stays as committed only if every output (predictions,
    # scores, tables, data) has the md5 the lock records. The committed lock is built with ../shared
    # beside the repository, hence shared_dir.
    work, env = _fresh_copy(tmp_path_factory.mktemp("slurm-demo"))
    out = _slurm_snakemake(work, env, [])
    _assert_every_non_local_job_completed_in_slurm(out, slurm_cluster)
    proc = subprocess.run(
        ["git", "diff", "--stat", "--exit-code", "dvc.lock"], cwd=work, capture_output=True, text=True
    )
    assert proc.returncode == 0, "the Slurm run's outputs differ from the committed dvc.lock:\n" + proc.stdout
