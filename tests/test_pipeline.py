"""End to end: the whole Snakemake pipeline on the embedded demo, in a fresh copy of the repo (built once
per test command: tests/conftest.py's ``demo_pipeline``; a test that changes the tree works in its own copy)."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.pipeline import run

pytestmark = pytest.mark.slow


@pytest.fixture
def pipeline_run(demo_pipeline):
    """The session's one demo run (tests/conftest.py), read only."""
    return demo_pipeline


@pytest.fixture
def own_run(demo_pipeline_copy):
    """A copy of the finished run for a test that changes params, code or outputs."""
    return demo_pipeline_copy


def test_tables_for_every_scenario_with_every_model(pipeline_run):
    work, _, _ = pipeline_run
    params = __import__("yaml").safe_load((work / "params.yaml").read_text())
    for scenario in ("affection", "intent", "stance"):
        for ext in ("md", "csv", "tex"):
            assert (work / f"results/tables/moca/{scenario}.{ext}").is_file()
        md = (work / f"results/tables/moca/{scenario}.md").read_text()
        for model, entry in params["models"].items():
            if "moca" in (entry.get("benchmarks") or ["moca"]):
                assert f"| {model} |" in md
            else:  # a model of another benchmark only: a note, no row
                assert f"| {model} |" not in md


def test_one_mlflow_run_per_model_and_method_under_a_parent(pipeline_run):
    work, _, _ = pipeline_run
    from mlflow.tracking import MlflowClient

    params = __import__("yaml").safe_load((work / "params.yaml").read_text())
    client = MlflowClient(f"sqlite:///{work}/mlflow.db")
    exp = client.get_experiment_by_name("socialbench")
    runs = client.search_runs([exp.experiment_id])
    from socialbench.core.benchmarks import pair_excluded

    moca_parents = {
        r.info.run_id
        for r in runs
        if r.data.tags.get("socialbench.kind") == "pipeline"
        and any(
            c.data.tags.get("mlflow.parentRunId") == r.info.run_id and c.data.tags.get("benchmark") == "moca"
            for c in runs
        )
    }
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") and r.data.tags.get("benchmark") == "moca"]
    assert len(moca_parents) == 1
    from socialbench.results.layout import model_runs

    # every run a model makes, its option-order runs (moca.robustness) included
    run_pairs = [(m, run) for m, runs in model_runs(params, "moca", params["moca"]["methods"]).items() for run in runs]
    assert run_pairs and all(not pair_excluded(params, "moca", m, r.split("__order")[0]) for m, r in run_pairs)
    assert sorted((r.data.tags["model"], r.data.tags["method"]) for r in children) == sorted(run_pairs)
    assert all(r.data.params.get("prompt_template_sha256") and r.data.params.get("dataset_sha256") for r in children)


def test_second_snakemake_has_nothing_to_do(pipeline_run):
    work, env, _ = pipeline_run
    out = run(["snakemake", "-n", "--cores", "2"], work, env)
    assert "Nothing to be done" in out


def test_a_copy_of_the_run_has_nothing_to_do(own_run):
    # What the tests that change the tree rely on: their copy reruns only what they change.
    work, env, _ = own_run
    assert "Nothing to be done" in run(["snakemake", "-n", "--cores", "2"], work, env)


def test_outputs_match_the_committed_dvc_lock(shared_dir, pipeline_run):
    # The run ends with `dvc commit`; it leaves dvc.lock untouched only if every output is
    # byte-identical to what the committed lock records (determinism) and the lock is current.
    # The committed lock is built with ../shared beside the repository (its AMI meetings and MoCA
    # sources), hence shared_dir: without it the data and the AMI rows differ by design.
    work, env, _ = pipeline_run
    proc = subprocess.run(
        ["git", "diff", "--stat", "--exit-code", "dvc.lock"], cwd=work, capture_output=True, text=True
    )
    assert proc.returncode == 0, "dvc.lock changed: run `dvc repro` and commit dvc.lock\n" + proc.stdout


def test_dvc_repro_is_up_to_date_after_the_main_job(pipeline_run):
    work, env, _ = pipeline_run
    out = run(["dvc", "repro"], work, env)
    assert "Data and pipelines are up to date" in out, out


def test_the_plan_after_the_demo_run_matches_every_runs_stats_and_plans_no_new_call(pipeline_run):
    # Issue 32, point 3: planned calls equal each run's requests (single-call runs) or contain them
    # (CoDAR), input tokens within 25 % of the stats, and 0 new calls once the run is done.
    work, env, _ = pipeline_run
    proc = subprocess.run(["socialbench", "plan", "--json"], cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert rows
    for r in rows:
        stats = json.loads((work / f"results/runs/{r['benchmark']}/{r['model']}/{r['run']}.stats.json").read_text())
        where = f"{r['benchmark']}/{r['model']}/{r['run']}"
        assert r["new_calls_max"] == 0, where
        assert r["calls_min"] <= stats["requests"] <= r["calls_max"], where
        if stats["input_tokens"]:
            assert abs(r["input_tokens"] - stats["input_tokens"]) <= 0.25 * stats["input_tokens"], where


def test_headline_metrics_cover_every_model(pipeline_run):
    work, _, _ = pipeline_run
    head = json.loads((work / "results/metrics/moca.json").read_text())
    assert {"random.direct", "prior.direct"} <= set(head)
    assert set(head["random.direct"]) == {"affection", "intent", "stance", "overall"}  # overall: macro over scenarios


def test_params_change_of_one_model_dirties_only_that_models_stages(own_run):
    import yaml

    work, env, _ = own_run
    params_path = work / "params.yaml"
    p = yaml.safe_load(params_path.read_text())
    p["models"]["prior"]["max_tokens"] = 999
    params_path.write_text(yaml.safe_dump(p, sort_keys=False))
    out = run(["dvc", "status", "--json"], work, env)
    changed = set(json.loads(out[out.index("{") :]))
    infer_stages = {s for s in changed if "_infer_" in s}
    # that model's inference stages only: one per benchmark it runs on, all its methods in it
    assert infer_stages == {"moca_infer_prior", "meetingtom_infer_prior"}, changed


def test_snakemake_rerun_creates_no_new_mlflow_runs(own_run):
    work, env, _ = own_run
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{work}/mlflow.db")
    exp = client.get_experiment_by_name("socialbench")
    before = len(client.search_runs([exp.experiment_id]))
    # the track output as the target: the forced track job alone, not the closing `dvc commit` it would trigger
    run(["snakemake", "results/mlflow/moca.json", "--cores", "2", "--forcerun", "moca_track"], work, env)
    assert len(client.search_runs([exp.experiment_id])) == before


TOY_RULES = """# toybench (test-only): its data stage; the shared stages come from rules/infer.smk and the rest.
stage(
    "toybench_data",
    benchmark="toybench",
    rules=["toybench_data"],
    targets=["data/processed/toybench/test.jsonl", "data/processed/toybench/dev.jsonl"],
    params=["toybench.n"],
    outs=["data/processed/toybench"],
)


rule toybench_data:
    input:
        code=stage_code("toybench_data"),
    output:
        test="data/processed/toybench/test.jsonl",
        dev="data/processed/toybench/dev.jsonl",
    params:
        triggers=stage_params("toybench_data", "toybench_data"),
    log:
        "logs/data/toybench.log",
    shell:
        "socialbench demo --benchmark toybench --params params.yaml --out-dir data/processed/toybench > {log} 2>&1"


BENCH["toybench"] = {
    "instances": "data/processed/toybench/test.jsonl",
    "dev": "data/processed/toybench/dev.jsonl",
    "tables": ["accuracy.md"],
    "outputs": {"data": ["data/processed/toybench/test.jsonl", "data/processed/toybench/dev.jsonl"]},
    "dvc": {"data": ["data/processed/toybench"], "infer_params": [], "tables_params": ["seed", "models", "toybench"]},
}
"""


def test_a_second_benchmark_leaves_every_moca_stage_up_to_date_and_runs_through_the_shared_stages(own_run):
    # One package, one params section, one rules file declaring its own stages: neither tool reruns
    # anything of MoCA, and the shared infer/score/tables/track rules run the new benchmark.
    import yaml

    work, env, _ = own_run  # env: the copy's packages first, toybench included
    shutil.copytree(Path(__file__).parent / "helpers" / "toybench", work / "src/socialbench/toybench")
    (work / "rules/toybench.smk").write_text(TOY_RULES)
    (work / "params.yaml").write_text((work / "params.yaml").read_text() + "\ntoybench:\n  methods: [direct]\n  n: 6\n")
    dry = run(["snakemake", "-n", "--cores", "2"], work, env)  # reading the workflow writes dvc.yaml, its stages too
    stages = yaml.safe_load((work / "dvc.yaml").read_text())["stages"]
    toy_models = {"random", "prior", "minilm"}  # the others run on other benchmarks only
    assert {f"toybench_infer_{m}" for m in toy_models} | {"toybench_score", "toybench_tables"} <= set(stages)
    assert "src/socialbench/toybench/benchmark.py" in stages["toybench_data"]["deps"]
    out = run(["dvc", "status", "--json"], work, env)
    changed = set(json.loads(out[out.index("{") :]))
    assert changed and all(s.startswith("toybench_") for s in changed), changed
    jobs = [line.split()[0] for line in dry.split("Job stats:", 1)[1].splitlines()[3:] if line.split()[:1]]
    want = {"toybench_data", "toybench_score", "toybench_tables", "toybench_track"}
    assert want | {f"toybench_infer_{m}" for m in toy_models} <= set(jobs), jobs
    assert not [j for j in jobs if j.startswith("moca_")], dry
    run(["snakemake", "--cores", "2", "results/mlflow/toybench.json"], work, env)
    table = (work / "results/tables/toybench/accuracy.md").read_text()
    assert all(f"| {m} | direct |" in table for m in toy_models)
    assert "Nothing to be done" in run(["snakemake", "-n", "--cores", "2", "results/mlflow/toybench.json"], work, env)


def test_snakemake_report_holds_the_tables_figures_metrics_and_reports(pipeline_run, tmp_path):
    # The report embeds each flagged file with its category and caption: one HTML file records the run.
    # Written outside the run (it changes nothing there but Snakemake's log, as a dry run does): no copy.
    work, env, _ = pipeline_run
    run(["snakemake", "--report", str(tmp_path / "report.html")], work, env)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    for needle in (
        "affection.csv",
        "fig6_affection.png",
        "table1_overall.csv",
        "headline metrics",
        "media.md",
        "moca_prepare_test.jsonl",
        "dropped records",
    ):
        assert needle in html, needle


def test_dvc_metrics_show_prints_one_row_per_benchmark_model_and_method(pipeline_run):
    import yaml

    work, env, _ = pipeline_run
    p = yaml.safe_load((work / "params.yaml").read_text())
    rows = [line.split()[0] for line in run(["dvc", "metrics", "show"], work, env).splitlines()[1:] if line.strip()]
    from socialbench.core.benchmarks import pair_excluded

    expected = [
        f"results/metrics/{b}/{m}/{meth}.json"
        for b in ("moca", "meetingtom")
        for m in p["models"]
        for meth in p[b]["methods"]
        if not pair_excluded(p, b, m, meth)
    ]
    assert set(expected) <= set(rows), rows
    # the metrics folders are Snakemake folder outputs: its marker file in them is no row (.dvcignore)
    assert all(r.endswith(".json") for r in rows), rows


def test_removing_a_model_from_params_archives_its_outputs_and_drops_its_lock_stages(own_run):
    import yaml

    work, env, _ = own_run
    p = yaml.safe_load((work / "params.yaml").read_text())
    del p["models"]["random"]
    for b in ("moca", "meetingtom"):  # what names the model goes with it (check-params refuses a dangling name)
        if (p[b].get("robustness") or {}).get("models"):
            p[b]["robustness"]["models"] = [m for m in p[b]["robustness"]["models"] if m != "random"]
    (work / "params.yaml").write_text(yaml.safe_dump(p, sort_keys=False))
    run(["snakemake", "--cores", "2"], work, env)
    assert "Nothing to be done" in run(["snakemake", "-n", "--cores", "2"], work, env)
    status = run(["dvc", "status", "--json"], work, env)
    assert json.loads(status[status.index("{") :]) == {}, status
    locked = yaml.safe_load((work / "dvc.lock").read_text())["stages"]
    assert not [s for s in locked if "@random-" in s]
    assert not any(
        (work / "results" / kind / b / "random").exists()
        for kind in ("predictions", "traces", "runs", "scores", "viewer")
        for b in ("moca", "meetingtom")
    )
    # its model calls are archived; its scores, pages and metrics went with the folders their jobs rewrote
    assert (work / "results/archive/predictions/moca/random/direct.jsonl").is_file()
    assert not (work / "results/archive/scores/moca/random").exists()
    assert "| random |" not in (work / "results/tables/moca/affection.md").read_text()
    assert not [
        key for key in json.loads((work / "results/metrics/moca.json").read_text()) if key.startswith("random.")
    ]
