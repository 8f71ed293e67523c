"""What a media file holds (ffprobe only, nothing decoded): :func:`probe` (:class:`MediaInfo`), :func:`require_video`
(refusing stills and cover art), :func:`video_timeline` (every frame's exact time). Errors are
:class:`~socialbench.media.errors.MediaError` naming file and problem."""

from __future__ import annotations

import json
import os
import subprocess
from collections import OrderedDict
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from ffmpeg._utils import convert_kwargs_to_cmd_line_args

from socialbench.core.paths import special_file, special_problem
from socialbench.media import errors as E
from socialbench.media.errors import MediaError
from socialbench.media.run import clean_log_line, describe_exit, ffprobe_path, last_lines

# ffprobe/ffmpeg messages that mean the data stops before the file says it does.
_TRUNCATION_MARKERS = ("File ended prematurely", "partial file", "Truncating packet", "truncated")


def check_file(path: str | Path) -> Path:
    """The path, if it names a non-empty file; else MediaError (missing_file / zero_byte)."""
    p = Path(path)
    if not p.is_file():
        if p.is_dir():
            raise MediaError(str(path), E.MISSING, "it is a folder, not a media file")
        kind = special_file(p)
        if kind is not None:  # found without opening it (a FIFO would block ffprobe)
            raise MediaError(str(path), E.MISSING, special_problem(kind, "media file"))
        if p.exists():
            raise MediaError(str(path), E.MISSING, "not a regular file (a device, pipe or socket)")
        raise MediaError(str(path), E.MISSING, "no such file")
    if p.stat().st_size == 0:
        raise MediaError(str(path), E.EMPTY, "the file is empty (0 bytes)")
    return p


#: Answers of ffprobe in this process: a meeting's clips probe the same source views once per clip.
_PROBED: OrderedDict[tuple[Any, ...], tuple[bytes, str]] = OrderedDict()
_PROBED_MAX = 256


def _memo(memo: OrderedDict[tuple[Any, ...], Any], limit: int, path: Path, *args: Any, make: Any) -> Any:
    """``make()``, kept in ``memo`` (the ``limit`` latest) by ``args`` and the file's identity and change times."""
    try:
        st = os.stat(path)
        key: tuple[Any, ...] | None = (*args, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        key = None
    if key is not None and key in memo:
        memo.move_to_end(key)
        return memo[key]
    value = make()
    if key is not None:
        memo[key] = value
        if len(memo) > limit:
            memo.popitem(last=False)
    return value


def _ffprobe_json(path: Path, **kwargs: Any) -> tuple[dict[str, Any], str]:
    """ffprobe -show_format -show_streams (+kwargs) as JSON, with its stderr (warnings)."""
    args = [ffprobe_path(), "-v", "error", "-show_format", "-show_streams", "-of", "json"]
    args += convert_kwargs_to_cmd_line_args(kwargs) + [str(path)]
    out, err = _memo(_PROBED, _PROBED_MAX, path, *args, make=lambda: _run_ffprobe(path, args))
    return json.loads(out.decode("utf-8")), err


def _run_ffprobe(path: Path, args: list[str]) -> tuple[bytes, str]:
    proc = subprocess.run(args, capture_output=True, stdin=subprocess.DEVNULL)
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode < 0:
        raise MediaError(
            str(path),
            E.FFMPEG_FAILED,
            f"ffprobe {describe_exit(proc.returncode)} reading it: {last_lines(proc.stderr)}",
        )
    if proc.returncode != 0:
        raise _classify_probe_failure(path, err)
    return proc.stdout, err


def _classify_probe_failure(path: Path, stderr: str) -> MediaError:
    with open(path, "rb") as fh:
        head = fh.read(12)
    if "moov atom not found" in stderr and head[4:8] == b"ftyp":
        return MediaError(
            str(path),
            E.TRUNCATED,
            "MP4 file without its index (moov atom): the file was cut off before it was finished",
        )
    if "Invalid data found when processing input" in stderr or "moov atom not found" in stderr:
        return MediaError(str(path), E.UNKNOWN_CONTAINER, "ffprobe recognises no media container or stream in it")
    return MediaError(str(path), E.FFMPEG_FAILED, f"ffprobe failed: {last_lines(stderr.encode(), 1)}")


def _check_truncation(path: Path, stderr: str) -> None:
    for marker in _TRUNCATION_MARKERS:
        if marker in stderr:
            line = next((ln for ln in stderr.splitlines() if marker in ln), marker)
            raise MediaError(str(path), E.TRUNCATED, f"the data ends early ({clean_log_line(line)})")


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


# ffprobe's image demuxers (also "png_pipe", "jpeg_pipe"...): one picture, or a stream of them (a video).
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
        """Added to a time from the video (else audio) stream start to get ffmpeg's -ss (from the container start)."""
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


def _num(value: Any, kind: Any = float) -> Any:
    """ffprobe's value as ``kind``, None when it gives none or one that is not a ``kind``."""
    if value in (None, "N/A", ""):
        return None
    try:
        return kind(value)
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def _exact(value: Any) -> str | None:
    return _num(value, lambda v: str(Fraction(str(v))))


def _rotation(stream: dict[str, Any]) -> int:
    rot = None
    for sd in stream.get("side_data_list", []) or []:
        if "rotation" in sd:
            rot = _num(sd["rotation"], float)
    if rot is None:
        rot = _num((stream.get("tags") or {}).get("rotate"), float)
    return int(round(rot or 0)) % 360


def _media_info(
    path: Path, data: dict[str, Any], frame_count: int | None = None, source: str | None = None
) -> MediaInfo:
    streams = tuple(
        StreamInfo(
            index=int(s.get("index", k)),
            codec_type=s.get("codec_type", "unknown"),
            codec_name=s.get("codec_name"),
            duration=_num(s.get("duration")),
            **{k: _num(s.get(k), int) for k in ("width", "height", "nb_frames", "sample_rate", "channels")},
            fps=_fps(s) if s.get("codec_type") == "video" else None,
            start_time=_exact(s.get("start_time")),
            attached_pic=bool((s.get("disposition") or {}).get("attached_pic")),
        )
        for k, s in enumerate(data.get("streams", []))
    )
    fmt = data.get("format", {})
    info = MediaInfo(
        path=str(path),
        format_name=fmt.get("format_name", "unknown"),
        duration=_num(fmt.get("duration")),
        size_bytes=path.stat().st_size,
        streams=streams,
        start_time=_exact(fmt.get("start_time")),
    )
    v = info.video
    video_raw = _raw_stream(data, v.index) if v is not None else None
    if frame_count is None and v is not None and v.nb_frames:
        frame_count, source = v.nb_frames, "metadata"
    rotation = _rotation(video_raw) if video_raw else 0
    return replace(info, rotation=rotation, frame_count=frame_count, frame_count_source=source)


def _raw_stream(data: dict[str, Any], index: int) -> dict[str, Any] | None:
    """ffprobe's entry for the stream with ``index`` (its index in the file)."""
    return next((s for s in data.get("streams", []) if _num(s.get("index"), int) == index), None)


def _count_packets(path: Path, index: int) -> int:
    """The packets of stream ``index`` (demux only, no decoding), e.g. the pictures an image demuxer reads."""
    data, _ = _ffprobe_json(path, select_streams=str(index), count_packets=None)
    raw = _raw_stream(data, index)
    return (_num(raw.get("nb_read_packets"), int) if raw else None) or 0


def probe(path: str | Path, *, count_frames: bool = False) -> MediaInfo:
    """Format, streams, duration, fps, rotation and video frame count of a media file (MediaError for a missing, empty,
    unreadable or truncated one); the frame count is the container's, else the packets counted."""
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
            detail = (
                f"a still image ({v.codec_name}{size}, read by ffprobe's"
                f" {info.format_name} demuxer), not a video container"
            )
        raise MediaError(info.path, E.NO_VIDEO, detail)
    return info.video


@dataclass(frozen=True)
class VideoTimeline:
    """Presentation times of every frame of :attr:`MediaInfo.video`, in display order: ``times[i]`` in
    exact seconds after the stream start; ``end`` when the last frame stops being shown."""

    path: str
    info: MediaInfo
    times: tuple[Fraction, ...]
    end: Fraction
    origin: Fraction  # stream start, seconds on the file's own clock
    time_base: Fraction
    keyframes: tuple[int, ...] = ()  # display indices of frames decoding can start from
    file_start: Fraction = Fraction(0)  # the container's start time (ffmpeg's -ss counts from it)
    # Decoding times only (AVI): ``times`` are those in order; frames are told apart by counting them.
    dts_only: bool = False
    reorder_delay: int = 0  # frames the decoder holds back before output (B-frames; ffprobe has_b_frames)

    @property
    def frame_count(self) -> int:
        return len(self.times)

    def decoder_time(self, i: int) -> Fraction:
        """The timestamp ffmpeg's decoder gives frame ``i``: ``times[i]``, or without presentation times
        the decoding time of the packet ``reorder_delay`` later (extrapolated past the last one)."""
        j = i + (self.reorder_delay if self.dts_only else 0)
        n = len(self.times)
        if j < n:
            return self.times[j]
        step = self.end - self.times[-1]
        return self.times[-1] + (j - n + 1) * step


#: Timelines built in this process: a meeting's clips are cut from the same long AVI views.
_TIMELINES: OrderedDict[tuple[Any, ...], VideoTimeline] = OrderedDict()
_TIMELINES_MAX = 32


def video_timeline(path: str | Path) -> VideoTimeline:
    """Frame times from the video packets (one demux-only pass); packets flagged for discard are not frames,
    and a container announcing more frames than it holds is truncated."""
    p = check_file(path)
    return _memo(_TIMELINES, _TIMELINES_MAX, p, str(p), make=lambda: _video_timeline(p))


def _video_timeline(p: Path) -> VideoTimeline:
    # All video streams, so that cover art before the video does not stand in for it; the packets
    # of the stream MediaInfo.video chose are the frames.
    data, err = _ffprobe_json(p, select_streams="v", show_entries="packet=stream_index,pts,dts,duration,flags")
    info = _media_info(p, data)
    v = info.video
    packets = [
        pkt for pkt in data.get("packets", []) if v is not None and _num(pkt.get("stream_index"), int) == v.index
    ]
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
    missing = no_pts = 0
    for pkt in packets:
        flags = pkt.get("flags", "")
        if "D" in flags:
            continue
        t = _num(pkt.get("pts"), int)
        if t is None:
            no_pts += 1
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
        raise MediaError(
            str(p), E.TRUNCATED, f"the container announces {v.nb_frames} video frames but only {count} are present"
        )
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
        last = durations[order[-1]] * tb
        if last <= 0:
            last = Fraction(1) / fps if fps else Fraction(0)
    end = times[-1] + last
    if is_still_image_format(info.format_name):
        keyframes = []  # a stream of pictures has no index to seek in: decode from the start
    info = _media_info(p, data, count, "packets")
    return VideoTimeline(
        path=str(p),
        info=info,
        times=tuple(times),
        end=end,
        origin=origin,
        time_base=tb,
        keyframes=tuple(keyframes),
        file_start=Fraction(info.start_time or 0),
        dts_only=no_pts > 0,
        reorder_delay=_num(raw.get("has_b_frames"), int) or 0,
    )
