"""``socialbench viewer``: a static HTML page per run (media, answers, calls, method trace), its instances in
shard files beside it, thumbnails once in a media folder."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.core.config import load_params
from socialbench.core.errors import ConfigError
from socialbench.core.paths import MediaRoots, check_io
from socialbench.core.run_name import RunName
from socialbench.results.layout import kind_dir
from socialbench.results.viewer import build_view, write_view
from socialbench.results.viewer_media import MediaStore
from socialbench.stages.common import BENCH_HELP, TAXONOMY_HELP, Opt, load_benchmark, stage_app
from socialbench.stages.score import layout_files

app = stage_app("Write the trace viewer pages, their shards and media.")


def order_siblings(predictions: Path, every: list[Path]) -> list[tuple[int, Path]]:
    """(k, predictions) of the order runs of the run of ``predictions`` among ``every`` (same model
    folder), by k; none for an order run itself. Its page shows every order's answers."""
    run = RunName.parse(predictions.stem)
    if run.order:
        return []
    found = []
    for p in every:
        if p.parent != predictions.parent:
            continue
        other = RunName.parse(p.stem)
        if other.order and other.run == run:
            found.append((other.order, p))
    return sorted(found)


@app.command("viewer")
def viewer(
    instances: Path = Opt(..., help="the instances the run was made for (JSON lines)"),
    benchmark: str = Opt(..., help=BENCH_HELP),
    results_dir: Path | None = Opt(
        None,
        help="results root: each --run's predictions and traces are read from, and its page written to,"
        " <kind>/<benchmark>/<model>/<method> under it",
    ),
    run: list[str] = Opt([], help="MODEL/METHOD, a run whose page to write under --results-dir (repeat for each)"),
    predictions: Path | None = Opt(None, help="the run's prediction records (JSON lines)"),
    out: Path | None = Opt(None, help="the page (HTML; results/viewer/<benchmark>/<model>/<method>.html)"),
    media_dir: Path | None = Opt(
        None,
        help="the folder of the thumbnails, shared by the benchmark's runs (default: results/viewer/<benchmark>/media"
        " with --results-dir, else media/ beside the folder of --out)",
    ),
    traces: Path | None = Opt(None, help="the run's traces (JSON lines): calls and what the method keeps"),
    taxonomy: Path | None = Opt(None, help=TAXONOMY_HELP),
    media_root: Path = Opt(
        Path("."),
        help="the repository root: relative media paths are read under it, and only media in its data folders"
        " (or media.allowed_roots of --params) are embedded",
    ),
    params: Path | None = Opt(None, help="params file whose media.allowed_roots admit more media folders"),
    thumb_px: int = Opt(256, min=16, help="longest side of embedded images (pixels)"),
    frame_px: int = Opt(160, min=16, help="longest side of embedded video frames (pixels)"),
    max_frames: int = Opt(8, min=1, help="frames shown per video instance (evenly spread)"),
    shard_rows: int = Opt(100, min=1, help="instances per shard file (the page loads a shard as it needs its rows)"),
) -> None:
    """Write a run's HTML page: per instance its media, text, gold and predicted fields (wrong ones
    marked), calls and method trace, with filters and search (no server needed)."""
    if results_dir is not None:
        if predictions is not None or out is not None or traces is not None:
            raise ConfigError(
                "viewer: --results-dir and --run name the runs; give them without --predictions, --traces, --out"
            )
        if not run:
            raise ConfigError("viewer: --results-dir needs at least one --run MODEL/METHOD")
        runs = layout_files(("predictions", "traces", "viewer"), benchmark, run, results_dir)
        media_dir = media_dir or Path(kind_dir("viewer", benchmark, str(results_dir))) / "media"
    else:
        if run:
            raise ConfigError("viewer: --run names a run under --results-dir; give --results-dir with it")
        if predictions is None or out is None:
            raise ConfigError("viewer: give --predictions and --out, or --results-dir and --run MODEL/METHOD")
        runs = [(predictions, traces, out)]
        media_dir = media_dir or out.parent.parent / "media"
    check_io(
        {
            "--instances": instances,
            "--predictions": [r[0] for r in runs],
            "--traces": [r[1] for r in runs if r[1] is not None],
            "--taxonomy": taxonomy,
            "--params": params,
        },
        {"--out": [r[2] for r in runs]},
    )
    roots = MediaRoots.from_params(load_params(params) if params is not None else None, media_root)
    bench = load_benchmark(benchmark, taxonomy)
    store = MediaStore(media_dir, media_root, roots)  # one for all runs: each thumbnail made once
    for run_predictions, run_traces, page in runs:
        orders = order_siblings(run_predictions, [r[0] for r in runs])
        view = build_view(
            bench,
            instances,
            run_predictions,
            run_traces,
            page,
            store,
            thumb_px=thumb_px,
            frame_px=frame_px,
            max_frames=max_frames,
            shard_rows=shard_rows,
            orders=orders,
        )
        write_view(view, page)
        typer.echo(
            f"viewer: {view.rows} instances in {page} and {len(view.shards)} shard(s)"
            f" ({view.size // 1024} KiB; media in {media_dir})"
        )
        if view.problems:
            typer.echo(
                f"viewer: warning: {len(view.problems)} media file(s) not shown or changed, marked in the page"
                f" (e.g. {view.problems[0]})",
                err=True,
            )
