"""Where the AMI Meeting Corpus's raw files live (pure), plus thin fetchers: the official host's annotations
zip and per-meeting media (``amicorpus/<meeting>/...``), or a local ``mirror`` in the same layout
(docs/decisions/acquisition.md)."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from socialbench.acquire.archive import extract
from socialbench.acquire.download import download
from socialbench.core.errors import ConfigError, DataError
from socialbench.core.hashing import sha256_file
from socialbench.core.secrets import redact_url

log = logging.getLogger(__name__)

#: Base URL of the official media mirror (the ``amicorpus/`` tree is under it).
MIRROR_BASE_URL = "https://groups.inf.ed.ac.uk/ami/AMICorpusMirror/"
#: The manual-annotations release archive on the official host.
ANNOTATIONS_URL = "https://groups.inf.ed.ac.uk/ami/AMICorpusAnnotations/ami_public_manual_1.6.2.zip"
#: sha256 of ANNOTATIONS_URL; None = not pinned (fetch_annotations warns). To be filled once
#: measured on a real download (see docs/decisions/acquisition.md).
ANNOTATIONS_SHA256: str | None = None
#: Folder (under the local root) the annotations archive is unpacked into.
ANNOTATIONS_DIR = "annotations"

#: The room-view camera and the four participants' close-up cameras (``camera=`` in meetings.xml).
VIDEO_VIEWS: tuple[str, ...] = ("Corner", "Closeup1", "Closeup2", "Closeup3", "Closeup4")
#: The headset mix (all four close-talking microphones summed), 16 kHz WAV.
AUDIO_VIEWS: tuple[str, ...] = ("Mix-Headset",)
DEFAULT_VIEWS: tuple[str, ...] = VIDEO_VIEWS + AUDIO_VIEWS

_VIEW_FILES: dict[str, tuple[str, str]] = {
    **{v: ("video", "avi") for v in VIDEO_VIEWS},
    **{v: ("audio", "wav") for v in AUDIO_VIEWS},
}

#: AMI meeting ids: site+type (ES, IS, TS, EN, IB, IN), four digits, an optional session letter.
MEETING_ID = re.compile(r"(?:ES|IS|TS|EN|IB|IN)\d{4}[a-z]?")


class Source(NamedTuple):
    """One file to fetch: ``url`` (an http(s) URL or a mirror path) and ``relpath`` under the local root."""

    url: str
    relpath: str


def media_relpath(meeting: str, view: str) -> str:
    """``amicorpus/<meeting>/<video|audio>/<meeting>.<view>.<avi|wav>`` (the official layout)."""
    if not isinstance(view, str) or view not in _VIEW_FILES:
        raise ConfigError(f"unknown AMI view {view!r}; known views: {', '.join(_VIEW_FILES)}")
    if not isinstance(meeting, str) or not MEETING_ID.fullmatch(meeting):
        raise ConfigError(f"{meeting!r} is not an AMI meeting id (like ES2002a, IS1000b, IB4001)")
    folder, ext = _VIEW_FILES[view]
    return f"amicorpus/{meeting}/{folder}/{meeting}.{view}.{ext}"


def _mirror_path(mirror: str | os.PathLike[str], relpath: str) -> str:
    return str(Path(mirror).joinpath(*PurePosixPath(relpath).parts))


def media_sources(
    meetings: Iterable[str],
    views: Sequence[str] = DEFAULT_VIEWS,
    *,
    base_url: str = MIRROR_BASE_URL,
    mirror: str | os.PathLike[str] | None = None,
) -> list[Source]:
    """(url, relpath) for every meeting x view, meeting-major, duplicates once; with ``mirror``, ``url`` is
    the file's path in that folder. Pure: nothing is checked on disk."""
    if isinstance(meetings, str) or isinstance(views, str):
        raise ConfigError("meetings and views must be lists of names, not a single string")
    views = list(views)
    if not views:
        raise ConfigError("no AMI views given")
    out: list[Source] = []
    seen: set[str] = set()
    for meeting in meetings:
        for view in views:
            rel = media_relpath(meeting, view)
            if rel in seen:
                continue
            seen.add(rel)
            url = _mirror_path(mirror, rel) if mirror is not None else base_url.rstrip("/") + "/" + rel
            out.append(Source(url, rel))
    return out


def annotations_source(*, url: str = ANNOTATIONS_URL, mirror: str | os.PathLike[str] | None = None) -> Source:
    """(url, relpath) of the annotations archive; with ``mirror``, its path in that folder."""
    name = PurePosixPath(url.split("?", 1)[0]).name
    if not name:
        raise ConfigError(f"{redact_url(url, whole_query=True)}: names no archive file")
    return Source(_mirror_path(mirror, name) if mirror is not None else url, name)


def _require_mirror(sources: list[Source], mirror: str | os.PathLike[str]) -> None:
    missing = [s.url for s in sources if not Path(s.url).is_file()]
    if missing:
        more = f" (and {len(missing) - 1} more of {len(sources)} files)" if len(missing) > 1 else ""
        raise DataError(missing[0], f"not in the AMI mirror {mirror}{more}")


def fetch_media(
    meetings: Iterable[str],
    views: Sequence[str],
    dest_root: str | os.PathLike[str],
    *,
    base_url: str = MIRROR_BASE_URL,
    mirror: str | os.PathLike[str] | None = None,
    sha256: Mapping[str, str] | None = None,
    **download_options,
) -> list[Path]:
    """Fetch every meeting x view into ``dest_root``, checked against ``sha256`` (relpath -> digest) where given;
    with ``mirror`` the first missing file is named before anything is copied. Returns the paths."""
    sources = media_sources(meetings, views, base_url=base_url, mirror=mirror)
    if mirror is not None:
        _require_mirror(sources, mirror)
    sha256 = dict(sha256 or {})
    root = Path(dest_root)
    return [
        download(
            s.url, root.joinpath(*PurePosixPath(s.relpath).parts), sha256=sha256.get(s.relpath), **download_options
        )
        for s in sources
    ]


def fetch_annotations(
    dest_root: str | os.PathLike[str],
    *,
    url: str = ANNOTATIONS_URL,
    sha256: str | None = ANNOTATIONS_SHA256,
    mirror: str | os.PathLike[str] | None = None,
    unpack: bool = True,
    **download_options,
) -> Path:
    """Fetch the annotations archive into ``dest_root`` (``sha256=None``: unpinned, with a warning) and return
    it, or (``unpack``) the folder it is extracted into, again only when the archive's sha256 changed."""
    source = annotations_source(url=url, mirror=mirror)
    if mirror is not None:
        _require_mirror([source], mirror)
    if sha256 is None and download_options.get("trust") is None:
        log.warning(
            "AMI annotations archive %s: no sha256 pinned or recorded; using it unverified (pin ANNOTATIONS_SHA256)",
            redact_url(source.url, whole_query=True),
        )
    root = Path(dest_root)
    archive = download(source.url, root / source.relpath, sha256=sha256, **download_options)
    if not unpack:
        return archive
    folder = root / ANNOTATIONS_DIR
    stamp = root / f".{ANNOTATIONS_DIR}.sha256"
    digest = sha256 or sha256_file(archive)
    if folder.is_dir() and stamp.is_file() and stamp.read_text().strip() == digest:
        log.debug("%s is already extracted from %s", folder, archive)
        return folder
    extract(archive, folder, replace=True)
    tmp = stamp.with_name(stamp.name + ".tmp")
    tmp.write_text(digest + "\n")
    os.replace(tmp, stamp)
    return folder
