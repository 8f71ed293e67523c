"""rules/meetingtom.smk and MeetingToM's DVC stages, run for real on a fresh copy of the repository
(a smaller demo so it stays quick): Snakemake builds every MeetingToM output, DVC then sees them up to
date, and a meeting added to params reruns only that meeting's jobs under both tools."""

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.pipeline import git_snapshot, pipeline_env, repo_copy, run

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SHARED_AMI = REPO.parent / "shared" / "data" / "ami"
TARGET = "results/mlflow/meetingtom.json"


def edit_params(work: Path, change, models=None) -> None:
    p = yaml.safe_load((work / "params.yaml").read_text())
    change(p["meetingtom"])
    if models is not None:
        p["models"] = {m: e for m, e in p["models"].items() if m in models}
    (work / "params.yaml").write_text(yaml.safe_dump(p, sort_keys=False))


def meetingtom_stages(work, env):
    names = run(["dvc", "stage", "list", "--name-only"], work, env).split()
    return [n for n in names if n.startswith("meetingtom_")]


def dry_jobs(work, env) -> dict[str, int]:
    """{rule: number of jobs} that a dry run of the MeetingToM target would run."""
    out = run(["snakemake", "-n", "--cores", "2", TARGET], work, env)
    if "Nothing to be done" in out:
        return {}
    rows = [line.split() for line in out.split("Job stats:", 1)[1].split("Reasons:", 1)[0].splitlines()[3:]]
    return {r[0]: int(r[1]) for r in rows if len(r) == 2 and r[1].isdigit() and r[0] != "total"}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    # Its own run, not a copy of the session's demo run (tests/conftest.py): the smaller demo changes
    # every MeetingToM demo job, and the new-meeting test needs a meeting that the default run built.
    # No committed dvc.lock: it records the default params' outputs, not this run's, and `dvc commit`
    # below rewrites the whole lock once per stage (minutes with every stage of the default run in it).
    work = repo_copy(tmp_path_factory.mktemp("mt-rules") / "repo", skip=("dvc.lock",))
    env = pipeline_env(work)

    def smaller(mt):
        mt["demo"].update(
            corpus=["ES9000a", "ES9000c"], meetings=["ES9000a", "ES9000c"], fps=4, size=[96, 72], sample_rate=8000
        )
        mt["ami"].update(meetings=["IS1001a"], mirror=str(SHARED_AMI) if SHARED_AMI.is_dir() else "../no-such-mirror")
        mt["clips"]["tasks"] = ["you"]
        mt["methods"] = [
            "no_prompt",
            "no_prompt__prior_role",
        ]  # a method and an ablation run (CoT: tests/meetingtom/methods)

    # two baselines and the human row (MiniLM runs in tests/test_pipeline.py's default pipeline)
    edit_params(work, smaller, models=("random", "prior", "human-meetingtom"))
    git_snapshot(work, env)
    out = run(["snakemake", "--cores", "2", TARGET], work, env)
    run(["dvc", "commit", "--force", "--no-relink", "--quiet", *meetingtom_stages(work, env)], work, env)
    return work, env, out


def test_the_run_makes_the_task_table_for_every_model(pipeline):
    work, _, _ = pipeline
    md = (work / "results/tables/meetingtom/table1_overall.md").read_text()
    for model in yaml.safe_load((work / "params.yaml").read_text())["models"]:
        assert f"| {model} | No Prompt |" in md
    demo, _, ami = md.partition("## AMI meetings")
    assert "T2.1 Acc (n=2)" in demo  # ES9000a's two you windows; ES9000c is the dev meeting
    assert "T1 Acc (n=" in demo and "T3.1 Acc (n=" in demo  # the annotated tasks, from the simulated annotators
    if SHARED_AMI.is_dir():
        assert "T2.1 Acc (n=7)" in ami  # IS1001a's seven you windows
    else:
        assert "No instances from the AMI meetings" in md


def test_an_absent_mirror_is_said_when_the_workflow_is_read(pipeline):
    _, _, out = pipeline
    assert ("AMI mirror ../no-such-mirror not found" in out) != SHARED_AMI.is_dir()


def test_a_second_snakemake_has_nothing_to_do(pipeline):
    work, env, _ = pipeline
    assert dry_jobs(work, env) == {}


def test_dvc_sees_every_meetingtom_stage_up_to_date(pipeline):
    work, env, _ = pipeline
    out = run(["dvc", "status", "--json", *meetingtom_stages(work, env)], work, env)
    assert json.loads(out[out.index("{") :]) == {}


def test_the_instances_consolidate_into_task_files_and_splits(pipeline):
    work, _, _ = pipeline
    test = (work / "data/processed/meetingtom/test.jsonl").read_text().splitlines()
    by_task = {
        t: (work / f"data/processed/meetingtom/tasks/{t}.jsonl").read_text().splitlines()
        for t in ("task1", "task2_1", "task2_2", "task3_1", "task3_2")
    }
    assert sorted(test) == sorted(
        line for lines in by_task.values() for line in lines
    )  # the task files split the test set
    assert all(json.loads(x)["task"] == t for t, lines in by_task.items() for x in lines)
    assert (
        by_task["task2_1"] and by_task["task1"] and by_task["task3_1"]
    )  # gold from the you events and from the annotators
    dev = [json.loads(x) for x in (work / "data/processed/meetingtom/dev.jsonl").read_text().splitlines()]
    assert {i["meta"]["meeting"] for i in dev} == {"ES9000c"}


def test_a_new_meeting_reruns_only_its_own_jobs_under_both_tools(pipeline):
    work, env, _ = pipeline
    original = (work / "params.yaml").read_text()
    try:
        edit_params(work, lambda mt: mt["ami"]["meetings"].append("IS1001b"))
        out = run(["dvc", "status", "--json", *meetingtom_stages(work, env)], work, env)
        assert set(json.loads(out[out.index("{") :])) == {"meetingtom_ami_meeting@IS1001b", "meetingtom_ami_instances"}
        jobs = dry_jobs(work, env)
        assert {r: jobs.get(r) for r in ("meetingtom_media", "meetingtom_extract", "meetingtom_clips")} == {
            "meetingtom_media": 1,
            "meetingtom_extract": 1,
            "meetingtom_clips": 1,
        }
        assert "meetingtom_demo_data" not in jobs and "meetingtom_release" not in jobs
        assert not [j for j in jobs if j.startswith("moca_")]
    finally:
        (work / "params.yaml").write_text(original)
