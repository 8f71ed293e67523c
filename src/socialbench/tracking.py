"""MLflow tracking: one run per (benchmark, model, method) evaluation, under one parent run per
pipeline invocation. Runs are keyed by the content they report, so an unchanged rerun logs nothing.
A file lock serialises writers, so parallel jobs never hit "database is locked"."""

from __future__ import annotations

import importlib.metadata as md
import os
import subprocess
from pathlib import Path
from typing import Any

from filelock import FileLock

from socialbench.hashing import sha256_json

PACKAGES = ("socialbench", "snakemake", "dvc", "mlflow", "pandas", "pandera", "torch", "transformers",
            "anthropic", "openai", "vllm", "ffmpeg-python", "pillow")  # fmt: skip
EVAL_KEY_TAG = "socialbench.eval_key"


def package_versions() -> dict[str, str]:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            continue
    return out


def git_commit(cwd: str | Path = ".") -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd, capture_output=True, text=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def eval_key(evaluation: dict[str, Any]) -> str:
    """What makes two evaluations the same: everything but the provenance that may drift without
    changing results (git commit, package versions) and the per-invocation accounting."""
    return sha256_json({k: evaluation[k] for k in ("benchmark", "model", "method", "params", "content")})


def _flat_metrics(scores: dict[str, dict[str, Any]]) -> dict[str, float]:
    out = {}
    for scenario, metrics in scores.items():
        for k, v in metrics.items():
            if v is not None:
                out[f"{scenario}.{k}"] = float(v)
    return out


def log_evaluations(
    evaluations: list[dict[str, Any]], tracking_uri: str, experiment: str, artifact_root: str | Path
) -> dict[str, Any]:
    """Log each evaluation as a child run unless a run with its key exists. Each evaluation dict:
    benchmark, model, method, params (dict), content (dict of hashes), provenance (dict),
    scores ({scenario: metrics}), stats (accounting dict), artifacts (list of paths)."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    import mlflow
    from mlflow.tracking import MlflowClient

    lock_target = tracking_uri.removeprefix("sqlite:///") if tracking_uri.startswith("sqlite:///") else ".mlflow"
    with FileLock(str(lock_target) + ".lock", timeout=600):
        mlflow.set_tracking_uri(tracking_uri)
        client = MlflowClient(tracking_uri)
        exp = client.get_experiment_by_name(experiment)
        if exp is None:
            exp_id = client.create_experiment(experiment, artifact_location=Path(artifact_root).resolve().as_uri())
        else:
            exp_id = exp.experiment_id
        new, existing = [], []
        for ev in evaluations:
            key = eval_key(ev)
            found = client.search_runs([exp_id], filter_string=f"tags.`{EVAL_KEY_TAG}` = '{key}'", max_results=1)
            (existing if found else new).append((key, ev, found[0].info.run_id if found else None))
        summary = {"new": [], "existing": [r for _, _, r in existing], "parent": None}
        if not new:
            return summary
        with mlflow.start_run(experiment_id=exp_id, run_name="pipeline") as parent:
            summary["parent"] = parent.info.run_id
            mlflow.set_tags({"socialbench.kind": "pipeline", "git_commit": new[0][1]["provenance"].get("git_commit", "")})
            mlflow.log_params({"n_new_evaluations": len(new), "n_unchanged_evaluations": len(existing)})
            for key, ev, _ in new:
                name = f"{ev['benchmark']}/{ev['model']}/{ev['method']}"
                with mlflow.start_run(experiment_id=exp_id, run_name=name, nested=True) as child:
                    mlflow.set_tags({EVAL_KEY_TAG: key, "benchmark": ev["benchmark"], "model": ev["model"], "method": ev["method"]})
                    params = {**ev["params"], **ev["content"], **ev["provenance"]}
                    mlflow.log_params({k: str(v)[:6000] for k, v in sorted(params.items())})
                    mlflow.log_metrics(_flat_metrics(ev["scores"]))
                    mlflow.log_metrics({k: float(v) for k, v in ev["stats"].items() if isinstance(v, (int, float))})
                    for path in ev["artifacts"]:
                        if Path(path).exists():
                            mlflow.log_artifact(str(path))
                    summary["new"].append(child.info.run_id)
        return summary
