"""``socialbench moca ...``: MoCA's own stage commands, each with explicit paths (mounted on the main
app by ``socialbench.cli``)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Optional

import typer

from socialbench.errors import SocialbenchError

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="MoCA's own stages: frames (sampled frames of video-text instances).")
Opt = typer.Option


@app.callback()
def _group() -> None:
    """MoCA's own stages (the shared ones are `socialbench prepare/infer/score/... --benchmark moca`)."""


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def _settings(params: Path):
    from socialbench.config import load_params
    from socialbench.media.settings import MediaSettings

    return MediaSettings.from_params(load_params(params))


@app.command("frames")
def frames(
    inputs: list[Path] = Opt(..., "--input", help="validated instances, data/interim/moca/<split>.jsonl (repeatable)"),
    outputs: list[Path] = Opt(..., "--output", help="instances with frames, data/processed/moca/<split>.jsonl (one per --input, same order)"),
    report: Path = Opt(Path("results/reports/media.jsonl"), help="media problems, one JSON line each"),
    report_md: Path = Opt(Path("results/reports/media.md"), help="readable media report"),
    frames_dir: Path = Opt(Path("data/interim/frames"), help="content-addressed frame cache"),
    params: Path = Opt(Path("params.yaml"), help="params file (media section)"),
    on_error: Optional[str] = Opt(None, help="skip | fail (default: media.on_error)"),
    root: Path = Opt(Path("."), help="repository root; instance media paths are relative to it"),
    prune: bool = Opt(False, help="afterwards, remove frame-cache entries these instances do not use (and what killed runs left in its .tmp/)"),
    index: Optional[Path] = Opt(
        None,
        help="last, write the JSON index of the frame-cache entries the processed instances name (sorted keys,"
        " frame count; same entries, same bytes); the pipeline writes data/interim/frames/index.json, the rule's"
        " output for the cache",
    ),
) -> None:
    """Add sampled frames (path, sha256, index, timestamp) to MoCA video-text instances.

    media.moca_frames uniform frames per clip, one decoding pass per clip, through the frame cache.
    Bad media is skipped or stops the run (media.on_error) and is always listed in the media report.
    """
    from socialbench.media.cache import FrameCache
    from socialbench.media.errors import MediaError
    from socialbench.media.report import MediaReport
    from socialbench.moca.media import attach_frames, moca_sampling
    from socialbench.io import read_jsonl, write_jsonl

    _logging()
    if len(inputs) != len(outputs):
        raise SocialbenchError(f"{len(inputs)} --input but {len(outputs)} --output: give one output per input")
    settings = _settings(params)
    policy = on_error or settings.on_error
    if policy not in ("skip", "fail"):
        raise SocialbenchError(f"--on-error must be skip or fail, got {policy!r}")
    sampling = moca_sampling(settings)
    cache = FrameCache(frames_dir)
    rep = MediaReport(settings={"on_error": policy, **{f"sampling.{k}": v for k, v in sampling.key().items()}})
    results = []
    try:
        for src, dst in zip(inputs, outputs):
            recs = attach_frames(read_jsonl(src), split=src.stem, source=str(src), cache=cache, sampling=sampling,
                                 report=rep, on_error=policy, root=root)
            results.append((dst, recs))
    except MediaError:
        rep.write(report, report_md)
        raise
    for dst, recs in results:
        write_jsonl(dst, recs)
    rep.write(report, report_md)
    if prune:
        cache.prune(cache.used)
    if index is not None:  # last: an index on disk means the processed files and the cache are complete
        cache.write_index(index, cache.used)
    left = sum(c.left_out for c in rep.counts.values())
    typer.echo(f"moca frames: {sum(c.with_frames for c in rep.counts.values())} video instance(s) with frames,"
               f" {left} left out (see {report_md}); frame cache: {cache.hits} hit(s), {cache.misses} extracted")
