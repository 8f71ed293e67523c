"""Acquisition of a MeetingToM source through :mod:`socialbench.acquire`: the annotations release once per
source (an archive in the ``mirror``, checksum-checked and extracted safely; an unpacked release read in
place; a missing mirror, noted; or a download from ``url``), the media per meeting (``fetched.json``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from socialbench.acquire.archive import extract
from socialbench.acquire.download import recorded_verification, verification
from socialbench.core.errors import DataError
from socialbench.core.hashing import sha256_file, sha256_json
from socialbench.core.io import parse_json_object, read_file_bytes, read_file_text, write_json
from socialbench.core.secrets import redact_url
from socialbench.meetingtom.dataset.acquire import (
    MIRROR_BASE_URL,
    annotations_source,
    fetch_annotations,
    fetch_media,
    media_relpath,
    media_sources,
)
from socialbench.meetingtom.schema.settings import SourceSettings, mirror_path

log = logging.getLogger(__name__)

SOURCE_FILE = "source.json"
MANIFEST_FILE = "manifest.json"
MEETINGS_XML = "corpusResources/meetings.xml"
FETCHED = "fetched.json"


def mirror_state(source: SourceSettings, root: str | Path = ".") -> dict[str, Any]:
    """A cheap fingerprint of the source's mirror (present, file count, bytes; no hashing): a rule
    param, so Snakemake reruns the release job when the mirror appears, goes or changes size."""
    folder = mirror_path(source, root)
    if folder is None:
        return {"mirror": None}
    if not folder.is_dir():
        return {"mirror": source.mirror, "present": False}
    files = [p for p in folder.rglob("*") if p.is_file()]
    return {
        "mirror": source.mirror,
        "present": True,
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
    }


def expected_sha256(source: SourceSettings, mirror: Path | None) -> str | None:
    """The archive's checksum: params', else the mirror's ``<archive>.sha256`` (sha256sum's), else None."""
    if source.sha256:
        return source.sha256
    if mirror is not None:
        side = mirror / f"{source.archive_name}.sha256"
        if side.is_file():
            text = read_file_text(side).split()
            if not text or len(text[0]) != 64:
                raise DataError(str(side), "not a sha256 file (expected '<64 hex digits>  <name>')")
            return text[0].lower()
    return None


def file_manifest(folder: Path) -> dict[str, str]:
    """relative POSIX path -> sha256 of every file under ``folder``, sorted."""
    return {p.relative_to(folder).as_posix(): sha256_file(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def acquire_release(
    source: SourceSettings,
    out_dir: str | Path,
    downloads: str | Path,
    *,
    root: str | Path = ".",
    trust: Any = None,
    limits: Any = None,
) -> dict[str, Any]:
    """Put the source's annotations release in place (module doc); write and return ``source.json``.
    ``trust`` (a ``TrustStore``) records an unpinned archive's hash on first use; ``limits`` bound extraction."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mirror = mirror_path(source, root)
    info: dict[str, Any] = {
        "source": source.name,
        "mirror": source.mirror,
        "url": redact_url(source.url, whole_query=True),
        "present": True,
        **dict.fromkeys(("archive", "sha256", "annotations", "files", "annotations_sha256", "note")),
    }
    if mirror is not None and not mirror.is_dir():
        if source.name == "demo":
            raise DataError(
                str(mirror), "the demo mirror is missing (socialbench demo --benchmark meetingtom writes it)"
            )
        note = f"AMI mirror {source.mirror} not found: no real-data instances; the pipeline runs the demo meetings only"
        info.update(mode="absent", present=False, note=note)
        log.warning("meetingtom: %s", info["note"])
    elif mirror is not None and not (mirror / source.archive_name).is_file() and (mirror / MEETINGS_XML).is_file():
        manifest = file_manifest(mirror)
        write_json(out / MANIFEST_FILE, manifest)
        info.update(
            mode="mirror-folder",
            annotations=source.mirror,
            files=len(manifest),
            annotations_sha256=sha256_json(manifest),
            note=f"unpacked release read in place from {source.mirror}; {MANIFEST_FILE} lists the sha256 of its files",
        )
    else:
        if mirror is not None and not (mirror / source.archive_name).is_file():
            raise DataError(
                str(mirror),
                f"the AMI mirror holds neither the archive {source.archive_name} nor an unpacked"
                f" release ({MEETINGS_XML})",
            )
        sha = expected_sha256(source, mirror)
        # source.json is versioned: "first use" is logged (TrustStore.record), recorded as "recorded"
        how = recorded_verification(verification(annotations_source(url=source.url, mirror=mirror).url, sha, trust))
        archive = fetch_annotations(downloads, url=source.url, sha256=sha, mirror=mirror, unpack=False, trust=trust)
        folder = out / "annotations"
        extract(archive, folder, replace=True, limits=limits)
        manifest = file_manifest(folder)
        info.update(
            mode="mirror-archive" if mirror is not None else "download",
            archive=source.archive_name,
            sha256=sha or sha256_file(archive),
            annotations=folder.as_posix(),
            files=len(manifest),
            annotations_sha256=sha256_json(manifest),
            verified=how,
            note={
                "pinned": None,
                "recorded": "archive checksum not pinned: its hash is the one recorded on its first use"
                " (trust on first use; later uses are checked against it)",
                "none": "archive checksum neither pinned nor recorded: used unverified",
            }[how],
        )
    write_json(out / SOURCE_FILE, info)
    return info


def read_source(release_dir: str | Path) -> dict[str, Any]:
    """``source.json`` of a release folder (what the per-meeting stages read first)."""
    path = Path(release_dir) / SOURCE_FILE
    if not path.exists():
        raise DataError(str(path), "no source record: run the release stage (socialbench meetingtom release) first")
    return parse_json_object(read_file_bytes(path), str(path), "(a source record)")


def fetch_meeting_media(
    source: SourceSettings, meeting: str, dest_root: str | Path, *, root: str | Path = "."
) -> dict[str, Any]:
    """Fetch one meeting's views into ``dest_root``; write and return ``amicorpus/<meeting>/fetched.json``."""
    dest_root = Path(dest_root)
    folder = dest_root / "amicorpus" / meeting
    folder.mkdir(parents=True, exist_ok=True)
    mirror = mirror_path(source, root)
    views: dict[str, Any] = {}
    note = None
    if not source.views:
        note = "no views requested (params meetingtom.<source>.views): no clips for this meeting"
    elif mirror is not None and not mirror.is_dir():
        note = f"mirror {source.mirror} not found: no media"
    else:
        sha = None
        if mirror is not None:
            sources = media_sources([meeting], source.views, mirror=mirror)
            sha = {s.relpath: sha256_file(s.url) for s in sources if Path(s.url).is_file()}
        paths = fetch_media(
            [meeting], source.views, dest_root, base_url=source.media_url or MIRROR_BASE_URL, mirror=mirror, sha256=sha
        )
        for view, path in zip(source.views, paths):
            views[view] = {
                "path": media_relpath(meeting, view),
                "sha256": sha256_file(path),
                "bytes": path.stat().st_size,
            }
    # view paths are relative to ``root`` (the folder the amicorpus/ tree is in)
    record = {"meeting": meeting, "source": source.name, "root": dest_root.as_posix(), "views": views, "note": note}
    write_json(folder / FETCHED, record)
    return record
