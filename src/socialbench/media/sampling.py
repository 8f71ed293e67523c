"""Which frames to take: pure functions over frame counts and exact :class:`fractions.Fraction` timestamps. Uniform N
takes the middle frame of each of N equal segments; fixed fps, at each ``k / fps``, the frame on screen then."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, Literal

from socialbench.core.errors import ConfigError

IMAGE_FORMATS = ("png", "jpg")


class SamplingError(ConfigError, ValueError):
    """Invalid sampling settings: a one-line ConfigError, still a ValueError for callers catching that."""


def to_fraction(value: float | int | str | Fraction) -> Fraction:
    """Exact fraction of a number as written (0.5 -> 1/2, "30000/1001" -> 30000/1001)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise SamplingError(f"not a number: {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SamplingError(f"not a finite number: {value!r}")
        return Fraction(repr(value))
    try:
        return Fraction(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise SamplingError(f"not a number: {value!r} (write e.g. 0.5, 2 or 30000/1001)") from None
    except ZeroDivisionError:
        raise SamplingError(f"not a number: {value!r} (division by zero)") from None


@dataclass(frozen=True)
class FrameSampling:
    """How frames are sampled from one video; part of the frame-cache key."""

    mode: Literal["uniform", "fps"]
    count: int | None = None  # uniform: number of frames
    fps: Fraction | None = None  # fps: frames per second of video time
    max_side: int | None = None  # longest side of the output frames (never upscaled); None = as decoded
    image_format: Literal["png", "jpg"] = "png"

    def __post_init__(self) -> None:
        if self.mode == "uniform":
            if self.fps is not None:
                raise SamplingError("uniform sampling takes a frame count, not an fps")
            if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
                raise SamplingError(f"the frame count must be an integer >= 1, got {self.count!r}")
        elif self.mode == "fps":
            if self.count is not None:
                raise SamplingError("fps sampling takes an fps, not a frame count")
            if self.fps is None:
                raise SamplingError("fps sampling needs an fps (frames per second of video time)")
            object.__setattr__(self, "fps", to_fraction(self.fps))
            if self.fps <= 0:
                raise SamplingError(f"fps must be > 0, got {self.fps}")
        else:
            raise SamplingError(f"unknown sampling mode {self.mode!r} (uniform or fps)")
        if self.max_side is not None and (
            isinstance(self.max_side, bool) or not isinstance(self.max_side, int) or self.max_side < 2
        ):
            raise SamplingError(f"the longest frame side must be an integer >= 2 (or none), got {self.max_side!r}")
        if self.image_format not in IMAGE_FORMATS:
            raise SamplingError(f"image_format must be one of {', '.join(IMAGE_FORMATS)}, got {self.image_format!r}")

    @classmethod
    def uniform(cls, count: int, max_side: int | None = None, image_format: str = "png") -> FrameSampling:
        return cls(mode="uniform", count=count, max_side=max_side, image_format=image_format)  # type: ignore[arg-type]

    @classmethod
    def at_fps(
        cls, fps: float | str | Fraction, max_side: int | None = None, image_format: str = "png"
    ) -> FrameSampling:
        return cls(mode="fps", fps=to_fraction(fps), max_side=max_side, image_format=image_format)  # type: ignore[arg-type]

    def key(self) -> dict[str, Any]:
        """Canonical description (exact fps as a string) for cache keys and manifests."""
        return {**asdict(self), "fps": None if self.fps is None else str(self.fps)}


def uniform_indices(n_frames: int, count: int) -> list[int]:
    """Middle frame of each of ``count`` equal segments of ``n_frames`` frames, ascending."""
    if n_frames < 1:
        raise ValueError(f"a video needs at least one frame, got {n_frames}")
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    if count >= n_frames:
        return list(range(n_frames))
    return [((2 * k + 1) * n_frames) // (2 * count) for k in range(count)]


def fps_indices(timestamps: Sequence[Fraction], end: Fraction, fps: Fraction) -> list[int]:
    """Frames on screen at ``t_k = k / fps`` for every ``t_k < end``, from ascending ``timestamps`` relative
    to the video start; a target before the first frame takes it. Ascending and distinct."""
    if not timestamps:
        raise ValueError("a video needs at least one frame")
    if any(b < a for a, b in zip(timestamps, timestamps[1:])):
        raise ValueError("timestamps must be ascending")
    if fps <= 0:
        raise ValueError(f"fps must be > 0, got {fps}")
    out: list[int] = []
    k = 0
    while (t := Fraction(k) / fps) < end:
        i = max(bisect.bisect_right(timestamps, t) - 1, 0)
        if not out or out[-1] != i:
            out.append(i)
        k += 1
    return out


def select_indices(sampling: FrameSampling, timestamps: Sequence[Fraction], end: Fraction) -> list[int]:
    """Frame indices (ascending) chosen by ``sampling`` for a video with these frame times."""
    if sampling.mode == "uniform":
        assert sampling.count is not None
        return uniform_indices(len(timestamps), sampling.count)
    assert sampling.fps is not None
    return fps_indices(timestamps, end, sampling.fps)


def window_indices(timestamps: Sequence[Fraction], start: Fraction, end: Fraction) -> list[int]:
    """Indices of the frames a cut ``[start, end)`` keeps: ``start <= t < end``."""
    lo = bisect.bisect_left(timestamps, start)
    hi = bisect.bisect_left(timestamps, end)
    return list(range(lo, hi))


def fit_size(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    """Output size keeping the aspect ratio, longest side at most ``max_side`` (never upscaled; sides >= 1)."""
    if width < 1 or height < 1:
        raise ValueError(f"bad frame size {width}x{height}")
    if max_side is None or max(width, height) <= max_side:
        return width, height
    if width >= height:
        return max_side, max(1, round(height * max_side / width))
    return max(1, round(width * max_side / height)), max_side


def seconds(value: Fraction) -> float:
    """A timestamp as written to manifests: float seconds rounded to the microsecond."""
    return round(float(value), 6)


def ffmpeg_seconds(value: Fraction) -> str:
    """A time for ffmpeg's -ss/-t as exact decimal microseconds (ffmpeg parses them exactly),
    truncated, so a frame whose timestamp is exactly ``value`` is not lost to rounding."""
    if value < 0:
        raise ValueError(f"negative time {value}")
    us = math.floor(value * 1_000_000)
    return f"{us // 1_000_000}.{us % 1_000_000:06d}"


@dataclass(frozen=True)
class Segment:
    """Frames decoded in one go: from keyframe ``first`` up to ``last`` (inclusive), keeping ``targets``."""

    first: int
    last: int
    targets: tuple[int, ...]


def plan_segments(
    targets: Sequence[int], keyframes: Sequence[int], max_segments: int = 24, seek_cost: int = 0
) -> list[Segment]:
    """Split the decoding of ``targets`` (ascending frame indices) into segments starting at keyframes, skipping
    stretches with no target: a target starts a new segment when its keyframe lies more than ``seek_cost`` frames (0:
    whenever seeking skips any) after the segment's last target. Over ``max_segments``, the two closest neighbours merge
    until it fits."""
    if not targets:
        raise ValueError("no target frames")
    if max_segments < 1:
        raise ValueError("max_segments must be >= 1")
    if seek_cost < 0:
        raise ValueError("seek_cost must be >= 0")
    kfs = sorted(k for k in set(keyframes) if k >= 0)
    segs: list[list[int]] = []  # [first, last, *targets]
    for t in targets:
        pos = bisect.bisect_right(kfs, t) - 1
        kf = kfs[pos] if pos >= 0 else 0
        if segs and kf - segs[-1][1] <= seek_cost:
            segs[-1][1] = t
            segs[-1].append(t)
        else:
            segs.append([kf, t, t])
    while len(segs) > max_segments:
        j = min(range(len(segs) - 1), key=lambda i: segs[i + 1][0] - segs[i][1])
        a, b = segs[j], segs.pop(j + 1)
        segs[j] = [a[0], b[1], *a[2:], *b[2:]]
    return [Segment(s[0], s[1], tuple(s[2:])) for s in segs]
