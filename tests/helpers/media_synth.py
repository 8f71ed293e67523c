"""Synthetic videos for tests and benchmarks, and decoding every frame back.

:func:`generate_indexed_video` renders (with ffmpeg's ``drawbox``) a video whose frame ``n`` shows
``n`` in binary along its bottom band, in the layout of :mod:`socialbench.media.synth` (whose
:func:`~socialbench.media.synth.read_index` reads it back); :func:`decode_all_frames` decodes a
whole video to an array. Neither is used by the pipeline: the demo data generator paints the same
band with Pillow (:func:`socialbench.media.synth.draw_index`).
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import ffmpeg

from socialbench.media.encode import EncodeSettings
from socialbench.media.probe import probe, require_video
from socialbench.media.run import BITEXACT, GLOBAL_ARGS, ffmpeg_path, run_ffmpeg
from socialbench.media.sampling import ffmpeg_seconds, to_fraction
from socialbench.media.synth import BITS, band_height, bit_cells


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
        v = v.filter(
            "drawbox", x=cell.x, y=cell.y, w=cell.w, h=cell.h, color="white", t="fill", enable=f"bitand(n,{1 << b})"
        )
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
        streams.append(ffmpeg.input("sine=frequency=440:sample_rate=48000", f="lavfi", t=duration).audio)
        opts["c:a"] = "libopus" if Path(path).suffix.lower() == ".webm" else "aac"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    args = (
        ffmpeg.output(*streams, str(path), **opts)
        .global_args(*GLOBAL_ARGS, "-loglevel", "error")
        .compile(cmd=ffmpeg_path(), overwrite_output=True)
    )
    run_ffmpeg(args, path, "generating a test video")
    if rotation is not None:
        rotated = Path(path).with_name(Path(path).stem + ".rot" + Path(path).suffix)
        args = (
            ffmpeg.input(str(path), display_rotation=rotation)
            .output(str(rotated), c="copy", **BITEXACT)
            .global_args(*GLOBAL_ARGS, "-loglevel", "error")
            .compile(cmd=ffmpeg_path(), overwrite_output=True)
        )
        run_ffmpeg(args, path, "setting display rotation")
        os.replace(rotated, path)
    return Path(path)


def decode_all_frames(path: str | Path, size: tuple[int, int] | None = None) -> Any:
    """Every frame of a video as a uint8 array (N x H x W x 3), for tests and spot checks."""
    import numpy as np

    info = probe(path)
    w, h = size or info.display_size or (0, 0)
    args = (
        ffmpeg.input(str(path))[str(require_video(info).index)]
        .output("pipe:", f="rawvideo", pix_fmt="rgb24", s=f"{w}x{h}", fps_mode="passthrough")
        .global_args(*GLOBAL_ARGS, "-loglevel", "error")
        .compile(cmd=ffmpeg_path())
    )
    proc = run_ffmpeg(args, path, "decoding frames")
    return np.frombuffer(proc.stdout, np.uint8).reshape(-1, h, w, 3)
