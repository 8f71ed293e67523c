"""``socialbench prune-outputs`` and ``socialbench prune-lock``: drop what params no longer make."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.core.config import load_params
from socialbench.core.errors import ConfigError
from socialbench.core.io import jsonl_text
from socialbench.core.paths import check_io
from socialbench.results.layout import RUN_KINDS, kind_dir
from socialbench.results.prune import prune_lock as prune
from socialbench.results.prune import prune_outputs as prune_stale_outputs
from socialbench.stages.common import BENCH_HELP, Opt, load_benchmark, stage_app

app = stage_app("Prune stale outputs and dvc.lock entries.")


@app.command("prune-outputs")
def prune_outputs(
    benchmark: str = Opt(..., help=BENCH_HELP),
    params: Path = Opt(Path("params.yaml"), help="the params whose models and <benchmark>.methods are kept"),
    results: Path = Opt(Path("results"), help="the results root holding <kind>/<benchmark>/<model>/<method>.*"),
    archive: Path | None = Opt(None, help="move stale outputs here (same relative paths) instead of deleting them"),
    report: Path | None = Opt(None, help="append one JSON line per pruned path (path, reason, action) here"),
    kind: list[str] = Opt(
        [],
        help="a result kind whose folder is pruned (repeat for each; default: every kind): predictions, traces,"
        " runs, scores, outcomes, viewer, metrics",
    ),
) -> None:
    """Remove (or archive) the per-run outputs of models and methods params no longer name, or now exclude."""
    unknown = [k for k in kind if k not in RUN_KINDS]
    if unknown:
        raise ConfigError(f"prune-outputs: --kind {unknown[0]} is no result kind; one of {', '.join(RUN_KINDS)}")
    kinds = list(dict.fromkeys(kind or RUN_KINDS))
    # the folders pruned are inputs: the archive and the report may be neither in them nor hold them
    folders = {f"--results ({k})": Path(kind_dir(k, benchmark, results.as_posix())) for k in kinds}
    check_io(
        {"--params": params, **folders},
        {"--archive": archive, "--report": report},
        folders=(*folders, "--archive"),
    )
    load_benchmark(benchmark)  # an unknown benchmark is a ConfigError listing the registered ones
    pruned = prune_stale_outputs(results, benchmark, load_params(params), archive, kinds)
    if pruned and report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        with report.open("a", encoding="utf-8") as fh:
            fh.write(jsonl_text(pruned))
    for rec in pruned:
        typer.echo(f"prune-outputs: {rec['path']}: {rec['reason']} ({rec['action']})")
    typer.echo(f"prune-outputs: {len(pruned)} stale path(s) of {benchmark} in {results}/{{{','.join(kinds)}}}")


@app.command("prune-lock")
def prune_lock(
    repo: Path = Opt(Path("."), help="the DVC repository whose dvc.lock is pruned"),
) -> None:
    """Drop the dvc.lock entries of stages dvc.yaml no longer defines (a model or method removed from params)."""
    dropped = prune(repo)
    for name in dropped:
        typer.echo(f"prune-lock: dropped {name} (no longer in dvc.yaml)")
    typer.echo(f"prune-lock: {len(dropped)} stale stage(s) dropped from {repo / 'dvc.lock'}")
