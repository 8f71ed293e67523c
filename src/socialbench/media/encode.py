"""Video encoding settings (:class:`EncodeSettings`: bit-exact, one encoder thread) and encoding raw
RGB frames into a video file (:func:`encode_rgb_frames`, used by the demo data generator)."""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ffmpeg

from socialbench.media import errors as E
from socialbench.media.errors import MediaError
from socialbench.media.run import BITEXACT, GLOBAL_ARGS, SCALE_FLAGS, disk_full, ffmpeg_failure, ffmpeg_path


@dataclass(frozen=True)
class EncodeSettings:
    """Video encoding of clips and mosaics; one encoder thread keeps x264's bytes identical on every machine."""

    codec: str = "libx264"
    preset: str = "ultrafast"
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
            "sws_flags": SCALE_FLAGS,  # the converters ffmpeg inserts (RGB frames to yuv420p)
            **BITEXACT,
        }
        if self.keyframe_interval_s:
            args["force_key_frames"] = f"expr:gte(t,n_forced*{self.keyframe_interval_s:g})"
        return args


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
        raise MediaError(
            str(path),
            E.FFMPEG_FAILED,
            f"raw frame data of {len(raw)} bytes is not a whole number of {w}x{h} RGB frames",
        )
    opts = encode.output_args()
    if Path(path).suffix.lower() not in (".mp4", ".mov", ".m4v"):
        opts.pop("movflags")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    args = (
        ffmpeg.input("pipe:", f="rawvideo", pix_fmt="rgb24", s=f"{w}x{h}", framerate=fps)
        .output(str(path), **opts)
        .global_args(*GLOBAL_ARGS, "-loglevel", "error")
        .compile(cmd=ffmpeg_path(), overwrite_output=True)
    )
    # stderr goes to a file, not a pipe: with stdin the only pipe, ``run`` writes the frames in one
    # call instead of polling in 4 KB steps (the poll loop cost more than the encode).
    with tempfile.TemporaryFile() as err:
        proc = subprocess.run(args, input=raw, stdout=subprocess.DEVNULL, stderr=err)
        err.seek(0)
        message = err.read()
        if proc.returncode != 0 or disk_full(message):  # ffmpeg may exit 0 after a failed write
            raise ffmpeg_failure(proc.returncode, message, path, "encoding frames", out=path)
    return Path(path)
