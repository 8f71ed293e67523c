"""``socialbench media ...``: the media stage's commands, each with explicit paths.

Registered on the main app as ``app.add_typer(media_app, name="media")``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from socialbench.core.errors import ConfigError, SocialbenchError

media_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help=(
        "Media tools: probe, frames, clips, mosaic, audio (a benchmark's media step is `socialbench <benchmark> ...`)."
    ),
)
Opt = typer.Option
Arg = typer.Argument


def _settings(params: Path):
    from socialbench.core.config import load_params
    from socialbench.media.settings import MediaSettings

    return MediaSettings.from_params(load_params(params))


def _finite(option: str, value: float | None) -> None:
    if value is not None and not math.isfinite(value):
        raise ConfigError(f"{option} must be a number of seconds, got {value}")


@media_app.command("probe")
def probe_cmd(
    path: Path = Arg(..., help="media file"),
    count_frames: bool = Opt(False, help="count video packets even when the container gives a frame count"),
) -> None:
    """Print duration, fps, frame count, streams and rotation of a media file as JSON."""
    from socialbench.core.paths import check_io
    from socialbench.media.probe import probe

    check_io({"PATH": path}, {}, folders=("PATH",))  # a FIFO or device is refused before ffprobe opens it

    typer.echo(json.dumps(probe(path, count_frames=count_frames).to_dict(), indent=2, sort_keys=True))


@media_app.command("frames")
def frames_cmd(
    video: Path = Arg(..., help="video file"),
    count: int | None = Opt(None, help="N uniformly spaced frames (N >= 1)"),
    fps: str | None = Opt(None, help="frames per second of video time, > 0, e.g. 0.5 or 30000/1001"),
    max_side: int | None = Opt(None, help="longest side of the frames in pixels, >= 2 (default: media.frame_max_side)"),
    frames_dir: Path = Opt(Path("data/interim/frames"), help="content-addressed frame cache"),
    params: Path = Opt(Path("params.yaml"), help="the params file (its media section)"),
) -> None:
    """Sample frames of one video through the cache; print its manifest (index, timestamp, file)."""
    from socialbench.core.paths import check_io
    from socialbench.media.cache import MANIFEST, FrameCache
    from socialbench.media.sampling import FrameSampling, SamplingError, to_fraction

    check_io({"VIDEO": video, "--params": params}, {"--frames-dir": frames_dir}, folders=("--frames-dir",))
    if (count is None) == (fps is None):
        raise SocialbenchError("give exactly one of --count and --fps")
    if count is not None and count < 1:
        raise ConfigError(f"--count must be >= 1, got {count}")
    rate = None
    if fps is not None:
        try:
            rate = to_fraction(fps)
        except SamplingError:
            raise ConfigError(
                f"--fps must be a number of frames per second such as 0.5 or 30000/1001, got {fps!r}"
            ) from None
        if rate <= 0:
            raise ConfigError(f"--fps must be > 0, got {fps}")
    if max_side is not None and max_side < 2:
        raise ConfigError(f"--max-side must be >= 2 (pixels), got {max_side}")
    s = _settings(params)
    side = max_side if max_side is not None else s.frame_max_side
    if rate is None:
        sampling = FrameSampling.uniform(count, side, s.image_format)  # type: ignore[arg-type]
    else:
        sampling = FrameSampling.at_fps(rate, side, s.image_format)
    manifest = FrameCache(frames_dir).frames(video, sampling)
    typer.echo((manifest.folder / MANIFEST).read_text("utf-8"), nl=False)


@media_app.command("cut")
def cut_cmd(
    views: list[Path] = Arg(..., help="synchronized views of one recording"),
    start: float = Opt(..., min=0, help="window start, seconds"),
    end: float = Opt(..., min=0, help="window end, seconds (exclusive)"),
    out_dir: Path = Opt(..., help="clips go here as <view file name>.mp4, with clip.json (and mosaic.mp4)"),
    mosaic: str | None = Opt(
        None,
        help="also build the 2x2 mosaic of four views, given as their 0-based positions in VIEWS, in the order"
        " A,B,C,D (top-left, top-right, bottom-left, bottom-right); e.g. 1,2,3,4 for VIEWS = corner view"
        " followed by the four close-ups, 0,1,2,3 for four close-ups",
    ),
    params: Path = Opt(Path("params.yaml"), help="the params file (its media section)"),
) -> None:
    """Cut [start, end) from every view with identical timestamps (and the 2x2 mosaic).

    Each view must be a different file with a different file name (the clips are named after them)."""
    from socialbench.core.paths import check_io
    from socialbench.media.clips import Mosaic, check_cut_paths, check_mosaic_positions, cut_views
    from socialbench.media.encode import EncodeSettings

    check_io({"VIEWS": views, "--params": params}, {"--out-dir": out_dir}, folders=("--out-dir",))
    _finite("--start", start)
    _finite("--end", end)
    positions = None
    if mosaic is not None:
        parsed = _mosaic_positions(mosaic, len(views))
        try:
            positions = check_mosaic_positions(parsed, len(views), "--mosaic")
        except SocialbenchError as exc:  # out of range or repeated: a bad option, as a parse error is
            raise ConfigError(str(exc)) from None
    s = _settings(params)
    mos = None
    if positions is not None:
        mos = Mosaic(output=out_dir / "mosaic.mp4", views=positions, panel=s.mosaic_panel, font=s.label_font)
    outputs = [out_dir / f"{v.stem}.mp4" for v in views]
    check_cut_paths(views, outputs, mos)  # before anything is created
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        result = cut_views(
            views,
            start,
            end,
            outputs,
            mosaic=mos,
            encode=EncodeSettings(preset=s.clip_preset, crf=s.clip_crf),
            max_skew_frames=s.max_view_skew_frames,
        )
    except BaseException:
        if created and not any(out_dir.iterdir()):
            out_dir.rmdir()  # a failed cut leaves no trace (cut_views removes the clips it wrote)
        raise
    text = json.dumps(result.to_dict(), indent=2, sort_keys=True)
    (out_dir / "clip.json").write_text(text + "\n", "utf-8")
    typer.echo(text)


def _mosaic_positions(text: str, n_views: int) -> list[int]:
    """``--mosaic`` parsed into four integers; ConfigError naming the option. Whether they name four
    different views in range is :func:`socialbench.media.clips.check_mosaic_positions`'s to say."""
    parts = [x.strip() for x in text.split(",")]
    example = "1,2,3,4" if n_views >= 5 else "0,1,2,3"
    if len(parts) != 4:
        raise ConfigError(f"--mosaic needs four comma-separated view positions (A,B,C,D), e.g. {example}; got {text!r}")
    pos = []
    for x in parts:
        try:
            pos.append(int(x))
        except ValueError:
            raise ConfigError(
                f"--mosaic: view positions are whole numbers counting from 0, e.g. {example}; got {x!r} in {text!r}"
            ) from None
    return pos


@media_app.command("audio")
def audio_cmd(
    source: Path = Arg(..., help="media file with an audio stream"),
    output: Path = Arg(..., help="WAV file to write (mono, 16 kHz, 16-bit)"),
    start: float | None = Opt(None, min=0, help="window start, seconds"),
    end: float | None = Opt(None, min=0, help="window end, seconds (exclusive)"),
) -> None:
    """Extract mono 16 kHz WAV audio, optionally of a window."""
    from socialbench.core.paths import check_io
    from socialbench.media.clips import extract_audio

    check_io({"SOURCE": source}, {"OUTPUT": output})
    _finite("--start", start)
    _finite("--end", end)
    r = extract_audio(source, output, start=start, end=end)
    typer.echo(f"audio: {r.path} ({r.duration} s, {r.sample_rate} Hz mono)")
