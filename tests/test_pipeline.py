"""End to end: the whole Snakemake pipeline on the embedded demo, in a fresh copy of the repo."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def run(cmd, cwd, env):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def pipeline_run(tmp_path_factory):
    repo = Path(__file__).resolve().parents[1]
    work = tmp_path_factory.mktemp("clone") / "repo"
    # A fresh copy of what git would check out (tracked and untracked-but-not-ignored files).
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        src = repo / f
        if src.is_file():
            dst = work / f
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "MLFLOW_DISABLE_TELEMETRY": "true", "DVC_NO_ANALYTICS": "1"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"]):
        run(cmd, work, env)
    out = run(["snakemake", "--cores", "2"], work, env)
    return work, env, out


def test_tables_for_every_scenario_with_every_model(pipeline_run):
    work, _, _ = pipeline_run
    params = __import__("yaml").safe_load((work / "params.yaml").read_text())
    for scenario in ("affection", "intent", "stance"):
        for ext in ("md", "csv", "tex"):
            assert (work / f"results/tables/moca/{scenario}.{ext}").is_file()
        md = (work / f"results/tables/moca/{scenario}.md").read_text()
        for model in params["models"]:
            assert f"| {model} |" in md


def test_one_mlflow_run_per_model_and_method_under_a_parent(pipeline_run):
    work, _, _ = pipeline_run
    from mlflow.tracking import MlflowClient

    params = __import__("yaml").safe_load((work / "params.yaml").read_text())
    client = MlflowClient(f"sqlite:///{work}/mlflow.db")
    exp = client.get_experiment_by_name("socialbench")
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if r.data.tags.get("socialbench.kind") == "pipeline"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId")]
    assert len(parents) == 1
    assert len(children) == len(params["models"]) * len(params["moca"]["methods"])
    assert all(r.data.params.get("prompt_template_sha256") and r.data.params.get("dataset_sha256") for r in children)


def test_second_snakemake_has_nothing_to_do(pipeline_run):
    work, env, _ = pipeline_run
    out = run(["snakemake", "-n", "--cores", "2"], work, env)
    assert "Nothing to be done" in out


def test_outputs_match_the_committed_dvc_lock(pipeline_run):
    # The run ends with `dvc commit`; it leaves dvc.lock untouched only if every output is
    # byte-identical to what the committed lock records (determinism) and the lock is current.
    work, env, _ = pipeline_run
    proc = subprocess.run(["git", "diff", "--stat", "--exit-code", "dvc.lock"], cwd=work, capture_output=True, text=True)
    assert proc.returncode == 0, "dvc.lock changed: run `dvc repro` and commit dvc.lock\n" + proc.stdout


def test_dvc_repro_is_up_to_date_after_the_main_job(pipeline_run):
    work, env, _ = pipeline_run
    out = run(["dvc", "repro"], work, env)
    assert "Data and pipelines are up to date" in out, out


def test_headline_metrics_cover_every_model(pipeline_run):
    work, _, _ = pipeline_run
    head = json.loads((work / "results/metrics/moca.json").read_text())
    assert {"random.direct", "prior.direct"} <= set(head)
    assert set(head["random.direct"]) == {"affection", "intent", "stance"}


def test_params_change_of_one_model_dirties_only_that_models_stages(pipeline_run):
    work, env, _ = pipeline_run
    params_path = work / "params.yaml"
    original = params_path.read_text()
    try:
        import yaml

        p = yaml.safe_load(original)
        p["models"]["prior"]["max_tokens"] = 999
        params_path.write_text(yaml.safe_dump(p, sort_keys=False))
        out = run(["dvc", "status", "--json"], work, env)
        changed = set(json.loads(out[out.index("{"):]))
        infer_stages = {s for s in changed if s.startswith("moca_infer@")}
        assert infer_stages == {"moca_infer@prior-direct"}, changed
    finally:
        params_path.write_text(original)


def test_snakemake_rerun_creates_no_new_mlflow_runs(pipeline_run):
    work, env, _ = pipeline_run
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{work}/mlflow.db")
    exp = client.get_experiment_by_name("socialbench")
    before = len(client.search_runs([exp.experiment_id]))
    run(["snakemake", "--cores", "2", "--forcerun", "moca_track"], work, env)
    assert len(client.search_runs([exp.experiment_id])) == before
