"""Media errors: every one names the file and a short problem code shown in the media report."""

from __future__ import annotations

from socialbench.core.errors import DataError

# Problem codes (stable strings: they appear in results/reports/media.* and in tests).
MISSING = "missing_file"
EMPTY = "zero_byte"
TRUNCATED = "truncated"
UNKNOWN_CONTAINER = "unknown_container"
NO_VIDEO = "no_video_stream"
NO_AUDIO = "no_audio_stream"
BAD_WINDOW = "bad_window"
WINDOW_BEYOND_END = "window_beyond_end"
VIEW_LENGTH_MISMATCH = "view_length_mismatch"
DECODE_MISMATCH = "decode_mismatch"
FFMPEG_FAILED = "ffmpeg_failed"
BAD_INSTANCE = "bad_instance"

PROBLEMS: tuple[str, ...] = (MISSING, EMPTY, TRUNCATED, UNKNOWN_CONTAINER, NO_VIDEO, NO_AUDIO, BAD_WINDOW)
PROBLEMS += (WINDOW_BEYOND_END, VIEW_LENGTH_MISMATCH, DECODE_MISMATCH, FFMPEG_FAILED, BAD_INSTANCE)


class MediaError(DataError):
    """A media file cannot be used: ``problem`` is one of :data:`PROBLEMS`; reads ``<path>: <problem>: <details>``."""

    def __init__(self, path: str, problem: str, detail: str, record: str | None = None):
        if problem not in PROBLEMS:
            raise ValueError(f"unknown media problem code {problem!r}")
        self.problem = problem
        self.detail = detail
        super().__init__(str(path), f"{problem}: {detail}", record=record)
