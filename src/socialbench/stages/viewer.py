"""``socialbench viewer``: one self-contained HTML page per run (media, answers, calls, method trace).

``--results-dir DIR --run MODEL/METHOD ...`` writes every run's page in one process, reading the run's
predictions and traces and writing its page where the results layout places them."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.core.errors import ConfigError
from socialbench.stages.common import BENCH_HELP, TAXONOMY_HELP, Opt, load_benchmark, stage_app

app = stage_app("Write the trace viewer pages.")


def layout_runs(benchmark: str, runs: list[str], results_dir: Path) -> list[tuple[Path, Path | None, Path]]:
    """(predictions, traces, page) of each ``--run MODEL/METHOD`` under ``results_dir``."""
    from socialbench.results.layout import run_path
    from socialbench.stages.score import parse_run

    pairs = [parse_run(r) for r in runs]
    if len(set(pairs)) != len(pairs):
        raise ConfigError(f"a --run is given twice ({', '.join(runs)})")
    root = str(results_dir)
    return [
        tuple(Path(run_path(kind, benchmark, m, r, root)) for kind in ("predictions", "traces", "viewer"))
        for m, r in pairs
    ]


def write_pages(
    benchmark: str,
    instances: Path,
    runs: list[tuple[Path, Path | None, Path]],
    taxonomy: Path | None = None,
    media_root: Path = Path("."),
    thumb_px: int = 256,
    frame_px: int = 160,
    max_frames: int = 8,
    echo=typer.echo,
    params: Path | None = None,
) -> None:
    """Write the page of each (predictions, traces, page) run. Only media under the media roots of
    ``media_root`` (its data folders and ``media.allowed_roots`` of ``params``) are embedded."""
    from socialbench.core.config import load_params
    from socialbench.core.io import write_text_atomic
    from socialbench.core.paths import MediaRoots, check_io
    from socialbench.results.viewer import build_page

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
    for predictions, traces, out in runs:
        page = build_page(
            bench,
            instances,
            predictions,
            traces,
            media_root=media_root,
            thumb_px=thumb_px,
            frame_px=frame_px,
            max_frames=max_frames,
            media_roots=roots,
        )
        write_text_atomic(out, page.html)
        echo(f"viewer: {page.rows} instances in {out} ({len(page.html.encode('utf-8')) // 1024} KiB)")
        if page.problems:
            echo(
                f"viewer: warning: {len(page.problems)} media file(s) not shown or changed, marked in the page"
                f" (e.g. {page.problems[0]})",
                err=True,
            )


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
) -> None:
    """Write one self-contained HTML page of a run: per instance its media, text, gold and predicted
    fields (wrong ones marked), calls and method trace, with filters (no server needed)."""
    if results_dir is not None:
        if predictions is not None or out is not None or traces is not None:
            raise ConfigError(
                "viewer: --results-dir and --run name the runs; give them without --predictions, --traces, --out"
            )
        if not run:
            raise ConfigError("viewer: --results-dir needs at least one --run MODEL/METHOD")
        runs = layout_runs(benchmark, run, results_dir)
    else:
        if run:
            raise ConfigError("viewer: --run names a run under --results-dir; give --results-dir with it")
        if predictions is None or out is None:
            raise ConfigError("viewer: give --predictions and --out, or --results-dir and --run MODEL/METHOD")
        runs = [(predictions, traces, out)]
    write_pages(benchmark, instances, runs, taxonomy, media_root, thumb_px, frame_px, max_frames, params=params)
