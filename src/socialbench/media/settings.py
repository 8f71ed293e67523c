"""The ``media:`` section of params.yaml as a value (shared by every benchmark's media step)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from socialbench.media.sampling import FrameSampling

ON_ERROR = ("skip", "fail")


@dataclass(frozen=True)
class MediaSettings:
    """The ``media:`` section of params.yaml (defaults match the schema)."""

    on_error: str = "skip"
    frame_max_side: int | None = 448
    image_format: str = "png"
    meeting_fps: float = 0.5
    clip_preset: str = "ultrafast"
    clip_crf: int = 18
    max_view_skew_frames: float = 1.0
    mosaic_panel: tuple[int, int] | None = None
    label_font: str | None = None

    def __post_init__(self) -> None:
        if self.on_error not in ON_ERROR:
            raise ValueError(f"media.on_error must be one of {ON_ERROR}, got {self.on_error!r}")

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> MediaSettings:
        m = dict(params.get("media") or {})
        if m.get("mosaic_panel") is not None:
            m["mosaic_panel"] = tuple(m["mosaic_panel"])
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in m.items() if k in known})

    def meeting_sampling(self) -> FrameSampling:
        return FrameSampling.at_fps(self.meeting_fps, max_side=self.frame_max_side, image_format=self.image_format)
