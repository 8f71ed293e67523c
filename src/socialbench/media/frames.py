"""Chosen frames of a video in ONE decoding pass (:func:`extract_frames`): the ``select`` filter
keeps them, and the decoder's own timestamp of each frame is read back (``showinfo``) and checked
against the :class:`~socialbench.media.probe.VideoTimeline`.

Errors are :class:`~socialbench.media.errors.MediaError` naming the file and a problem code."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import ffmpeg

from socialbench.media import errors as E
from socialbench.media.errors import MediaError
from socialbench.media.probe import VideoTimeline
from socialbench.media.run import BITEXACT, GLOBAL_ARGS, SCALE_FLAGS, ffmpeg_path, run_ffmpeg
from socialbench.media.sampling import Segment, ffmpeg_seconds, fit_size, plan_segments

log = logging.getLogger(__name__)


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


MAX_SEGMENTS = 32  # inputs one extraction may open (each seeks to a keyframe)
# Opening one more input (demuxer, decoder, seek) costs about as much CPU as decoding this many
# pixels (measured with the bundled ffmpeg: ~10 ms an input; ~0.1 ms a 160x120 frame): a small
# video is decoded on through short gaps instead of seeking over them, a large one seeks.
SEEK_COST_PIXELS = 2_000_000


def seek_cost(timeline: VideoTimeline) -> int:
    """Frames of this video that cost as much to decode as one more input (at least 1)."""
    video = timeline.info.video
    pixels = (video.width or 0) * (video.height or 0) if video is not None else 0
    return max(1, SEEK_COST_PIXELS // pixels) if pixels else 1


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
    ``<index:06d>.<ext>`` from one ffmpeg process: with ``seek`` from the keyframe before each group of
    them (:func:`~socialbench.media.sampling.plan_segments`). Every frame's timestamp must be the
    timeline's; a seek that lands elsewhere is retried from the start. Frames are upright, bit-exact."""
    idx = list(indices)
    if not idx:
        raise ValueError("no frames to extract")
    if idx != sorted(set(idx)) or idx[0] < 0 or idx[-1] >= timeline.frame_count:
        raise ValueError(f"frame indices must be ascending, distinct and < {timeline.frame_count}: {idx}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if seek:
        segments = plan_segments(idx, timeline.keyframes, MAX_SEGMENTS, seek_cost(timeline))
        try:
            return _extract_segments(timeline, segments, out, max_side, image_format)
        except MediaError as err:
            if err.problem != E.DECODE_MISMATCH or segments == [Segment(0, idx[-1], tuple(idx))]:
                raise
            log.warning(
                "%s: seeking gave other frames (%s); decoding from the start instead", timeline.path, err.detail
            )
    return _extract_segments(timeline, [Segment(0, idx[-1], tuple(idx))], out, max_side, image_format)


def seek_time(timeline: VideoTimeline, keyframe: int) -> Fraction:
    """The ``-ss`` (from the container start) that makes ffmpeg start decoding a ``dts_only`` video at
    ``keyframe``, with ``-noaccurate_seek`` (frames are counted from the keyframe on). ffmpeg moves the
    target back by :data:`DTS_SEEK_BACKOFF` for a B-frame stream in a container that seeks by decoding time
    (AVI), so the target is that much after the keyframe plus half a frame gap, safe from rounding."""
    times = timeline.times
    nxt = times[keyframe + 1] if keyframe + 1 < timeline.frame_count else timeline.end
    backoff = DTS_SEEK_BACKOFF if timeline.reorder_delay > 0 else Fraction(0)
    return timeline.origin + (times[keyframe] + nxt) / 2 + backoff - timeline.file_start


# ffmpeg 6.0 (fftools/ffmpeg_opt.c, open_input_file): "seek_timestamp -= 3*AV_TIME_BASE / 23" when a
# stream has a decoding delay and the format does not seek by presentation time.
DTS_SEEK_BACKOFF = Fraction(3 * 1_000_000 // 23, 1_000_000)


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
        # one decoding thread per input: the same frames, and threads cost more to start than these
        # short stretches take to decode
        opts: dict[str, Any] = {"threads": 1}
        out_opts: dict[str, Any] = {}
        if timeline.dts_only:
            # No presentation times: start exactly at the keyframe (verified below by the decoder's
            # timestamps) and count decoded frames; the output stops after its last target.
            if seg.first > 0:
                opts.update({"noaccurate_seek": None, "ss": ffmpeg_seconds(seek_time(timeline, seg.first))})
            out_opts["frames:v"] = len(seg.targets)
        else:
            # The window runs from the segment's keyframe to half a frame past its last target.
            nxt = abs_time[seg.last + 1] if seg.last + 1 < timeline.frame_count else timeline.origin + timeline.end
            start = max(abs_time[seg.first] - timeline.file_start, Fraction(0))
            opts["t"] = ffmpeg_seconds((abs_time[seg.last] + nxt) / 2 - timeline.file_start - start)
            if seg.first > 0:
                opts["ss"] = ffmpeg_seconds(start)
        stream = (
            ffmpeg.input(timeline.path, **opts)[str(video_index)]  # "[0:<index>]", not the first "[0:v]"
            .filter("select", "+".join(f"eq(n,{i - seg.first})" for i in seg.targets))
            .filter("scale", width, height, flags=SCALE_FLAGS)
            .filter("setsar", 1)
            .filter("format", pix_fmt)
            .filter("showinfo")
        )
        pattern = out / f"tmp-{j:03d}-%06d.{image_format}"
        outputs.append(
            stream.output(
                str(pattern), f="image2", start_number=0, fps_mode="passthrough", **out_opts, **codec, **BITEXACT
            )
        )
    args = (
        ffmpeg.merge_outputs(*outputs)
        .global_args(*GLOBAL_ARGS, "-loglevel", "info", "-filter_threads", "1", "-copyts")
        .compile(cmd=ffmpeg_path(), overwrite_output=True)
    )
    proc = run_ffmpeg(args, timeline.path, "extracting frames", out=out)
    log_text = proc.stderr.decode("utf-8", "replace")
    tb_match = _SHOWINFO_TB.search(log_text)
    reported = sorted(int(m.group(2)) for m in _SHOWINFO_FRAME.finditer(log_text))
    wanted = [i for seg in segments for i in seg.targets]
    if tb_match is None or len(reported) != len(wanted):
        raise MediaError(
            timeline.path, E.DECODE_MISMATCH, f"asked the decoder for {len(wanted)} frames, it returned {len(reported)}"
        )
    filter_tb = Fraction(int(tb_match.group(1)), int(tb_match.group(2)))
    # Decoding a video without presentation times from its first frame, the n-th decoded frame is
    # frame n whatever the decoder's guessed timestamps say; after a seek, those timestamps show
    # where decoding started.
    counted = timeline.dts_only and segments == [Segment(0, segments[0].last, segments[0].targets)]
    for i, pts in zip(wanted, [] if counted else reported):
        got = pts * filter_tb - timeline.origin
        expected = timeline.decoder_time(i)
        if abs(got - expected) > _TIME_TOLERANCE:
            raise MediaError(
                timeline.path,
                E.DECODE_MISMATCH,
                f"frame {i} should be at {float(expected):.6f} s but the decoder returned one at {float(got):.6f} s",
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
