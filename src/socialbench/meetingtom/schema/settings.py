"""The ``meetingtom:`` params section as values: the sources ``demo`` (generated as a local mirror) and ``ami``
(the real corpus), read through the same acquisition code."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError

SOURCES = ("demo", "ami")
#: Where the demo generator writes its mirror (the rules and the demo stage use this path).
DEMO_MIRROR = "data/raw/meetingtom/demo/mirror"
#: The demo release's annotations archive (a name of our own, so it is never taken for the real one).
DEMO_ARCHIVE = "meetingtom_demo_manual.zip"


@dataclass(frozen=True)
class SourceSettings:
    """One source: where its release and media come from, its meetings, what its instances show."""

    name: str
    mirror: str | None
    url: str
    sha256: str | None
    media_url: str
    meetings: tuple[str, ...]
    views: tuple[str, ...]
    modality: str

    @property
    def archive_name(self) -> str:
        return self.url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


def section(params: Mapping[str, Any]) -> Mapping[str, Any]:
    if "meetingtom" not in params:
        raise ConfigError("params has no meetingtom: section (the MeetingToM stages read it)")
    return params["meetingtom"]


def source_settings(params: Mapping[str, Any], name: str) -> SourceSettings:
    """The settings of source ``name`` (``demo`` or ``ami``)."""
    mt = section(params)
    if name not in SOURCES:
        raise ConfigError(f"unknown MeetingToM source {name!r}; known: {', '.join(SOURCES)}")
    s = mt[name]
    # the demo release is generated as a local mirror: no host, no pinned checksum
    demo = (DEMO_MIRROR, DEMO_ARCHIVE, None, "")
    where = demo if name == "demo" else (s["mirror"], s["url"], s["sha256"], s["media_url"])
    return SourceSettings(name, *where, tuple(s["meetings"]), tuple(s["views"]), s["modality"])


def mirror_path(source: SourceSettings, root: str | Path = ".") -> Path | None:
    """The source's mirror folder (relative paths from the repository root), or None (download)."""
    if source.mirror is None:
        return None
    p = Path(source.mirror)
    return p if p.is_absolute() else Path(root) / p


def split_of(meeting: str, params: Mapping[str, Any]) -> str:
    return "dev" if meeting in section(params)["dev_meetings"] else "test"


#: The demo generator's scene length (one mining window of each task family per scene, 55 s apart).
SCENE_S = 55.0


def clips_per_task_problem(seconds: float, clips_per_task: int | None) -> str | None:
    """Why ``seconds`` and ``clips_per_task`` do not go together (N lean scenes last N x 55 s), else None."""
    if clips_per_task is None:
        return None
    if isinstance(clips_per_task, bool) or not isinstance(clips_per_task, int) or clips_per_task < 1:
        return f"demo.clips_per_task: expected a whole number >= 1 or null, got {clips_per_task!r}"
    want = clips_per_task * SCENE_S
    if abs(seconds - want) > 1e-9:
        return (
            f"demo.seconds: {seconds:g} does not fit demo.clips_per_task {clips_per_task}"
            f" (one {SCENE_S:g} s scene per clip of each task family: seconds must be {want:g})"
        )
    return None
