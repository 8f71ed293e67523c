"""``socialbench prune-outputs`` and ``socialbench prune-lock``: drop what params no longer make."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.stages.common import BENCH_HELP, Opt, load_benchmark, stage_app

app = stage_app("Prune stale outputs and dvc.lock entries.")


def prune_run_outputs(
    benchmark: str, params: Path, results: Path, archive: Path | None, report: Path | None
) -> list[dict[str, str]]:
    """Remove (or archive) the benchmark's per-run outputs params no longer make; append the records
    of what was pruned to ``report``. The records."""
    from socialbench.core.config import load_params
    from socialbench.core.io import jsonl_text
    from socialbench.core.paths import check_io
    from socialbench.report.layout import RUN_KINDS, kind_dir
    from socialbench.report.prune import prune_outputs

    # the folders pruned are inputs: the archive and the report may be neither in them nor hold them
    kinds = {f"--results ({kind})": Path(kind_dir(kind, benchmark, results.as_posix())) for kind in RUN_KINDS}
    check_io(
        {"--params": params, **kinds},
        {"--archive": archive, "--report": report},
        folders=(*kinds, "--archive"),
    )
    load_benchmark(benchmark)  # an unknown benchmark is a ConfigError listing the registered ones
    pruned = prune_outputs(results, benchmark, load_params(params), archive)
    if pruned and report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        with report.open("a", encoding="utf-8") as fh:
            fh.write(jsonl_text(pruned))
    return pruned


@app.command("prune-outputs")
def prune_outputs(
    benchmark: str = Opt(..., help=BENCH_HELP),
    params: Path = Opt(Path("params.yaml"), help="the params whose models and <benchmark>.methods are kept"),
    results: Path = Opt(Path("results"), help="the results root holding <kind>/<benchmark>/<model>/<method>.*"),
    archive: Path | None = Opt(None, help="move stale outputs here (same relative paths) instead of deleting them"),
    report: Path | None = Opt(None, help="append one JSON line per pruned path (path, reason, action) here"),
) -> None:
    """Remove (or archive) the per-run outputs of models and methods params no longer name, or now exclude."""
    from socialbench.report.layout import RUN_KINDS

    pruned = prune_run_outputs(benchmark, params, results, archive, report)
    for rec in pruned:
        typer.echo(f"prune-outputs: {rec['path']}: {rec['reason']} ({rec['action']})")
    typer.echo(f"prune-outputs: {len(pruned)} stale path(s) of {benchmark} in {results}/{{{','.join(RUN_KINDS)}}}")


@app.command("prune-lock")
def prune_lock(
    repo: Path = Opt(Path("."), help="the DVC repository whose dvc.lock is pruned"),
) -> None:
    """Drop the dvc.lock entries of stages dvc.yaml no longer defines (a model or method removed from params)."""
    from socialbench.report.prune import prune_lock as prune

    dropped = prune(repo)
    for name in dropped:
        typer.echo(f"prune-lock: dropped {name} (no longer in dvc.yaml)")
    typer.echo(f"prune-lock: {len(dropped)} stale stage(s) dropped from {repo / 'dvc.lock'}")
