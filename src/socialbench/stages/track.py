"""``socialbench track``: log one MLflow run per (benchmark, model, method) under a parent run, from the
score files given (an excluded pair has none); what each was made with is infer's record in its stats."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from socialbench.core.config import load_params
from socialbench.core.errors import DataError
from socialbench.core.hashing import sha256_file, sha256_json
from socialbench.core.io import read_file_bytes, write_json
from socialbench.core.paths import check_io
from socialbench.core.provenance import git_commit, made_with
from socialbench.results.layout import RUN_KINDS, exclusions, run_of
from socialbench.results.scores import read_score_files, row_category
from socialbench.results.tracking import (
    check_store_creatable,
    eval_key,
    log_evaluations,
    parse_stats,
    pipeline_artifact_files,
)
from socialbench.results.tracking_uri import resolve_tracking_uri, tracking_store_uri
from socialbench.results.viewer_page import page_media, relink_media
from socialbench.stages.common import BENCH_HELP, PARAMS_HELP, Opt, load_benchmark, stage_app

app = stage_app("Log the runs to MLflow.")


def run_file(folder: Path, kind: str, model: str, run: str) -> Path:
    """A run's file of ``kind`` in that kind's benchmark folder."""
    return folder / model / f"{run}{RUN_KINDS[kind]}"


def relinker(page: Path, href: str) -> Callable[[str], str]:
    """The run's page text with media read from another link (MLflow's copy uses the parent run's)."""
    return lambda link: relink_media(page.read_text("utf-8"), href, link)


def subset_param(subset: dict[str, Any]) -> str:
    """A subset run's MLflow param: what ran of the data (its stats' ``subset``)."""
    by = f", stratified by {subset['by']}" if subset.get("by") else ""
    return f"{subset['taken']} of {subset['total']} instances (n={subset['n']}, seed {subset['seed']}{by})"


@app.command("track")
def track(
    scores: list[Path] = typer.Argument(..., help="score files results/scores/<benchmark>/<model>/<method>.json"),
    instances: Path = Opt(..., help="the scored instances (their hash is recorded)"),
    predictions_dir: Path = Opt(..., help="results/predictions/<bench>"),
    stats_dir: Path = Opt(..., help="results/runs/<bench> (run accounting written by infer)"),
    tables_dir: Path = Opt(..., help="results/tables/<bench>"),
    out: Path = Opt(..., help="summary of logged runs (JSON)"),
    traces_dir: Path | None = Opt(
        None, help="results/traces/<bench> (per-instance traces written by infer; logged as artifacts)"
    ),
    viewer_dir: Path | None = Opt(
        None, help="results/viewer/<bench> (each run's trace viewer page; logged as an artifact)"
    ),
    params: Path = Opt(Path("params.yaml"), help=PARAMS_HELP),
    benchmark: str = Opt(..., help=BENCH_HELP),
) -> None:
    """Log one MLflow run per (benchmark, model, method) under a parent run; unchanged ones are skipped."""
    check_io(
        {
            "SCORES": scores,
            "--instances": instances,
            "--params": params,
            "--predictions-dir": predictions_dir,
            "--stats-dir": stats_dir,
            "--tables-dir": tables_dir,
            "--traces-dir": traces_dir,
            "--viewer-dir": viewer_dir,
        },
        {"--out": out},
        folders=("--predictions-dir", "--stats-dir", "--tables-dir", "--traces-dir", "--viewer-dir"),
    )
    bench = load_benchmark(benchmark)
    p = load_params(params)
    check_store_creatable(resolve_tracking_uri(p["mlflow"]))  # an output too: it must be creatable
    # every input is checked before MLflow is touched: never a half-logged run
    if not instances.is_file():
        raise DataError(str(instances), "instances file not found (--instances)")
    if not tables_dir.is_dir():
        raise DataError(str(tables_dir), "tables folder not found (--tables-dir; socialbench tables writes it)")
    tables = sorted(t for t in tables_dir.glob("*.*") if t.is_file())
    if not tables:
        raise DataError(
            str(tables_dir), "no tables in the tables folder (--tables-dir; socialbench tables writes them)"
        )
    loaded = read_score_files(bench, scores, p, params)
    # a score file of a pair params exclude has no run (another pipeline's file?)
    named = [(path, path.parent.name, run_of(path.name)) for path in scores]
    why = {(m, r): reason for m, r, reason in exclusions(p, benchmark, sorted({r for _, _, r in named}))}
    for path, model, run in named:
        if (model, run) in why:
            raise DataError(
                str(path),
                f"params exclude {model}/{run} (models.{model}): {why[(model, run)]};"
                " an excluded pair has no run to log",
            )
    data_hash = sha256_file(instances)
    commit = git_commit()
    evaluations = []
    for path in scores:
        model, method = path.parent.name, run_of(path.name)
        pred = run_file(predictions_dir, "predictions", model, method)
        stats_path = run_file(stats_dir, "runs", model, method)
        trace = run_file(traces_dir, "traces", model, method) if traces_dir is not None else None
        page = run_file(viewer_dir, "viewer", model, method) if viewer_dir is not None else None
        for file, why in (
            (pred, f"predictions file of {path} not found (--predictions-dir {predictions_dir})"),
            (stats_path, f"run accounting of {path} not found (--stats-dir {stats_dir}; infer writes it)"),
            (trace, f"trace file of {path} not found (--traces-dir {traces_dir}; infer writes it)"),
            (page, f"viewer page of {path} not found (--viewer-dir {viewer_dir}; socialbench viewer writes it)"),
        ):
            if file is not None and not file.is_file():
                raise DataError(str(file), why)
        run_stats = parse_stats(read_file_bytes(stats_path), str(stats_path))
        made = made_with(run_stats, stats_path, data_hash, instances)
        shards = page.parent / f"{page.stem}.shards" if page else None
        # tables and page media are the parent run's (once), the shards one folder: a few dozen files a run
        artifacts = [
            (pred, "predictions.jsonl"),
            (path, "scores.json"),
            (stats_path, "run_accounting.json"),
            *([(trace, "traces.jsonl")] if trace else []),
            *([(shards, f"viewer/{shards.name}")] if shards is not None and shards.is_dir() else []),
        ]
        viewer = None
        if page is not None:
            href, media = page_media(page)
            viewer = {"page": page, "folder": "viewer", "media": media, "relink": relinker(page, href)}
        entry = p["models"][model]
        identity = run_stats.get("backend_identity") or {}
        evaluations.append(  # what one run logs: params, hashes and provenance as made, scores, accounting
            {
                "benchmark": benchmark,
                "model": model,
                "method": method,
                "params": {
                    "model": model,
                    "backend": entry.get("backend"),
                    "method": method,
                    "seed": p["seed"],
                    "model_id": identity.get("model_id", entry.get("model_id")),
                    "model_revision": entry.get("revision") or identity.get("revision"),
                    "model_config_sha256": sha256_json(entry),
                    "backend_identity_sha256": sha256_json(identity) if identity else None,
                    # a subset run (params <benchmark>.subset) is logged as one: n, seed, instances taken of all
                    **({"subset": subset_param(run_stats["subset"])} if run_stats.get("subset") else {}),
                },
                # As they were when the predictions were made (infer's record), not as they are now.
                "content": {
                    "dataset_sha256": data_hash,
                    "dev_sha256": made["dev_sha256"],
                    # the benchmark's own record (MoCA: prompt_template_sha256, taxonomy_sha256)
                    **{
                        k: v
                        for k, v in made.items()
                        if k.endswith("_sha256") and k not in ("instances_sha256", "dev_sha256")
                    },
                    "predictions_sha256": sha256_file(pred),
                    "scores_sha256": sha256_file(path),
                },
                "provenance": {
                    "git_commit": commit,
                    "infer_git_commit": made["git_commit"],
                    **{f"version.{k}": v for k, v in sorted(made["versions"].items())},
                },
                "scores": loaded[(model, method)],
                "stats": run_stats,
                "category": row_category(entry) or None,  # as the tables show it (a text-only model's marked)
                "artifacts": artifacts,  # logged under <benchmark>/<model>/<method>/
                "viewer": viewer,  # the run's page: logged beside its shards, its media once in the parent run
            }
        )
    # Every table and figure (with the folder it has under the tables folder) is also an artifact of the parent run.
    summary = log_evaluations(
        evaluations,
        tracking_store_uri(p),  # MLFLOW_TRACKING_URI wins (a server's URI may hold a password); waits bounded
        p["mlflow"]["experiment"],
        Path("mlartifacts"),
        artifacts=pipeline_artifact_files(tables_dir),
    )
    write_json(
        out,
        {
            "evaluations": sorted(f"{e['model']}/{e['method']}" for e in evaluations),
            "keys": sorted(eval_key(e) for e in evaluations),
        },
    )
    typer.echo(f"track: {len(summary['new'])} new run(s), {len(summary['existing'])} unchanged")
