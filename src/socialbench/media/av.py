"""The one place that builds ffmpeg and ffprobe command lines (through ffmpeg-python).

* :func:`probe` - duration, fps, frame count, streams, rotation of a file.
* :func:`video_timeline` - exact presentation time of every video frame (one demux-only ffprobe).
* :func:`extract_frames` - chosen frames of a video in ONE decoding pass (``select`` filter),
  with the decoder's own timestamp of each frame read back (``showinfo``) and checked.
* :func:`cut_views` - cut ``[start, end)`` from several synchronized views with identical
  timestamps, optionally with the 2x2 labelled mosaic of four of them, in one ffmpeg process.
* :func:`build_mosaic` - the mosaic alone.
* :func:`extract_audio` - mono 16 kHz 16-bit WAV, optionally of a window.
* :func:`generate_indexed_video` - test/benchmark videos whose frames encode their own index.

Cuts re-encode (libx264, single-threaded, bit-exact container flags) instead of stream-copying:
stream copy can only start at a keyframe, so each view would start at a different time up to a
GOP (often 10 s) early, which breaks "identical timestamps" and one-frame accuracy. Re-encoding with
input seeking (``-ss`` before ``-i``, accurate seek) decodes from the preceding keyframe and keeps
exactly the frames with ``start <= t < end`` in every view.

Errors are :class:`~socialbench.media.errors.MediaError` naming the file and a problem code.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import signal
import subprocess
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import ffmpeg
from ffmpeg._utils import convert_kwargs_to_cmd_line_args

from socialbench.errors import SocialbenchError
from socialbench.hashing import sha256_file
from socialbench.media import errors as E
from socialbench.media.errors import MediaError
from socialbench.media.sampling import Segment, ffmpeg_seconds, fit_size, plan_segments, to_fraction
from socialbench.media.synth import BITS, band_height, bit_cells
from socialbench.tools import executable

log = logging.getLogger(__name__)

# Flags that keep version strings and other run-dependent bytes out of outputs.
_BITEXACT = {"fflags": "+bitexact", "flags": "+bitexact", "map_metadata": "-1"}
_GLOBAL = ("-hide_banner", "-nostdin", "-nostats")
# ffprobe/ffmpeg messages that mean the data stops before the file says it does.
_TRUNCATION_MARKERS = ("File ended prematurely", "partial file", "Truncating packet", "truncated")


# --------------------------------------------------------------------------------------------
# Running the tools


def _ffmpeg() -> str:
    return executable("ffmpeg")


def _ffprobe() -> str:
    return executable("ffprobe")


def _run(args: list[str], path: str | Path, what: str) -> subprocess.CompletedProcess[bytes]:
    """Run an ffmpeg command line; a failure becomes a MediaError naming ``path``."""
    proc = subprocess.run(args, capture_output=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise MediaError(str(path), E.FFMPEG_FAILED, f"ffmpeg {_failure(proc.returncode)} while {what}: {_last_lines(proc.stderr)}")
    return proc


def _failure(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"crashed ({signal.Signals(-returncode).name})"
        except ValueError:
            return f"crashed (signal {-returncode})"
    return f"failed (exit status {returncode})"


_LOG_PREFIX = re.compile(r"\[[^\]]*@ 0x[0-9a-fA-F]+\]\s*")


def _clean(line: str) -> str:
    """An ffmpeg log line without its "[demuxer @ 0x55d...]" prefix (a memory address would make
    reports differ from run to run)."""
    return _LOG_PREFIX.sub("", line).strip()


def _last_lines(stderr: bytes, n: int = 3) -> str:
    lines = [_clean(ln) for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) or "no message"


def check_file(path: str | Path) -> Path:
    """The path, if it names a non-empty file; else MediaError (missing_file / zero_byte)."""
    p = Path(path)
    if not p.is_file():
        if p.is_dir():
            raise MediaError(str(path), E.MISSING, "it is a folder, not a media file")
        if p.exists():
            raise MediaError(str(path), E.MISSING, "not a regular file (a device, pipe or socket)")
        raise MediaError(str(path), E.MISSING, "no such file")
    if p.stat().st_size == 0:
        raise MediaError(str(path), E.EMPTY, "the file is empty (0 bytes)")
    return p


def _ffprobe_json(path: Path, **kwargs: Any) -> tuple[dict[str, Any], str]:
    """ffprobe -show_format -show_streams (+kwargs) as JSON, with its stderr (warnings)."""
    args = [_ffprobe(), "-v", "error", "-show_format", "-show_streams", "-of", "json"]
    args += convert_kwargs_to_cmd_line_args(kwargs) + [str(path)]
    proc = subprocess.run(args, capture_output=True, stdin=subprocess.DEVNULL)
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode < 0:
        raise MediaError(str(path), E.FFMPEG_FAILED, f"ffprobe {_failure(proc.returncode)} reading it: {_last_lines(proc.stderr)}")
    if proc.returncode != 0:
        raise _classify_probe_failure(path, err)
    return json.loads(proc.stdout.decode("utf-8")), err


def _classify_probe_failure(path: Path, stderr: str) -> MediaError:
    with open(path, "rb") as fh:
        head = fh.read(12)
    if "moov atom not found" in stderr and head[4:8] == b"ftyp":
        return MediaError(str(path), E.TRUNCATED, "MP4 file without its index (moov atom): the file was cut off before it was finished")
    if "Invalid data found when processing input" in stderr or "moov atom not found" in stderr:
        return MediaError(str(path), E.UNKNOWN_CONTAINER, "ffprobe recognises no media container or stream in it")
    return MediaError(str(path), E.FFMPEG_FAILED, f"ffprobe failed: {_last_lines(stderr.encode(), 1)}")


def _check_truncation(path: Path, stderr: str) -> None:
    for marker in _TRUNCATION_MARKERS:
        if marker in stderr:
            line = next((ln for ln in stderr.splitlines() if marker in ln), marker)
            raise MediaError(str(path), E.TRUNCATED, f"the data ends early ({_clean(line)})")


@lru_cache(maxsize=None)
def ffmpeg_version() -> str:
    """First line of ``ffmpeg -version`` (recorded in manifests; not used as the cache key)."""
    out = subprocess.run([_ffmpeg(), "-version"], capture_output=True, check=True).stdout
    return out.decode("utf-8", "replace").splitlines()[0].strip()


def tool_identity(memo_dir: str | Path | None = None) -> str:
    """sha256 of the ffmpeg executable: the exact build, for cache keys.

    Hashing ~80 MB takes a fraction of a second, so the result is memoised in
    ``memo_dir/tool-ids.json`` by the binary's real path, size and modification time; a cache hit
    then starts no process and reads no binary.
    """
    binary = Path(_ffmpeg()).resolve()
    st = binary.stat()
    stamp = f"{binary}|{st.st_size}|{st.st_mtime_ns}"
    memo: dict[str, str] = {}
    memo_file = Path(memo_dir) / "tool-ids.json" if memo_dir is not None else None
    if memo_file is not None and memo_file.is_file():
        try:
            memo = json.loads(memo_file.read_text("utf-8"))
        except (OSError, ValueError):
            memo = {}
    if stamp in memo:
        return memo[stamp]
    digest = sha256_file(binary)
    if memo_file is not None:
        memo[stamp] = digest
        memo_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo_file.with_name(f"{memo_file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memo, sort_keys=True, indent=1), "utf-8")
        os.replace(tmp, memo_file)
    return digest


# --------------------------------------------------------------------------------------------
# Probing


@dataclass(frozen=True)
class StreamInfo:
    index: int
    codec_type: str  # video | audio | subtitle | data | attachment
    codec_name: str | None
    duration: float | None = None
    width: int | None = None
    height: int | None = None
    fps: str | None = None  # exact, e.g. "25" or "30000/1001"
    nb_frames: int | None = None  # from the container, when it says
    sample_rate: int | None = None
    channels: int | None = None
    start_time: str | None = None  # exact decimal seconds on the file's clock
    attached_pic: bool = False  # a still picture attached to the file (cover art), not video


# ffprobe's image demuxers ("png_pipe", "jpeg_pipe", "webp_pipe", ...; "image2" when ffmpeg is
# told to read a file pattern). They read a single picture, or a stream of concatenated pictures
# (``ffmpeg -f image2pipe``), which is a video: the number of packets tells them apart.
_IMAGE_DEMUXERS = ("image2", "image2pipe")


def is_still_image_format(format_name: str | None) -> bool:
    """Whether ffprobe's ``format_name`` is an image demuxer rather than a video container (what it
    read is a still image only if it holds one picture: see :func:`is_still_image`)."""
    if not format_name:
        return False
    return any(f in _IMAGE_DEMUXERS or f.endswith("_pipe") for f in format_name.split(","))


def is_still_image(format_name: str | None, frame_count: int | None) -> bool:
    """Whether a file read by ``format_name`` with ``frame_count`` video frames is one picture: an
    image demuxer with at most one frame (None: not counted, or a single picture)."""
    return is_still_image_format(format_name) and (frame_count is None or frame_count <= 1)


@dataclass(frozen=True)
class MediaInfo:
    path: str
    format_name: str
    duration: float | None  # container duration, seconds
    size_bytes: int
    streams: tuple[StreamInfo, ...]
    rotation: int = 0  # display rotation of the first video stream, 0/90/180/270
    frame_count: int | None = None  # video frames: container metadata, else counted packets
    frame_count_source: str | None = None  # "metadata" | "packets"
    start_time: str | None = None  # container start, exact decimal seconds (may be < 0: audio preroll)

    @property
    def video(self) -> StreamInfo | None:
        """The first real video stream (cover art only when there is nothing else)."""
        videos = [s for s in self.streams if s.codec_type == "video"]
        return next((s for s in videos if not s.attached_pic), videos[0] if videos else None)

    @property
    def still_image(self) -> bool:
        """A picture, not a video: an image file (PNG, JPEG, ...; :func:`probe` counts the pictures
        of an image demuxer, and a stream of several is a video) or only cover art."""
        v = self.video
        return v is not None and (is_still_image(self.format_name, self.frame_count) or v.attached_pic)

    @property
    def audio(self) -> StreamInfo | None:
        return next((s for s in self.streams if s.codec_type == "audio"), None)

    @property
    def fps(self) -> Fraction | None:
        v = self.video
        return Fraction(v.fps) if v is not None and v.fps else None

    @property
    def video_duration(self) -> float | None:
        v = self.video
        if v is not None and v.duration is not None:
            return v.duration
        return self.duration

    @property
    def seek_offset(self) -> Fraction:
        """What to add to a time measured from the start of the video stream (else the audio
        stream) to get ffmpeg's -ss, which counts from the container start."""
        stream = self.video or self.audio
        if stream is None or stream.start_time is None or self.start_time is None:
            return Fraction(0)
        return Fraction(stream.start_time) - Fraction(self.start_time)

    @property
    def display_size(self) -> tuple[int, int] | None:
        """Width and height as shown (after rotation), which is what decoded frames have."""
        v = self.video
        if v is None or v.width is None or v.height is None:
            return None
        return (v.height, v.width) if self.rotation in (90, 270) else (v.width, v.height)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["streams"] = [asdict(s) for s in self.streams]
        d["display_size"] = self.display_size
        d["still_image"] = self.still_image
        return d


def _fps(stream: dict[str, Any]) -> str | None:
    for key in ("avg_frame_rate", "r_frame_rate"):
        value = stream.get(key)
        if value and value not in ("0/0", "0/1"):
            try:
                frac = Fraction(value)
            except (ValueError, ZeroDivisionError):
                continue
            if frac > 0:
                return str(frac)
    return None


def _num(value: Any, kind: type = float) -> Any:
    if value in (None, "N/A", ""):
        return None
    try:
        return kind(value)
    except (TypeError, ValueError):
        return None


def _exact(value: Any) -> str | None:
    if value in (None, "N/A", ""):
        return None
    try:
        return str(Fraction(str(value)))
    except (ValueError, ZeroDivisionError):
        return None


def _rotation(stream: dict[str, Any]) -> int:
    rot = None
    for sd in stream.get("side_data_list", []) or []:
        if "rotation" in sd:
            rot = _num(sd["rotation"], float)
    if rot is None:
        rot = _num((stream.get("tags") or {}).get("rotate"), float)
    return int(round(rot or 0)) % 360


def _media_info(path: Path, data: dict[str, Any], frame_count: int | None = None, source: str | None = None) -> MediaInfo:
    streams = []
    for s in data.get("streams", []):
        streams.append(
            StreamInfo(
                index=int(s.get("index", len(streams))),
                codec_type=s.get("codec_type", "unknown"),
                codec_name=s.get("codec_name"),
                duration=_num(s.get("duration")),
                width=_num(s.get("width"), int),
                height=_num(s.get("height"), int),
                fps=_fps(s) if s.get("codec_type") == "video" else None,
                nb_frames=_num(s.get("nb_frames"), int),
                sample_rate=_num(s.get("sample_rate"), int),
                channels=_num(s.get("channels"), int),
                start_time=_exact(s.get("start_time")),
                attached_pic=bool((s.get("disposition") or {}).get("attached_pic")),
            )
        )
    fmt = data.get("format", {})
    info = MediaInfo(
        path=str(path),
        format_name=fmt.get("format_name", "unknown"),
        duration=_num(fmt.get("duration")),
        size_bytes=path.stat().st_size,
        streams=tuple(streams),
        start_time=_exact(fmt.get("start_time")),
    )
    v = info.video
    video_raw = _raw_stream(data, v.index) if v is not None else None
    if frame_count is None and v is not None and v.nb_frames:
        frame_count, source = v.nb_frames, "metadata"
    rotation = _rotation(video_raw) if video_raw else 0
    return MediaInfo(**{**info.__dict__, "rotation": rotation, "frame_count": frame_count, "frame_count_source": source})


def _raw_stream(data: dict[str, Any], index: int) -> dict[str, Any] | None:
    """ffprobe's entry for the stream with ``index`` (its index in the file)."""
    return next((s for s in data.get("streams", []) if _num(s.get("index"), int) == index), None)


def _count_packets(path: Path, index: int) -> int:
    """The packets of stream ``index`` (demux only, no decoding), e.g. the pictures an image
    demuxer reads."""
    data, _ = _ffprobe_json(path, select_streams=str(index), count_packets=None)
    raw = _raw_stream(data, index)
    return (_num(raw.get("nb_read_packets"), int) if raw else None) or 0


def probe(path: str | Path, *, count_frames: bool = False) -> MediaInfo:
    """Format, streams, duration, fps, rotation and video frame count of a media file.

    The frame count comes from the container when it records one (MP4 does, Matroska/WebM do
    not); with ``count_frames`` or when the container is silent, the video packets are counted
    (demux only, no decoding), so a file without frame metadata never reports 0 frames.
    Raises MediaError for a missing, empty, unreadable or truncated file.
    """
    p = check_file(path)
    data, err = _ffprobe_json(p)
    _check_truncation(p, err)
    info = _media_info(p, data)
    if info.video is not None and is_still_image_format(info.format_name):
        # One picture, or a stream of them (image2pipe): count. A single picture has no frame count.
        packets = _count_packets(p, info.video.index)
        return _media_info(p, data, packets, "packets") if packets > 1 else info
    if info.video is not None and not info.still_image and (count_frames or info.frame_count is None):
        return _media_info(p, data, video_timeline(p).frame_count, "packets")
    return info


def _stream_kinds(info: MediaInfo) -> str:
    kinds = [f"{s.codec_type} ({s.codec_name}{', cover art' if s.attached_pic else ''})" for s in info.streams]
    return ", ".join(kinds) or "none"


def require_video(info: MediaInfo) -> StreamInfo:
    """The video stream of ``info``; MediaError (no_video_stream) when there is none, or when the
    file is a still image (PNG, JPEG, ...; ffprobe shows a picture as a one-frame "video")."""
    if info.video is None:
        raise MediaError(info.path, E.NO_VIDEO, f"no video stream (streams: {_stream_kinds(info)})")
    if info.still_image:
        v = info.video
        if v.attached_pic:
            detail = f"no video stream, only a still picture attached as cover art (streams: {_stream_kinds(info)})"
        else:
            size = f" {v.width}x{v.height}" if v.width and v.height else ""
            detail = f"a still image ({v.codec_name}{size}, read by ffprobe's {info.format_name} demuxer), not a video container"
        raise MediaError(info.path, E.NO_VIDEO, detail)
    return info.video


# --------------------------------------------------------------------------------------------
# Exact frame times


@dataclass(frozen=True)
class VideoTimeline:
    """Presentation times of every frame of the video stream (:attr:`MediaInfo.video`: the first
    that is not cover art), in display order.

    ``times[i]`` is frame ``i``'s time in seconds after the stream start (exact fractions);
    ``end`` is when the last frame stops being shown.
    """

    path: str
    info: MediaInfo
    times: tuple[Fraction, ...]
    end: Fraction
    origin: Fraction  # stream start, seconds on the file's own clock
    time_base: Fraction
    keyframes: tuple[int, ...] = ()  # display indices of frames decoding can start from
    file_start: Fraction = Fraction(0)  # the container's start time (ffmpeg's -ss counts from it)

    @property
    def frame_count(self) -> int:
        return len(self.times)


def video_timeline(path: str | Path) -> VideoTimeline:
    """Probe a video and list its frame times from the video packets (one demux-only pass).

    Packets flagged for discard (before an edit list start) are not frames. A container that
    announces more frames than it holds is reported as truncated.
    """
    p = check_file(path)
    # All video streams, so that cover art before the video does not stand in for it; the packets
    # of the stream MediaInfo.video chose are the frames.
    data, err = _ffprobe_json(p, select_streams="v", show_entries="packet=stream_index,pts,dts,duration,flags")
    info = _media_info(p, data)
    v = info.video
    packets = [pkt for pkt in data.get("packets", []) if v is not None and _num(pkt.get("stream_index"), int) == v.index]
    if v is not None and is_still_image_format(info.format_name) and len(packets) > 1:
        info = _media_info(p, data, len(packets), "packets")  # a stream of pictures (image2pipe)
    if v is None or info.still_image:
        require_video(probe(p))  # raises NO_VIDEO listing the streams the file does have
    v = require_video(info)
    raw = _raw_stream(data, v.index) or {}
    tb = Fraction(raw.get("time_base", "1/1000"))
    pts: list[int] = []
    durations: list[int] = []
    key: list[bool] = []
    missing = 0
    for pkt in packets:
        flags = pkt.get("flags", "")
        if "D" in flags:
            continue
        t = _num(pkt.get("pts"), int)
        if t is None:
            t = _num(pkt.get("dts"), int)
        if t is None:
            missing += 1
            continue
        pts.append(t)
        durations.append(_num(pkt.get("duration"), int) or 0)
        key.append("K" in flags)
    count = len(pts) + missing
    if count == 0:
        raise MediaError(str(p), E.NO_VIDEO, "the video stream holds no frames")
    if v.nb_frames is not None and v.nb_frames > count:
        raise MediaError(str(p), E.TRUNCATED, f"the container announces {v.nb_frames} video frames but only {count} are present")
    _check_truncation(p, err)
    fps = info.fps
    if missing:
        if pts or fps is None:
            raise MediaError(str(p), E.DECODE_MISMATCH, f"{missing} of {count} video packets carry no timestamp")
        times = [Fraction(i) / fps for i in range(count)]  # raw elementary stream: frame i at i / fps
        origin = Fraction(0)
        last = Fraction(1) / fps
        keyframes: list[int] = []  # unknown: decode from the start
    else:
        order = sorted(range(len(pts)), key=lambda i: pts[i])
        start_pts = _num(raw.get("start_pts"), int)
        origin_pts = start_pts if start_pts is not None and start_pts <= pts[order[0]] else pts[order[0]]
        origin = origin_pts * tb
        times = [(pts[i] - origin_pts) * tb for i in order]
        keyframes = [rank for rank, i in enumerate(order) if key[i]]
        last_dur = durations[order[-1]] * tb
        if last_dur <= 0:
            last_dur = Fraction(1) / fps if fps else Fraction(0)
        last = last_dur
    end = times[-1] + last
    if is_still_image_format(info.format_name):
        keyframes = []  # a stream of pictures has no index to seek in: decode from the start
    info = _media_info(p, data, count, "packets")
    start = (data.get("format") or {}).get("start_time")
    file_start = Fraction(start) if start not in (None, "N/A") else Fraction(0)
    return VideoTimeline(
        path=str(p), info=info, times=tuple(times), end=end, origin=origin, time_base=tb,
        keyframes=tuple(keyframes), file_start=file_start,
    )


# --------------------------------------------------------------------------------------------
# Frames


@dataclass(frozen=True)
class ExtractedFrame:
    index: int  # frame number in the source video (display order, from 0)
    time: Fraction  # seconds after the stream start (checked against the decoder's report)
    file: Path


_SHOWINFO_TB = re.compile(r"config in time_base:\s*(\d+)/(\d+)")
_SHOWINFO_FRAME = re.compile(r"\bn:\s*(\d+)\s+pts:\s*(-?\d+)")
_TIME_TOLERANCE = Fraction(1, 2000)  # half a millisecond: far below any frame interval


def _output_codec(image_format: str) -> tuple[dict[str, Any], str]:
    if image_format == "png":
        return {"c:v": "png", "pix_fmt": "rgb24"}, "rgb24"
    if image_format == "jpg":
        return {"c:v": "mjpeg", "pix_fmt": "yuvj444p", "q:v": 2}, "yuvj444p"
    raise ValueError(f"unknown image format {image_format!r}")


def _select_expr(indices: Sequence[int]) -> str:
    return "+".join(f"eq(n,{i})" for i in indices)


MAX_SEGMENTS = 32  # inputs one extraction may open (each seeks to a keyframe)


def extract_frames(
    timeline: VideoTimeline,
    indices: Sequence[int],
    out_dir: str | Path,
    *,
    max_side: int | None = None,
    image_format: str = "png",
    seek: bool = True,
) -> list[ExtractedFrame]:
    """Write the frames ``indices`` (ascending, display order) of a video to ``out_dir`` as
    ``<index:06d>.<ext>``, from one decoding pass of one ffmpeg process.

    The pass decodes each needed stretch once, in order: with ``seek`` (default) it starts at the
    keyframe before each group of wanted frames and skips stretches that hold none
    (:func:`~socialbench.media.sampling.plan_segments`; one input per stretch, all in the same
    process); without, it decodes from the first frame. ``select`` keeps the chosen frame numbers
    and ``showinfo`` reports the decoder's timestamp of every kept frame, which must equal the
    timeline's time for that index. If a seek lands anywhere else, the frames are taken again
    without seeking; if that also disagrees, a DECODE_MISMATCH names the file. Frames are
    upright (rotation applied), scaled so the longest side is at most ``max_side``, bit-exact;
    the bytes do not depend on ``seek``.
    """
    idx = list(indices)
    if not idx:
        raise ValueError("no frames to extract")
    if idx != sorted(set(idx)) or idx[0] < 0 or idx[-1] >= timeline.frame_count:
        raise ValueError(f"frame indices must be ascending, distinct and < {timeline.frame_count}: {idx}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if seek:
        segments = plan_segments(idx, timeline.keyframes, MAX_SEGMENTS)
        try:
            return _extract_segments(timeline, segments, out, max_side, image_format)
        except MediaError as err:
            if err.problem != E.DECODE_MISMATCH or segments == [Segment(0, idx[-1], tuple(idx))]:
                raise
            log.warning("%s: seeking gave other frames (%s); decoding from the start instead", timeline.path, err.detail)
    return _extract_segments(timeline, [Segment(0, idx[-1], tuple(idx))], out, max_side, image_format)


def _extract_segments(
    timeline: VideoTimeline, segments: list[Segment], out: Path, max_side: int | None, image_format: str
) -> list[ExtractedFrame]:
    size = timeline.info.display_size
    assert size is not None and timeline.info.video is not None
    video_index = timeline.info.video.index
    width, height = fit_size(size[0], size[1], max_side)
    codec, pix_fmt = _output_codec(image_format)
    abs_time = [timeline.origin + t for t in timeline.times]  # on the file's clock, as -copyts keeps it
    outputs = []
    for j, seg in enumerate(segments):
        # The window runs from the segment's keyframe to half a frame past its last target.
        nxt = abs_time[seg.last + 1] if seg.last + 1 < timeline.frame_count else timeline.origin + timeline.end
        start = abs_time[seg.first] - timeline.file_start
        stop = (abs_time[seg.last] + nxt) / 2 - timeline.file_start
        opts = {"t": ffmpeg_seconds(stop - max(start, Fraction(0)))}
        if seg.first > 0:
            opts["ss"] = ffmpeg_seconds(max(start, Fraction(0)))
        stream = (
            ffmpeg.input(timeline.path, **opts)[str(video_index)]  # "[0:<index>]", not the first "[0:v]"
            .filter("select", _select_expr([i - seg.first for i in seg.targets]))
            .filter("scale", width, height, flags="bicubic+accurate_rnd+full_chroma_int")
            .filter("setsar", 1)
            .filter("format", pix_fmt)
            .filter("showinfo")
        )
        pattern = out / f"tmp-{j:03d}-%06d.{image_format}"
        outputs.append(stream.output(str(pattern), f="image2", start_number=0, fps_mode="passthrough", **codec, **_BITEXACT))
    args = (
        ffmpeg.merge_outputs(*outputs)
        .global_args(*_GLOBAL, "-loglevel", "info", "-filter_threads", "1", "-copyts")
        .compile(cmd=_ffmpeg(), overwrite_output=True)
    )
    proc = _run(args, timeline.path, "extracting frames")
    log_text = proc.stderr.decode("utf-8", "replace")
    tb_match = _SHOWINFO_TB.search(log_text)
    reported = sorted(int(m.group(2)) for m in _SHOWINFO_FRAME.finditer(log_text))
    wanted = [i for seg in segments for i in seg.targets]
    if tb_match is None or len(reported) != len(wanted):
        raise MediaError(timeline.path, E.DECODE_MISMATCH, f"asked the decoder for {len(wanted)} frames, it returned {len(reported)}")
    filter_tb = Fraction(int(tb_match.group(1)), int(tb_match.group(2)))
    for i, pts in zip(wanted, reported):
        got = pts * filter_tb - timeline.origin
        if abs(got - timeline.times[i]) > _TIME_TOLERANCE:
            raise MediaError(
                timeline.path,
                E.DECODE_MISMATCH,
                f"frame {i} should be at {float(timeline.times[i]):.6f} s but the decoder returned one at {float(got):.6f} s",
            )
    frames: list[ExtractedFrame] = []
    for j, seg in enumerate(segments):
        for k, i in enumerate(seg.targets):
            tmp = out / f"tmp-{j:03d}-{k:06d}.{image_format}"
            if not tmp.is_file():
                raise MediaError(timeline.path, E.DECODE_MISMATCH, f"frame {i} was not written")
            final = out / f"{i:06d}.{image_format}"
            os.replace(tmp, final)
            frames.append(ExtractedFrame(index=i, time=timeline.times[i], file=final))
    return frames


# --------------------------------------------------------------------------------------------
# Clips, mosaic, audio


@dataclass(frozen=True)
class EncodeSettings:
    """Video encoding of cut clips and mosaics. One encoder thread keeps the bytes identical on
    every machine (x264 output depends on its thread count)."""

    codec: str = "libx264"
    preset: str = "veryfast"
    crf: int = 18
    pix_fmt: str = "yuv420p"
    threads: int = 1
    # A keyframe every 2 s of clip time: frame sampling can then seek instead of decoding
    # everything (0.5 fps sampling decodes one frame per sample).
    keyframe_interval_s: float | None = 2.0

    def output_args(self) -> dict[str, Any]:
        args: dict[str, Any] = {
            "c:v": self.codec,
            "preset": self.preset,
            "crf": self.crf,
            "pix_fmt": self.pix_fmt,
            "threads": self.threads,
            "fps_mode": "passthrough",
            "movflags": "+faststart",
            **_BITEXACT,
        }
        if self.keyframe_interval_s:
            args["force_key_frames"] = f"expr:gte(t,n_forced*{self.keyframe_interval_s:g})"
        return args


@dataclass(frozen=True)
class Mosaic:
    """A 2x2 mosaic of four of the views: ``views`` are positions in the view list, shown
    top-left, top-right, bottom-left, bottom-right, each labelled with its letter."""

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
    """The font for mosaic labels: the one given, else DejaVu Sans Bold shipped with matplotlib
    (an MLflow dependency, so always installed), else the system copy."""
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


def check_views(views: Sequence[str | Path], start: Fraction, end: Fraction, max_skew_frames: float = 1.0) -> list[MediaInfo]:
    """Probe the views of one recording and check that they can be cut together: each has a
    video stream that covers the window, and their lengths differ by at most ``max_skew_frames``
    frames (a longer gap means they are not the same recording or one is damaged)."""
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
    """Four distinct 0-based positions in a list of ``n_views`` views; else SocialbenchError, its
    message starting with ``name`` (the CLI passes ``--mosaic``)."""
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


def check_cut_paths(views: Sequence[str | Path], outputs: Sequence[str | Path] | None, mosaic: "Mosaic | None") -> None:
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
                    f"{b}: {what_a} and {what_b} would both be written to this file; give the views different file names"
                )
        for src in srcs:
            if src.resolve() == b.resolve() or _same_file(src, b):
                raise SocialbenchError(f"{b}: {what_b} would overwrite the view {src}; write the clips to another folder")


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
    """Cut ``[start, end)`` seconds from every view with the same timestamps, in one ffmpeg
    process (each view decoded once, its frames shared with the mosaic). Times count from the
    start of each view's video stream, like frame timestamps do; a clip keeps exactly the frames
    with ``start <= t < end``.

    ``outputs`` (one per view, or None for a mosaic only) receive the re-encoded clips. With
    ``mosaic``, four of the views also go, scaled to one panel size and labelled, into a 2x2
    ``xstack`` mosaic. Afterwards every output is probed; all must hold the same number of frames
    within one frame, or the cut is reported as a DECODE_MISMATCH.
    """
    if not views:
        raise ValueError("no views to cut")
    if outputs is not None and len(outputs) != len(views):
        raise ValueError(f"{len(views)} views but {len(outputs)} outputs")
    if outputs is None and mosaic is None:
        raise ValueError("nothing to write: give outputs, a mosaic or both")
    check_cut_paths(views, outputs, mosaic)
    s, e = to_fraction(start), to_fraction(end)
    infos = check_views(views, s, e, max_skew_frames)
    # Window times count from each view's video start; -ss counts from its container start.
    # Each view's video stream by its index ("[0:<index>]"): the one MediaInfo.video chose, not cover art.
    inputs = [
        ffmpeg.input(str(v), ss=ffmpeg_seconds(s + info.seek_offset), t=ffmpeg_seconds(e - s))[
            str(require_video(info).index)
        ]
        for v, info in zip(views, infos)
    ]
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
        panels = []
        for vi, label in zip(mosaic.views, mosaic.labels):
            panels.append(
                branches[vi]
                .pop(0)
                .filter("scale", pw, ph, flags="bicubic+accurate_rnd+full_chroma_int")
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
            )
        grid = ffmpeg.filter(panels, "xstack", inputs=4, layout="0_0|w0_0|0_h0|w0_h0")
        Path(mosaic.output).parent.mkdir(parents=True, exist_ok=True)
        outs.append(ffmpeg.output(grid, str(mosaic.output), **encode.output_args()))
        mosaic_size = (2 * pw, 2 * ph)
    args = ffmpeg.merge_outputs(*outs).global_args(*_GLOBAL, "-loglevel", "error").compile(cmd=_ffmpeg(), overwrite_output=True)
    _run(args, views[0], f"cutting [{float(s)}, {float(e)}) from {len(views)} view(s)")
    result = CutResult(start=float(s), end=float(e), encode=asdict(encode))
    counts = []
    if outputs is not None:
        for v, path in zip(views, outputs):
            n = probe(path).frame_count or 0
            counts.append((n, str(path)))
            result.views.append({"source": str(v), "output": str(path), "frames": n})
    if mosaic is not None:
        n = probe(mosaic.output).frame_count or 0
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
    """The 2x2 labelled mosaic of four synchronized close-ups over ``[start, end)`` (default:
    the whole recording, up to the shortest view)."""
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
    """Mono 16-bit PCM WAV at ``sample_rate`` (16 kHz by default) of the whole file or of
    ``[start, end)`` (the same window as the video cuts), bit-exact."""
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
        .audio.output(str(output), f="wav", ac=1, ar=sample_rate, **{"c:a": "pcm_s16le"}, **_BITEXACT)
        .global_args(*_GLOBAL, "-loglevel", "error")
        .compile(cmd=_ffmpeg(), overwrite_output=True)
    )
    _run(args, source, "extracting audio")
    out = probe(output)
    return AudioResult(path=str(output), sample_rate=sample_rate, channels=1, duration=out.duration)


# --------------------------------------------------------------------------------------------
# Synthetic videos (tests and benchmarks)


def generate_indexed_video(
    path: str | Path,
    *,
    frames: int,
    fps: int | str = 25,
    size: tuple[int, int] = (160, 120),
    background: str = "testsrc2",
    encode: EncodeSettings = EncodeSettings(preset="ultrafast", crf=18, keyframe_interval_s=None),
    gop: int | None = None,
    audio: bool = False,
    rotation: int | None = None,
    setpts: str | None = None,
    faststart: bool = True,
) -> Path:
    """Render a video whose frame ``n`` shows ``n`` in binary along its bottom band (see
    :mod:`socialbench.media.synth`). ``background`` is ``testsrc2`` (moving test pattern, realistic
    to decode) or a colour name (flat, for checking mosaic quadrants). The container follows the
    file extension (mp4, mkv, webm, ...). ``setpts`` (an ffmpeg setpts expression) gives
    variable frame timing; ``faststart=False`` leaves the MP4 index at the end of the file;
    ``rotation`` sets display rotation metadata (degrees)."""
    w, h = size
    rate = str(to_fraction(fps))
    duration = ffmpeg_seconds(Fraction(frames) / to_fraction(fps))
    if background == "testsrc2":
        src = ffmpeg.input(f"testsrc2=size={w}x{h}:rate={rate}", f="lavfi", t=duration)
    else:
        src = ffmpeg.input(f"color=c={background}:size={w}x{h}:rate={rate}", f="lavfi", t=duration)
    v = src.video.filter("drawbox", x=0, y=h - band_height(h), w=w, h=band_height(h), color="black", t="fill")
    for b, cell in enumerate(bit_cells(w, h, BITS)):
        v = v.filter("drawbox", x=cell.x, y=cell.y, w=cell.w, h=cell.h, color="white", t="fill", enable=f"bitand(n,{1 << b})")
    if setpts is not None:
        v = v.filter("setpts", setpts)
    opts = encode.output_args()
    if Path(path).suffix.lower() not in (".mp4", ".mov", ".m4v") or not faststart:
        opts.pop("movflags")
    if Path(path).suffix.lower() == ".webm":
        opts.update({"c:v": "libvpx-vp9", "deadline": "realtime", "cpu-used": 8, "b:v": "1M"})
        opts.pop("preset")
        opts.pop("crf")
    if gop is not None:
        opts["g"] = gop
    streams = [v]
    if audio:
        streams.append(ffmpeg.input(f"sine=frequency=440:sample_rate=48000", f="lavfi", t=duration).audio)
        opts["c:a"] = "libopus" if Path(path).suffix.lower() == ".webm" else "aac"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    args = ffmpeg.output(*streams, str(path), **opts).global_args(*_GLOBAL, "-loglevel", "error").compile(cmd=_ffmpeg(), overwrite_output=True)
    _run(args, path, "generating a test video")
    if rotation is not None:
        rotated = Path(path).with_name(Path(path).stem + ".rot" + Path(path).suffix)
        args = (
            ffmpeg.input(str(path), display_rotation=rotation)
            .output(str(rotated), c="copy", **_BITEXACT)
            .global_args(*_GLOBAL, "-loglevel", "error")
            .compile(cmd=_ffmpeg(), overwrite_output=True)
        )
        _run(args, path, "setting display rotation")
        os.replace(rotated, path)
    return Path(path)


def encode_rgb_frames(
    raw: bytes,
    path: str | Path,
    *,
    size: tuple[int, int],
    fps: int,
    encode: EncodeSettings = EncodeSettings(),
) -> Path:
    """Encode raw RGB24 frames (``len(raw) == frames * w * h * 3``) into a video file, bit-exact
    (one encoder thread, no metadata), so the same frames always give the same bytes."""
    w, h = size
    if len(raw) % (w * h * 3):
        raise MediaError(str(path), E.FFMPEG_FAILED, f"raw frame data of {len(raw)} bytes is not a whole number of {w}x{h} RGB frames")
    opts = encode.output_args()
    if Path(path).suffix.lower() not in (".mp4", ".mov", ".m4v"):
        opts.pop("movflags")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    args = (
        ffmpeg.input("pipe:", f="rawvideo", pix_fmt="rgb24", s=f"{w}x{h}", framerate=fps)
        .output(str(path), **opts)
        .global_args(*_GLOBAL, "-loglevel", "error")
        .compile(cmd=_ffmpeg(), overwrite_output=True)
    )
    proc = subprocess.run(args, input=raw, capture_output=True)
    if proc.returncode != 0:
        raise MediaError(str(path), E.FFMPEG_FAILED, f"ffmpeg {_failure(proc.returncode)} while encoding frames: {_last_lines(proc.stderr)}")
    return Path(path)


def decode_all_frames(path: str | Path, size: tuple[int, int] | None = None) -> "Any":
    """Every frame of a video as a uint8 array (N x H x W x 3), for tests and spot checks."""
    import numpy as np

    info = probe(path)
    w, h = size or info.display_size or (0, 0)
    args = (
        ffmpeg.input(str(path))[str(require_video(info).index)]
        .output("pipe:", f="rawvideo", pix_fmt="rgb24", s=f"{w}x{h}", fps_mode="passthrough")
        .global_args(*_GLOBAL, "-loglevel", "error")
        .compile(cmd=_ffmpeg())
    )
    proc = _run(args, path, "decoding frames")
    return np.frombuffer(proc.stdout, np.uint8).reshape(-1, h, w, 3)

