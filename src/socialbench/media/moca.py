"""MoCA media step: sampled frames for every video-text instance.

Reads ``data/interim/moca/<split>.jsonl`` (validated instances), samples ``media.moca_frames``
uniform frames per clip through the frame cache, and writes ``data/processed/moca/<split>.jsonl``:
the same records, with ``frames`` = ``[{path, sha256, index, timestamp}, ...]`` (temporal order)
added to video-text ones. Image-text records pass through unchanged. An instance whose media is
unusable is left out and listed in the media report (``on_error: skip``) or stops the run
(``on_error: fail``); nothing is dropped silently.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from socialbench.media import errors as E
from socialbench.media.cache import FrameCache
from socialbench.media.errors import MediaError
from socialbench.media.report import MediaReport
from socialbench.media.sampling import FrameSampling

log = logging.getLogger(__name__)

ON_ERROR = ("skip", "fail")


@dataclass(frozen=True)
class MediaSettings:
    """The ``media:`` section of params.yaml (defaults match the schema)."""

    on_error: str = "skip"
    moca_frames: int = 8
    frame_max_side: int | None = 448
    image_format: str = "png"
    meeting_fps: float = 0.5
    clip_preset: str = "veryfast"
    clip_crf: int = 18
    max_view_skew_frames: float = 1.0
    mosaic_panel: tuple[int, int] | None = None
    label_font: str | None = None

    def __post_init__(self) -> None:
        if self.on_error not in ON_ERROR:
            raise ValueError(f"media.on_error must be one of {ON_ERROR}, got {self.on_error!r}")

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> "MediaSettings":
        m = dict(params.get("media") or {})
        if m.get("mosaic_panel") is not None:
            m["mosaic_panel"] = tuple(m["mosaic_panel"])
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in m.items() if k in known})

    def moca_sampling(self) -> FrameSampling:
        return FrameSampling.uniform(self.moca_frames, max_side=self.frame_max_side, image_format=self.image_format)

    def meeting_sampling(self) -> FrameSampling:
        return FrameSampling.at_fps(self.meeting_fps, max_side=self.frame_max_side, image_format=self.image_format)


def attach_frames(
    records: Sequence[dict[str, Any]],
    *,
    split: str,
    source: str,
    cache: FrameCache,
    sampling: FrameSampling,
    report: MediaReport,
    on_error: str = "skip",
    root: str | Path = ".",
) -> list[dict[str, Any]]:
    """Records with ``frames`` added to video-text ones, in input order, minus the instances
    whose media failed (each recorded in ``report``). With ``on_error="fail"`` the first failure
    is recorded and raised."""
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
    counts = report.split(split)
    out = []
    for n, rec in enumerate(records, 1):
        counts.instances += 1
        iid = str(rec.get("id", f"line {n}"))
        if rec.get("modality") != "video_text":
            out.append(rec)
            continue
        counts.video_instances += 1
        try:
            media = rec.get("media")
            if not isinstance(media, list) or len(media) != 1 or not isinstance(media[0], str):
                raise MediaError(source, E.BAD_INSTANCE, f"a video-text instance needs exactly one video in 'media', got {media!r}", record=iid)
            manifest = cache.frames(Path(root) / media[0], sampling)
        except MediaError as err:
            if err.record is None:  # name the instance as well as the file
                err = MediaError(err.path, err.problem, err.detail, record=iid)
            action = "failed" if on_error == "fail" else "skipped"
            report.add(split, iid, err, action)
            if on_error == "fail":
                raise err
            log.warning("media: %s: instance %s left out: %s", split, iid, err)
            continue
        new = dict(rec)
        new["frames"] = manifest.records(root)
        counts.with_frames += 1
        counts.frames += len(new["frames"])
        out.append(new)
    return out
