"""``socialbench media ...``: the media stage's commands, each with explicit paths.

Registered on the main app as ``app.add_typer(media_app, name="media")``.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Optional

import typer

from socialbench.errors import SocialbenchError

media_app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                        help="Media stage: probe, frames, clips, mosaic, audio; MoCA frames.")
Opt = typer.Option
Arg = typer.Argument


def _settings(params: Path):
    from socialbench.config import load_params
    from socialbench.media.moca import MediaSettings

    return MediaSettings.from_params(load_params(params))


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


@media_app.command("moca-frames")
def moca_frames(
    inputs: list[Path] = Opt(..., "--input", help="validated instances, data/interim/moca/<split>.jsonl (repeatable)"),
    outputs: list[Path] = Opt(..., "--output", help="instances with frames, data/processed/moca/<split>.jsonl (one per --input, same order)"),
    report: Path = Opt(Path("results/reports/media.jsonl"), help="media problems, one JSON line each"),
    report_md: Path = Opt(Path("results/reports/media.md"), help="readable media report"),
    frames_dir: Path = Opt(Path("data/interim/frames"), help="content-addressed frame cache"),
    params: Path = Opt(Path("params.yaml"), help="params file (media section)"),
    on_error: Optional[str] = Opt(None, help="skip | fail (default: media.on_error)"),
    root: Path = Opt(Path("."), help="repository root; instance media paths are relative to it"),
    prune: bool = Opt(False, help="afterwards, remove frame-cache entries these instances do not use"),
) -> None:
    """Add sampled frames (path, sha256, index, timestamp) to MoCA video-text instances.

    media.moca_frames uniform frames per clip, one decoding pass per clip, through the frame cache.
    Bad media is skipped or stops the run (media.on_error) and is always listed in the media report.
    """
    from socialbench.media.cache import FrameCache
    from socialbench.media.errors import MediaError
    from socialbench.media.moca import attach_frames
    from socialbench.media.report import MediaReport
    from socialbench.io import read_jsonl, write_jsonl

    _logging()
    if len(inputs) != len(outputs):
        raise SocialbenchError(f"{len(inputs)} --input but {len(outputs)} --output: give one output per input")
    settings = _settings(params)
    policy = on_error or settings.on_error
    if policy not in ("skip", "fail"):
        raise SocialbenchError(f"--on-error must be skip or fail, got {policy!r}")
    sampling = settings.moca_sampling()
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
    left = sum(c.left_out for c in rep.counts.values())
    typer.echo(f"media moca-frames: {sum(c.with_frames for c in rep.counts.values())} video instance(s) with frames,"
               f" {left} left out (see {report_md}); frame cache: {cache.hits} hit(s), {cache.misses} extracted")


@media_app.command("probe")
def probe_cmd(path: Path = Arg(..., help="media file"), count_frames: bool = Opt(False, help="count video packets even when the container gives a frame count")) -> None:
    """Print duration, fps, frame count, streams and rotation of a media file as JSON."""
    from socialbench.media.av import probe

    typer.echo(json.dumps(probe(path, count_frames=count_frames).to_dict(), indent=2, sort_keys=True))


@media_app.command("frames")
def frames_cmd(
    video: Path = Arg(..., help="video file"),
    count: Optional[int] = Opt(None, help="N uniformly spaced frames"),
    fps: Optional[str] = Opt(None, help="frames per second of video time, e.g. 0.5"),
    max_side: Optional[int] = Opt(None, help="longest side of the frames (default: media.frame_max_side)"),
    frames_dir: Path = Opt(Path("data/interim/frames"), help="content-addressed frame cache"),
    params: Path = Opt(Path("params.yaml")),
) -> None:
    """Sample frames of one video through the cache; print its manifest (index, timestamp, file)."""
    from socialbench.media.cache import MANIFEST, FrameCache
    from socialbench.media.sampling import FrameSampling

    if (count is None) == (fps is None):
        raise SocialbenchError("give exactly one of --count and --fps")
    s = _settings(params)
    side = max_side if max_side is not None else s.frame_max_side
    sampling = FrameSampling.uniform(count, side, s.image_format) if count is not None else FrameSampling.at_fps(fps, side, s.image_format)
    manifest = FrameCache(frames_dir).frames(video, sampling)
    typer.echo((manifest.folder / MANIFEST).read_text("utf-8"), nl=False)


@media_app.command("cut")
def cut_cmd(
    views: list[Path] = Arg(..., help="synchronized views of one recording"),
    start: float = Opt(..., help="window start, seconds"),
    end: float = Opt(..., help="window end, seconds (exclusive)"),
    out_dir: Path = Opt(..., help="clips go here as <view name>.mp4, with clip.json"),
    mosaic: Optional[str] = Opt(None, help="positions of the four close-ups in VIEWS, e.g. 1,2,3,4 (labelled A-D)"),
    params: Path = Opt(Path("params.yaml")),
) -> None:
    """Cut [start, end) from every view with identical timestamps (and the 2x2 mosaic)."""
    from socialbench.media.av import EncodeSettings, Mosaic, cut_views

    s = _settings(params)
    out_dir.mkdir(parents=True, exist_ok=True)
    mos = None
    if mosaic:
        pos = tuple(int(x) for x in mosaic.split(","))
        if len(pos) != 4:
            raise SocialbenchError(f"--mosaic needs four positions, got {mosaic!r}")
        mos = Mosaic(output=out_dir / "mosaic.mp4", views=pos, panel=s.mosaic_panel, font=s.label_font)  # type: ignore[arg-type]
    result = cut_views(views, start, end, [out_dir / f"{v.stem}.mp4" for v in views], mosaic=mos,
                       encode=EncodeSettings(preset=s.clip_preset, crf=s.clip_crf), max_skew_frames=s.max_view_skew_frames)
    (out_dir / "clip.json").write_text(json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n", "utf-8")
    typer.echo(json.dumps(result.to_dict(), indent=2, sort_keys=True))


@media_app.command("audio")
def audio_cmd(
    source: Path = Arg(..., help="media file with an audio stream"),
    output: Path = Arg(..., help="WAV file to write (mono, 16 kHz, 16-bit)"),
    start: Optional[float] = Opt(None, help="window start, seconds"),
    end: Optional[float] = Opt(None, help="window end, seconds (exclusive)"),
) -> None:
    """Extract mono 16 kHz WAV audio, optionally of a window."""
    from socialbench.media.av import extract_audio

    r = extract_audio(source, output, start=start, end=end)
    typer.echo(f"audio: {r.path} ({r.duration} s, {r.sample_rate} Hz mono)")
