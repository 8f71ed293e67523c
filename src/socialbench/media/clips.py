"""Clips of synchronized views, the 2x2 mosaic (:func:`cut_views`, :func:`build_mosaic`) and mono 16 kHz WAV
(:func:`extract_audio`); errors are MediaErrors. Cuts re-encode (bit-exact), not stream-copy (a keyframe early); AVI
views are cut by frame index (:func:`_counted_input`)."""

from __future__ import annotations

import bisect
import importlib.util
import logging
import math
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import ffmpeg

from socialbench.core.errors import SocialbenchError
from socialbench.media import errors as E
from socialbench.media.encode import EncodeSettings
from socialbench.media.errors import MediaError
from socialbench.media.frames import seek_time
from socialbench.media.probe import MediaInfo, VideoTimeline, probe, require_video, video_timeline
from socialbench.media.run import BITEXACT, GLOBAL_ARGS, SCALE_FLAGS, ffmpeg_path, run_ffmpeg
from socialbench.media.sampling import ffmpeg_seconds, to_fraction

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Mosaic:
    """A 2x2 mosaic of four views (positions in the view list), top-left to bottom-right, labelled by letter."""

    output: str | Path
    views: tuple[int, int, int, int] = (0, 1, 2, 3)
    labels: tuple[str, str, str, str] = ("A", "B", "C", "D")
    panel: tuple[int, int] | None = None  # size of each panel; None = size of the first view
    font: str | Path | None = None  # TrueType file for the labels; None = bundled DejaVu Sans Bold


@dataclass
class CutResult:
    start: float
    end: float
    views: list[dict[str, Any]] = field(default_factory=list)  # source, output, frames
    mosaic: dict[str, Any] | None = None  # output, frames, width, height, labels
    encode: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def label_font(font: str | Path | None = None) -> Path:
    """The mosaic labels' font: the one given, else matplotlib's DejaVu Sans Bold, else the system copy."""
    candidates: list[Path] = []
    if font is not None:
        candidates.append(Path(font))
    else:
        spec = importlib.util.find_spec("matplotlib")
        for loc in (spec.submodule_search_locations or []) if spec else []:
            candidates.append(Path(loc) / "mpl-data" / "fonts" / "ttf" / "DejaVuSans-Bold.ttf")
        candidates.append(Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"))
    for c in candidates:
        if c.is_file():
            return c
    raise SocialbenchError(f"no font for mosaic labels (tried {', '.join(map(str, candidates))}); set media.label_font")


def _check_window(info: MediaInfo, start: Fraction, end: Fraction) -> None:
    if start < 0 or end <= start:
        raise MediaError(info.path, E.BAD_WINDOW, f"window [{float(start)}, {float(end)}) is empty or negative")
    duration = info.video_duration if info.video is not None else info.duration
    if duration is None:
        return
    slack = Fraction(1, 2) / info.fps if info.fps else Fraction(0)
    if end > to_fraction(duration) + slack:
        raise MediaError(
            info.path,
            E.WINDOW_BEYOND_END,
            f"window [{float(start):.3f}, {float(end):.3f}) s ends after the video ({duration:.3f} s)",
        )


def check_views(
    views: Sequence[str | Path], start: Fraction, end: Fraction, max_skew_frames: float = 1.0
) -> list[MediaInfo]:
    """Probe the views of one recording and check they can be cut together: each has a video stream
    covering the window, and their lengths differ by at most ``max_skew_frames`` frames."""
    infos = [probe(v) for v in views]
    for info in infos:
        require_video(info)
        _check_window(info, start, end)
    durations = [(i.video_duration or 0.0, i) for i in infos]
    (short, si), (long, li) = min(durations, key=lambda d: d[0]), max(durations, key=lambda d: d[0])
    fps = min((i.fps for i in infos if i.fps), default=None)
    tolerance = float(max_skew_frames / fps) if fps else 0.0
    if long - short > tolerance + 1e-6:
        raise MediaError(
            si.path,
            E.VIEW_LENGTH_MISMATCH,
            f"views differ in length: {si.path} is {short:.3f} s but {li.path} is {long:.3f} s"
            f" (more than {max_skew_frames:g} frame apart)",
        )
    return infos


def check_mosaic_positions(positions: Sequence[Any], n_views: int, name: str = "mosaic") -> tuple[int, int, int, int]:
    """Four distinct 0-based positions among ``n_views``; else a SocialbenchError starting with ``name``."""
    pos = list(positions)
    if len(pos) != 4:
        raise SocialbenchError(f"{name}: needs four view positions (A, B, C, D), got {len(pos)}: {pos}")
    for x in pos:
        if isinstance(x, bool) or not isinstance(x, int):
            raise SocialbenchError(f"{name}: view positions must be integers, got {x!r}")
        if not 0 <= x < n_views:
            raise SocialbenchError(
                f"{name}: position {x} is out of range: positions count from 0, so with {n_views} view(s)"
                f" they run from 0 to {n_views - 1}"
            )
    repeated = sorted({x for x in pos if pos.count(x) > 1})
    if repeated:
        raise SocialbenchError(
            f"{name}: the four positions must name four different views, got {pos} (position {repeated[0]} twice)"
        )
    return (pos[0], pos[1], pos[2], pos[3])


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_cut_paths(views: Sequence[str | Path], outputs: Sequence[str | Path] | None, mosaic: Mosaic | None) -> None:
    """Every view is a different file, every output a different file, and no output overwrites a
    view; a mosaic names four different views. Else SocialbenchError naming the paths."""
    srcs = [Path(v) for v in views]
    for j, b in enumerate(srcs):
        for i, a in enumerate(srcs[:j]):
            if a.resolve() == b.resolve() or _same_file(a, b):
                raise SocialbenchError(
                    f"{b}: the same video is given twice as a view (positions {i} and {j}); synchronized views are"
                    " different files, each cut once"
                )
    outs = [(Path(o), f"the clip of {v}") for o, v in zip(outputs or [], views)]
    if mosaic is not None:
        check_mosaic_positions(mosaic.views, len(views))
        if len(mosaic.labels) != 4:
            raise SocialbenchError(f"a mosaic needs four labels, got {list(mosaic.labels)}")
        outs.append((Path(mosaic.output), "the mosaic"))
    for j, (b, what_b) in enumerate(outs):
        for a, what_a in outs[:j]:
            if a.resolve() == b.resolve():
                raise SocialbenchError(
                    f"{b}: {what_a} and {what_b} would both be written"
                    " to this file; give the views different file names"
                )
        for src in srcs:
            if src.resolve() == b.resolve() or _same_file(src, b):
                raise SocialbenchError(
                    f"{b}: {what_b} would overwrite the view {src}; write the clips to another folder"
                )


def cut_views(
    views: Sequence[str | Path],
    start: float | Fraction,
    end: float | Fraction,
    outputs: Sequence[str | Path] | None,
    *,
    mosaic: Mosaic | None = None,
    encode: EncodeSettings = EncodeSettings(),
    max_skew_frames: float = 1.0,
) -> CutResult:
    """Cut ``[start, end)`` seconds (from each view's video stream start) from every view in one ffmpeg process, each
    decoded once. ``outputs`` (one per view, or None for a mosaic only) receive the clips; ``mosaic`` puts four views
    into a 2x2 ``xstack``. All outputs must hold the same frame count within one (else DECODE_MISMATCH)."""
    if not views:
        raise ValueError("no views to cut")
    if outputs is not None and len(outputs) != len(views):
        raise ValueError(f"{len(views)} views but {len(outputs)} outputs")
    if outputs is None and mosaic is None:
        raise ValueError("nothing to write: give outputs, a mosaic or both")
    check_cut_paths(views, outputs, mosaic)
    s, e = to_fraction(start), to_fraction(end)
    infos = check_views(views, s, e, max_skew_frames)
    # AVI stores no presentation times: its views are cut by frame index (:func:`_counted_input`).
    timelines = [_counting_timeline(v, info) for v, info in zip(views, infos)]
    try:
        return _cut(views, infos, timelines, s, e, outputs, mosaic, encode, seek=True)
    except MediaError as err:
        if err.problem != E.DECODE_MISMATCH or not err.detail.startswith(_LANDED_ELSEWHERE):
            raise
        log.warning("%s: seeking gave other frames (%s); decoding from the start instead", err.path, err.detail)
    return _cut(views, infos, timelines, s, e, outputs, mosaic, encode, seek=False)


def _counting_timeline(view: str | Path, info: MediaInfo) -> VideoTimeline | None:
    """The frame timeline of a view whose packets carry no presentation times (AVI), else None: only
    AVI is listed, as listing a long MP4's packets for every clip would cost time for nothing."""
    if "avi" not in info.format_name.split(","):
        return None
    timeline = video_timeline(view)
    return timeline if timeline.dts_only else None


_LANDED_ELSEWHERE = "decoding did not start at frame"


def _counted_input(
    view: str | Path, timeline: VideoTimeline, start: Fraction, end: Fraction, seek: bool
) -> tuple[Any, int, int, Fraction]:
    """The frames ``start <= t < end`` of a video without presentation times, by frame index: in an AVI with B-frames
    the decoder's timestamps are guesses, so decoding starts at the keyframe before the first frame
    (:func:`~socialbench.media.frames.seek_time`), ``trim`` keeps frames by count and ``setpts`` retimes them. Returns
    the stream, the first and end frame indices, and the decoder timestamp the first kept frame must have."""
    lo = bisect.bisect_left(timeline.times, start)
    hi = bisect.bisect_left(timeline.times, end)
    pos = bisect.bisect_right(timeline.keyframes, lo) - 1
    key = timeline.keyframes[pos] if seek and pos >= 0 else 0
    opts: dict[str, Any] = {"threads": 1}
    ss = Fraction(0)
    if key > 0:
        ss = Fraction(ffmpeg_seconds(seek_time(timeline, key)))
        opts.update({"noaccurate_seek": None, "ss": ffmpeg_seconds(ss)})
    # What ffmpeg subtracts from the timestamps: -ss plus the container start, in whole ticks of
    # the stream's time base (rounded to nearest, as av_rescale_q does).
    shift = math.floor((ss + timeline.file_start) / timeline.time_base + Fraction(1, 2)) * timeline.time_base
    # A bound on reading (frames past it are trimmed anyway): the decoder's timestamps run late by
    # its delay, and one second more is left for the frames it holds back.
    last = timeline.decoder_time(max(hi - 1, lo)) + timeline.origin - shift
    opts["t"] = ffmpeg_seconds(max(last, Fraction(0)) + 1)
    ticks = round((timeline.times[lo] - start) / timeline.time_base) if lo < timeline.frame_count else 0
    stream = (
        ffmpeg.input(str(view), **opts)[str(require_video(timeline.info).index)]
        .filter("trim", start_frame=lo - key, end_frame=hi - key)
        .filter("showinfo", checksum=0)
        .filter("setpts", f"PTS-STARTPTS+{ticks}")
    )
    first = timeline.decoder_time(lo) + timeline.origin - shift if lo < hi else None
    return stream, lo, hi, first


def _cut(views, infos, timelines, s, e, outputs, mosaic, encode, *, seek: bool) -> CutResult:
    # Each view's video stream by its index (MediaInfo.video's, not cover art); -ss counts from the
    # container start. One thread per decoder and filter: on short clips threads cost more than they save.
    inputs = []
    counted: list[tuple[str, int, int, Fraction | None]] = []  # view, first and end frame, first timestamp
    for v, info, timeline in zip(views, infos, timelines):
        if timeline is not None:
            stream, lo, hi, first = _counted_input(v, timeline, s, e, seek)
            inputs.append(stream)
            counted.append((str(v), lo, hi, first))
            continue
        inputs.append(
            ffmpeg.input(str(v), threads=1, ss=ffmpeg_seconds(s + info.seek_offset), t=ffmpeg_seconds(e - s))[
                str(require_video(info).index)
            ]
        )
    n_uses = [int(outputs is not None) + (mosaic.views.count(i) if mosaic else 0) for i in range(len(views))]
    branches: list[list[Any]] = []
    for stream, uses in zip(inputs, n_uses):
        if uses > 1:
            sp = stream.split()
            branches.append([sp[k] for k in range(uses)])
        else:
            branches.append([stream])
    outs = []
    if outputs is not None:
        for i, path in enumerate(outputs):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            outs.append(ffmpeg.output(branches[i].pop(0), str(path), **encode.output_args()))
    mosaic_size = None
    if mosaic is not None:
        first = infos[mosaic.views[0]].display_size
        assert first is not None
        pw, ph = mosaic.panel or first
        pw, ph = pw - pw % 2, ph - ph % 2
        font = label_font(mosaic.font)
        panels = [
            branches[vi]
            .pop(0)
            .filter("scale", pw, ph, flags=SCALE_FLAGS)
            .filter("setsar", 1)
            .filter(
                "drawtext",
                fontfile=str(font),
                text=label,
                fontsize=max(10, ph // 8),
                fontcolor="white",
                box=1,
                boxcolor="black",
                boxborderw=max(2, ph // 60),
                x=max(2, ph // 40),
                y=max(2, ph // 40),
            )
            for vi, label in zip(mosaic.views, mosaic.labels)
        ]
        grid = ffmpeg.filter(panels, "xstack", inputs=4, layout="0_0|w0_0|0_h0|w0_h0")
        Path(mosaic.output).parent.mkdir(parents=True, exist_ok=True)
        outs.append(ffmpeg.output(grid, str(mosaic.output), **encode.output_args()))
        mosaic_size = (2 * pw, 2 * ph)
    loglevel = "info" if counted else "error"  # showinfo reports at "info"
    args = (
        ffmpeg.merge_outputs(*outs)
        .global_args(*GLOBAL_ARGS, "-loglevel", loglevel, "-filter_complex_threads", "1")
        .compile(cmd=ffmpeg_path(), overwrite_output=True)
    )
    written = [Path(p) for p in (outputs or [])] + ([Path(mosaic.output)] if mosaic is not None else [])
    try:
        # a full disk names the first file written (all of them are removed below)
        proc = run_ffmpeg(args, views[0], f"cutting [{float(s)}, {float(e)}) from {len(views)} view(s)", written[0])
        if counted:
            _check_counted(counted, proc.stderr.decode("utf-8", "replace"), check_start=seek)
        return _checked_cut(views, infos, s, e, outputs, mosaic, mosaic_size, encode)
    except BaseException:
        for path in written:  # a short or mismatched clip is never left behind as if it were whole
            path.unlink(missing_ok=True)
        raise


_SHOWINFO_LINE = re.compile(
    r"\[Parsed_showinfo_(\d+) @ [^\]]*\]\s*n:\s*(\d+)\s+pts:\s*(-?\d+)\s+pts_time:\s*(-?[\d.]+)"
)


def _check_counted(counted: list[tuple[str, int, int, Fraction | None]], log_text: str, *, check_start: bool) -> None:
    """Each view cut by frame index got exactly its frames (``showinfo`` after ``trim``, one per view in
    order) and, after a seek, its first frame has the wanted decoder timestamp (else DECODE_MISMATCH)."""
    seen: dict[int, list[tuple[int, Fraction]]] = {}
    for m in _SHOWINFO_LINE.finditer(log_text):
        seen.setdefault(int(m.group(1)), []).append((int(m.group(2)), Fraction(m.group(4))))
    instances = [seen[k] for k in sorted(seen)]
    expected = [c for c in counted if c[2] > c[1]]
    if len(instances) != len(expected):
        raise MediaError(
            counted[0][0], E.DECODE_MISMATCH, f"{len(expected)} views cut by frame index, {len(instances)} reported"
        )
    for (view, lo, hi, first), frames in zip(expected, instances):
        if len(frames) != hi - lo:
            raise MediaError(view, E.DECODE_MISMATCH, f"the cut should hold frames {lo}-{hi - 1}, it got {len(frames)}")
        # showinfo prints pts_time with 6 decimals: half a millisecond tells frames apart
        if check_start and first is not None and abs(frames[0][1] - first) > Fraction(1, 2000):
            raise MediaError(
                view,
                E.DECODE_MISMATCH,
                f"{_LANDED_ELSEWHERE} {lo}: its first frame came at {float(frames[0][1]):.6f} s,"
                f" not {float(first):.6f} s",
            )


def _expected_frames(info: MediaInfo, start: Fraction, end: Fraction) -> int | None:
    """Frames a constant-rate video holds in [start, end): those at k / fps inside it (None without a rate)."""
    fps = to_fraction(info.fps) if info.fps else None
    if not fps:
        return None
    return max(0, math.ceil(end * fps) - math.ceil(start * fps))


def _check_not_short(view: str | Path, info: MediaInfo, start: Fraction, end: Fraction, got: int) -> None:
    """A clip with fewer frames than the window holds at the view's rate: a source shorter than it claims
    or than the window, a MediaError naming it (the source's frame times tell a variable rate apart)."""
    expected = _expected_frames(info, start, end)
    if expected is None or got >= expected - 1:
        return
    window = f"[{float(start):.3f}, {float(end):.3f}) s"
    try:
        timeline = video_timeline(view)  # raises TRUNCATED when the container announces more than it holds
    except MediaError as err:
        raise MediaError(
            str(view), err.problem, f"{err.detail}; the clip of {window} would hold {got} of its {expected} frames"
        ) from None
    have = sum(1 for t in timeline.times if start <= t < end)
    if got < have - 1:
        raise MediaError(str(view), E.DECODE_MISMATCH, f"the clip of {window} holds {got} frames, the source {have}")
    if timeline.end < end and have < expected - 1:
        raise MediaError(
            str(view),
            E.WINDOW_BEYOND_END,
            f"the video's frames end at {float(timeline.end):.3f} s,"
            f" inside the window {window}: the clip would hold {got} of its {expected} frames",
        )


def _checked_cut(views, infos, s, e, outputs, mosaic, mosaic_size, encode) -> CutResult:
    result = CutResult(start=float(s), end=float(e), encode=asdict(encode))
    counts = []
    if outputs is not None:
        for v, info, path in zip(views, infos, outputs):
            n = probe(path).frame_count or 0
            _check_not_short(v, info, s, e, n)
            counts.append((n, str(path)))
            result.views.append({"source": str(v), "output": str(path), "frames": n})
    if mosaic is not None:
        n = probe(mosaic.output).frame_count or 0
        for vi in mosaic.views:
            _check_not_short(views[vi], infos[vi], s, e, n)
        counts.append((n, str(mosaic.output)))
        result.mosaic = {
            "output": str(mosaic.output),
            "frames": n,
            "width": mosaic_size[0] if mosaic_size else None,
            "height": mosaic_size[1] if mosaic_size else None,
            "views": [str(views[i]) for i in mosaic.views],
            "labels": list(mosaic.labels),
        }
    lo, hi = min(counts), max(counts)
    if lo[0] == 0 or hi[0] - lo[0] > 1:
        raise MediaError(lo[1], E.DECODE_MISMATCH, f"cut clips differ: {lo[1]} has {lo[0]} frames, {hi[1]} has {hi[0]}")
    return result


def build_mosaic(
    closeups: Sequence[str | Path],
    output: str | Path,
    *,
    start: float | Fraction = 0,
    end: float | Fraction | None = None,
    labels: tuple[str, str, str, str] = ("A", "B", "C", "D"),
    panel: tuple[int, int] | None = None,
    font: str | Path | None = None,
    encode: EncodeSettings = EncodeSettings(),
    max_skew_frames: float = 1.0,
) -> CutResult:
    """The 2x2 labelled mosaic of four synchronized close-ups over ``[start, end)`` (default: all)."""
    if len(closeups) != 4:
        raise ValueError(f"a mosaic needs four close-ups, got {len(closeups)}")
    if end is None:
        end = min(to_fraction(probe(c).video_duration or 0) for c in closeups)
    return cut_views(
        closeups,
        start,
        end,
        None,
        mosaic=Mosaic(output=output, views=(0, 1, 2, 3), labels=labels, panel=panel, font=font),
        encode=encode,
        max_skew_frames=max_skew_frames,
    )


@dataclass(frozen=True)
class AudioResult:
    path: str
    sample_rate: int
    channels: int
    duration: float | None


def extract_audio(
    source: str | Path,
    output: str | Path,
    *,
    start: float | Fraction | None = None,
    end: float | Fraction | None = None,
    sample_rate: int = 16000,
) -> AudioResult:
    """Mono 16-bit PCM WAV at ``sample_rate`` of the whole file or of ``[start, end)``, bit-exact."""
    info = probe(source)
    if info.audio is None:
        kinds = ", ".join(f"{s.codec_type} ({s.codec_name})" for s in info.streams) or "none"
        raise MediaError(str(source), E.NO_AUDIO, f"no audio stream (streams: {kinds})")
    in_opts: dict[str, str] = {}
    if start is not None or end is not None:
        s = to_fraction(start or 0)
        e = to_fraction(end) if end is not None else to_fraction(info.duration or 0)
        _check_window(info, s, e)
        in_opts = {"ss": ffmpeg_seconds(s + info.seek_offset), "t": ffmpeg_seconds(e - s)}
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    args = (
        ffmpeg.input(str(source), **in_opts)
        .audio.output(str(output), f="wav", ac=1, ar=sample_rate, **{"c:a": "pcm_s16le"}, **BITEXACT)
        .global_args(*GLOBAL_ARGS, "-loglevel", "error")
        .compile(cmd=ffmpeg_path(), overwrite_output=True)
    )
    run_ffmpeg(args, source, "extracting audio", out=output)
    out = probe(output)
    return AudioResult(path=str(output), sample_rate=sample_rate, channels=1, duration=out.duration)
