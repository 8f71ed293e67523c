"""rules/meetingtom.smk and MeetingToM's DVC stages, on the session's demo run (tests/conftest.py;
its no-op reruns under both tools are in tests/test_pipeline.py): Snakemake builds every MeetingToM
output, and a meeting added to params reruns only that meeting's jobs under both tools."""

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.pipeline import pipeline_env, repo_copy, run

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SHARED_AMI = REPO.parent / "shared" / "data" / "ami"
TARGET = "results/mlflow/meetingtom.json"


def edit_params(work: Path, change) -> None:
    p = yaml.safe_load((work / "params.yaml").read_text())
    change(p["meetingtom"])
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


def meetingtom_models(work: Path) -> list[str]:
    from socialbench.core.config import load_params
    from socialbench.results.layout import model_runs

    params = load_params(work / "params.yaml")
    return sorted(model_runs(params, "meetingtom", params["meetingtom"]["methods"]))


def test_the_run_makes_the_task_table_for_every_model(demo_pipeline):
    # The session's demo run (tests/conftest.py): read only.
    work = demo_pipeline.work
    md = (work / "results/tables/meetingtom/table1_overall.md").read_text()
    for model in meetingtom_models(work):
        assert f"| {model} | No Prompt |" in md
    demo, _, ami = md.partition("## AMI meetings")
    test = [json.loads(x) for x in (work / "data/processed/meetingtom/test.jsonl").read_text().splitlines()]
    you_windows = [i for i in test if i["task"] == "task2_1"]
    demo_you = sum(i["meta"]["meeting"].startswith("ES9") for i in you_windows)
    assert demo_you and f"T2.1 Acc (n={demo_you})" in demo
    assert "T1 Acc (n=" in demo and "T3.1 Acc (n=" in demo  # the annotated tasks, from the simulated annotators
    if SHARED_AMI.is_dir():
        assert f"T2.1 Acc (n={len(you_windows) - demo_you})" in ami  # the AMI meetings' you windows
    else:  # an absent source gets a note, not a section
        assert not ami and "No instances from the AMI meetings" in demo


def test_an_absent_mirror_is_said_when_the_workflow_is_read(tmp_path):
    # Reading the workflow is enough: a copy of the sources, no run.
    work = repo_copy(tmp_path / "repo", skip=("data/", "results/", "dvc.lock"))
    edit_params(work, lambda mt: mt["ami"].update(mirror="../no-such-mirror"))
    out = run(["snakemake", "-n", "--cores", "1", TARGET], work, pipeline_env(work))
    assert "AMI mirror ../no-such-mirror not found" in out


def test_only_the_meetings_of_a_source_with_views_get_media_and_clips_jobs(tmp_path):
    # Reading the workflow is enough: a copy of the sources, no run.
    work = repo_copy(tmp_path / "repo", skip=("data/", "results/", "dvc.lock"))
    jobs = dry_jobs(work, pipeline_env(work))
    p = yaml.safe_load((work / "params.yaml").read_text())["meetingtom"]
    assert p["demo"]["views"] and not p["ami"]["views"]
    assert jobs["meetingtom_media"] == jobs["meetingtom_clips"] == len(p["demo"]["meetings"])
    assert jobs["meetingtom_extract"] == len(p["demo"]["meetings"]) + len(p["ami"]["meetings"])


def test_views_for_a_source_put_its_media_and_clips_rules_in_its_generated_dvc_stage(tmp_path):
    # dvc.yaml is generated from the stage declarations, so a source's DVC stage follows its views
    # (before, a hand-kept stage could lack the clips and the workflow had to refuse it).
    work = repo_copy(tmp_path / "repo", skip=("data/", "results/", "dvc.lock"))
    edit_params(work, lambda mt: mt["ami"].update(views=["Corner"]))
    run(["snakemake", "-n", "--cores", "1", TARGET], work, pipeline_env(work))
    stage = yaml.safe_load((work / "dvc.yaml").read_text())["stages"]["meetingtom_ami_meeting"]
    stage = stage.get("do", stage)
    assert stage["desc"] == "runs meetingtom_media, meetingtom_extract, meetingtom_clips"
    assert any("data/processed/meetingtom/clips/ami/" in str(o) for o in stage["outs"])


def test_the_instances_consolidate_into_task_files_and_splits(demo_pipeline):
    work = demo_pipeline.work
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


@pytest.mark.shared
def test_a_new_meeting_reruns_only_its_own_jobs_under_both_tools(shared_dir, demo_pipeline_copy):
    work, env, _ = demo_pipeline_copy
    original = (work / "params.yaml").read_text()
    try:
        edit_params(work, lambda mt: mt["ami"]["meetings"].append("IS1001d"))  # in the mirror, not in the demo
        out = run(["dvc", "status", "--json", *meetingtom_stages(work, env)], work, env)
        assert set(json.loads(out[out.index("{") :])) == {"meetingtom_ami_meeting@IS1001d", "meetingtom_ami_instances"}
        jobs = dry_jobs(work, env)
        # the real meetings have no views (meetingtom.ami.views), so no media or clips job
        assert {r: jobs.get(r) for r in ("meetingtom_media", "meetingtom_extract", "meetingtom_clips")} == {
            "meetingtom_media": None,
            "meetingtom_extract": 1,
            "meetingtom_clips": None,
        }
        assert "meetingtom_demo_data" not in jobs and "meetingtom_release" not in jobs
        assert not [j for j in jobs if j.startswith("moca_")]
    finally:
        (work / "params.yaml").write_text(original)
