"""MoCA media step: sampled frames for every video-text instance, through the frame cache. An instance
with unusable media is kept without frames, marked ``media_error`` and listed in the media report
(``on_error: skip``; scored invalid, so N never shrinks), or stops the run (``on_error: fail``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialbench.media import errors as E
from socialbench.media.cache import FrameCache
from socialbench.media.errors import MediaError
from socialbench.media.report import MediaReport
from socialbench.media.sampling import FrameSampling
from socialbench.media.settings import ON_ERROR, MediaSettings

log = logging.getLogger(__name__)

#: The media report's action for an instance kept with ``media_error`` (with ``on_error: skip``).
KEPT = "kept as media error"


def moca_sampling(settings: MediaSettings, frames: int) -> FrameSampling:
    """MoCA's frame sampling: ``moca.frames`` frames uniformly in temporal order (MoCA 6.1)."""
    return FrameSampling.uniform(frames, max_side=settings.frame_max_side, image_format=settings.image_format)


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
    """Every record in order, video-text ones with ``frames`` or (failed media, reported) ``media_error``."""
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
                why = f"a video-text instance needs exactly one video in 'media', got {media!r}"
                raise MediaError(source, E.BAD_INSTANCE, why, record=iid)
            manifest = cache.frames(Path(root) / media[0], sampling)
        except MediaError as err:
            if err.record is None:  # name the instance as well as the file
                err = MediaError(err.path, err.problem, err.detail, record=iid)
            report.add(split, iid, err, "failed" if on_error == "fail" else KEPT)
            if on_error == "fail":
                raise err
            log.warning(
                "media: %s: instance %s kept without frames, marked media_error (scored invalid): %s", split, iid, err
            )
            marked = {k: v for k, v in rec.items() if k != "frames"}
            marked["media_error"] = " ".join(str(err).split())  # one line: it becomes the answer's error
            out.append(marked)
            continue
        new = {k: v for k, v in rec.items() if k != "media_error"}
        new["frames"] = manifest.records(root)
        counts.with_frames += 1
        counts.frames += len(new["frames"])
        out.append(new)
    return out
