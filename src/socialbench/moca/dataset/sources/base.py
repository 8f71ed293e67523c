"""What every MoCA raw source is: a source module defines ``SOURCE``, a :class:`Source` (its ``files``,
with URL and sha256 where public, ``manual`` steps where not, and ``read(root, options)`` yielding
normalized candidate records). :func:`acquire` fetches a source (``download``, ``mirror`` or ``manual``)
and writes ``<root>/.manifest.json``, what the pipeline tracks."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd
import pandera.pandas as pa

from socialbench.acquire.archive import extract
from socialbench.acquire.download import ChecksumMismatch, copy_local, download, recorded_verification, verification
from socialbench.core.errors import ConfigError, DataError
from socialbench.core.hashing import folder_fingerprint, sha256_file
from socialbench.core.io import write_text_atomic
from socialbench.core.secrets import redact_url

log = logging.getLogger(__name__)

MODES = ("download", "mirror", "manual")
MODALITIES = ("image_text", "video_text")
MANIFEST = ".manifest.json"

#: The normalized candidate record every source yields (one JSON object per line in the pool).
CANDIDATE_FIELDS = tuple(
    (
        "id source split modality text speaker context media media_urls image_description source_labels metadata origin"
    ).split()
)


@dataclass(frozen=True)
class RemoteFile:
    """One file of a source, at ``relpath`` under its root; ``url`` None: no public direct link (``manual``)."""

    relpath: str
    url: str | None
    sha256: str | None = None
    split: str | None = None  # the source split it holds (None: not split-specific, e.g. media)
    kind: str = "annotations"  # annotations | media
    extract_to: str | None = None  # an archive: unpacked into <root>/<extract_to>
    folder: bool = False  # a folder the user fills by hand (manual only), e.g. unpacked images
    size: int | None = None
    provenance: str = ""  # where the URL and hash were taken from


@dataclass(frozen=True)
class SourceOptions:
    """A source's entry in params.yaml (``moca.sources.<name>``), defaults filled."""

    mode: str = "download"
    mirror: str | None = None
    media: bool = False  # also fetch the media files (large)
    splits: tuple[str, ...] | None = None  # None: every split the source has
    encoding: str = "utf-8"
    columns: dict[str, str] = field(default_factory=dict)  # column mapping, for sources read from tables
    include: tuple[str, ...] | None = None  # file-name globs of the annotation files to read (RedCaps)

    def wanted(self, splits: Iterable[str]) -> list[str]:
        """Those of ``splits`` these options read (every one without ``splits``)."""
        return [s for s in splits if self.splits is None or s in self.splits]

    @classmethod
    def from_mapping(cls, name: str, raw: dict[str, Any] | None) -> SourceOptions:
        raw = dict(raw or {})
        known = {"mode", "mirror", "media", "splits", "encoding", "columns", "include"}
        unknown, listed = ", ".join(sorted(set(raw) - known)), ", ".join(sorted(known))
        if unknown:
            raise ConfigError(f"moca.sources.{name}: unknown key(s) {unknown} (known: {listed})")
        mode = raw.get("mode", "download")
        if mode not in MODES:
            raise ConfigError(f"moca.sources.{name}.mode: {mode!r} is not one of {', '.join(MODES)}")
        if mode == "mirror" and not raw.get("mirror"):
            raise ConfigError(f"moca.sources.{name}: mode mirror needs `mirror: <folder>` (e.g. ../shared/data/{name})")
        splits, include = raw.get("splits"), raw.get("include")
        return cls(
            mode=mode,
            mirror=raw.get("mirror"),
            media=bool(raw.get("media", False)),
            splits=tuple(splits) if splits is not None else None,
            encoding=raw.get("encoding", "utf-8"),
            columns=dict(raw.get("columns") or {}),
            include=tuple(include) if include is not None else None,
        )


@dataclass(frozen=True)
class Source:
    name: str
    title: str
    modality: str
    citation: str
    homepage: str
    license: str
    files: tuple[RemoteFile, ...]
    manual: str  # exact steps for what has no public direct link (or for using your own copy)
    read: Callable[[Path, SourceOptions], list[dict[str, Any]]]
    notes: str = ""

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.split for f in self.files if f.split is not None))

    def selected(self, options: SourceOptions) -> list[RemoteFile]:
        """The files ``options`` ask for: annotation files of the chosen splits, media if asked."""
        if options.splits is not None:
            unknown = [s for s in options.splits if s not in self.splits]
            if unknown:
                why = f"unknown split(s) {', '.join(unknown)} (this source has {', '.join(self.splits)})"
                raise ConfigError(f"moca.sources.{self.name}.splits: {why}")
        return [
            f
            for f in self.files
            if (f.kind != "media" or options.media) and (f.split is None or options.wanted([f.split]))
        ]


# ---- Candidate records ---------------------------------------------------------------------------


def candidate(
    source: str,
    native_id: str,
    *,
    split: str,
    modality: str,
    text: str,
    origin_file: str,
    origin_record: str,
    speaker: str | None = None,
    context: Sequence[dict[str, Any]] = (),
    media: Sequence[str] = (),
    media_urls: Sequence[str] = (),
    image_description: Sequence[str] = (),
    source_labels: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One normalized candidate record (id ``<source>:<native id>``)."""
    return {
        "id": f"{source}:{native_id}",
        "source": source,
        "split": split,
        "modality": modality,
        "text": text,
        "speaker": speaker,
        "context": [dict(c) for c in context],
        "media": list(media),
        "media_urls": list(media_urls),
        "image_description": list(image_description),
        "source_labels": dict(source_labels or {}),
        "metadata": dict(metadata or {}),
        "origin": {"file": origin_file, "record": origin_record},
    }


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and x.strip() for x in v)


def _context(v: Any) -> bool:
    return isinstance(v, list) and all(
        isinstance(c, dict)
        and set(c) == {"speaker", "text"}
        and isinstance(c["text"], str)
        and (c["speaker"] is None or isinstance(c["speaker"], str))
        for c in v
    )


def _origin(v: Any) -> bool:
    return isinstance(v, dict) and set(v) == {"file", "record"} and all(isinstance(x, str) and x for x in v.values())


def candidate_schema() -> pa.DataFrameSchema:
    """The pandera schema of a candidate record (a pool is a frame of them)."""
    nonempty = pa.Check.str_length(min_value=1)

    def obj(check: Callable[[Any], bool], error: str) -> pa.Column:
        return pa.Column(object, pa.Check(check, element_wise=True, error=error))

    return pa.DataFrameSchema(
        {
            "id": pa.Column(str, [nonempty, pa.Check.str_matches(r"^[a-z0-9_]+:\S+$")], unique=True),
            "source": pa.Column(str, pa.Check.str_matches(r"^[a-z0-9_]+$")),
            "split": pa.Column(str, nonempty),
            "modality": pa.Column(str, pa.Check.isin(MODALITIES)),
            "text": pa.Column(str),
            "speaker": pa.Column(str, nullable=True),
            "context": obj(_context, "a list of {speaker, text} objects"),
            "media": obj(_str_list, "a list of non-empty paths"),
            "media_urls": obj(_str_list, "a list of non-empty URLs"),
            "image_description": obj(_str_list, "a list of non-empty strings"),
            "source_labels": obj(lambda v: isinstance(v, dict), "an object"),
            "metadata": obj(lambda v: isinstance(v, dict), "an object"),
            "origin": obj(_origin, "an object {file, record}"),
        },
        strict=True,
        coerce=False,
    )


def validate_candidates(records: list[dict[str, Any]], source: str) -> None:
    """Raise DataError naming file, record and field for the first record that breaks the candidate schema."""
    if not records:
        return
    for i, rec in enumerate(records):
        missing = [f for f in CANDIDATE_FIELDS if f not in rec]
        extra = sorted(set(rec) - set(CANDIDATE_FIELDS))
        name = rec.get("id") if isinstance(rec.get("id"), str) else f"record {i + 1}"
        if missing:
            raise DataError(source, "missing", record=name, field=missing[0])
        if extra:
            raise DataError(source, "not a candidate field", record=name, field=extra[0])
    frame = pd.DataFrame([{f: rec[f] for f in CANDIDATE_FIELDS} for rec in records])
    try:
        candidate_schema().validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        row = exc.failure_cases.iloc[0]
        col, idx = str(row.get("column")), row.get("index")
        pos = int(idx) if idx is not None and not pd.isna(idx) else 0
        if row.get("check") == "field_uniqueness":
            why = "duplicate id: two records of the source map to it"
            raise DataError(source, why, record=records[pos]["id"], field="id") from None
        why = f"failed {row.get('check')}: got {json.dumps(records[pos].get(col), ensure_ascii=False)[:80]}"
        raise DataError(source, why, record=str(records[pos].get("id")), field=col) from None
    for rec in records:
        if not rec["id"].startswith(rec["source"] + ":"):
            raise DataError(source, f"id must start with its source {rec['source']!r}", record=rec["id"], field="id")


# ---- Acquisition ---------------------------------------------------------------------------------


class ManualStepRequired(DataError):
    """A file the source cannot download by itself is not there yet; the message says what to do."""


def _dest(root: Path, relpath: str) -> Path:
    return root.joinpath(*PurePosixPath(relpath).parts)


def _manifest_entry(root: Path, f: RemoteFile, path: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {"relpath": f.relpath, "kind": f.kind, "split": f.split}
    if path.is_dir():  # a folder put there by hand: its content fingerprint (large files sampled)
        files = sum(1 for p in path.rglob("*") if p.is_file())
        entry.update(fingerprint=folder_fingerprint(path), files=files, pinned=False)
    else:
        entry.update(sha256=sha256_file(path), size=path.stat().st_size, pinned=f.sha256 is not None)
    if f.url:
        entry["url"] = redact_url(f.url, whole_query=True)
    if f.extract_to:
        entry["extracted_to"] = f.extract_to
    return entry


def _unpack(root: Path, f: RemoteFile, archive: Path, limits: Any = None) -> None:
    """Extract an archive into ``<root>/<extract_to>``, again only when its bytes changed."""
    folder = _dest(root, f.extract_to or "")
    stamp = folder.with_name(f".{folder.name}.sha256")
    digest = sha256_file(archive)
    if folder.is_dir() and stamp.is_file() and stamp.read_text().strip() == digest:
        return
    extract(archive, folder, replace=True, limits=limits)
    write_text_atomic(stamp, digest + "\n")


def _missing_manual(source: Source, f: RemoteFile, dest: Path, why: str) -> ManualStepRequired:
    return ManualStepRequired(str(dest), f"{why}. {source.title}: {source.manual}", record=f.relpath)


def acquire(
    source: Source, root: str | os.PathLike[str], options: SourceOptions, *, limits: Any = None, **download_options: Any
) -> dict[str, Any]:
    """Put the source's selected files under ``root`` and write the manifest (``limits``: of archives)."""
    root = Path(root)
    files = source.selected(options)
    if options.mode == "mirror":
        mirror = Path(options.mirror or "")
        if not mirror.is_dir():
            raise DataError(str(mirror), f"the mirror folder of source {source.name} does not exist")
        absent = [
            f.relpath
            for f in files
            if not (_dest(mirror, f.relpath).is_dir() if f.folder else _dest(mirror, f.relpath).is_file())
        ]
        if absent:
            more = f" (and {len(absent) - 1} more)" if len(absent) > 1 else ""
            why = f"its files are named as under the source root ({', '.join(f.relpath for f in files)})"
            raise DataError(str(_dest(mirror, absent[0])), f"not in the mirror of source {source.name}{more}; {why}")
    entries = []
    verified: dict[str, str] = {}
    for f in files:
        dest = _dest(root, f.relpath)
        if options.mode == "mirror":
            src = _dest(Path(options.mirror or ""), f.relpath)
            if f.folder:  # every file of the folder, each copied atomically
                for p in sorted(q for q in src.rglob("*") if q.is_file()):
                    copy_local(p, dest / p.relative_to(src))
                entries.append(_manifest_entry(root, f, dest))
                continue
            verified[f.relpath] = verification(src, f.sha256, download_options.get("trust"))
            copy_local(src, dest, sha256=f.sha256, trust=download_options.get("trust"))
        elif options.mode == "manual" or f.url is None:
            unpacked = _dest(root, f.extract_to) if f.extract_to else None
            if f.folder or (unpacked is not None and not dest.is_file() and unpacked.is_dir()):
                # Put there by hand (a folder of media, or an archive the user unpacked himself).
                folder = dest if f.folder else unpacked
                if not folder.is_dir() or not any(folder.iterdir()):
                    raise _missing_manual(source, f, folder, f"{folder} is missing or empty")
                entries.append(_manifest_entry(root, f, folder))
                continue
            if not dest.is_file():
                if f.url is not None:  # a public file: the source's manual steps (often about media) do not apply
                    at = f"(it is at {redact_url(f.url, whole_query=True)}), or acquire it with --mode download"
                    why = f"mode manual: nothing is downloaded, and {f.relpath} is not under {root}; put it there {at}"
                    raise ManualStepRequired(str(dest), why, record=f.relpath)
                why = f"this file has no public direct link, and {f.relpath} is not under {root}"
                raise _missing_manual(source, f, dest, why)
            if f.sha256 is not None and sha256_file(dest) != f.sha256:
                raise ChecksumMismatch(str(dest), f.sha256, sha256_file(dest))
        else:
            verified[f.relpath] = verification(f.url, f.sha256, download_options.get("trust"))
            if verified[f.relpath] == "none":
                log.warning("%s %s: no sha256 pinned or recorded; using it unverified", source.name, f.relpath)
            download(f.url, dest, sha256=f.sha256, **download_options)
        if f.extract_to:
            _unpack(root, f, dest, limits)
        entries.append(
            {
                **_manifest_entry(root, f, dest),
                # "first use" is logged, not written: the manifest is a versioned output (same inputs, same bytes)
                "verified": recorded_verification(verified.get(f.relpath, "pinned" if f.sha256 else "none")),
            }
        )
    manifest = {"source": source.name, "mode": options.mode, "files": sorted(entries, key=lambda e: e["relpath"])}
    write_text_atomic(root / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def describe(source: Source) -> str:
    """A source's locations and manual steps, as `socialbench moca sources` prints them."""
    lines = [f"{source.name}: {source.title} ({source.modality}); {source.homepage}", f"  licence: {source.license}"]
    for f in source.files:
        where = f.url or "no public direct link (manual)"
        pin = f"sha256 {f.sha256}" if f.sha256 else "sha256 not pinned"
        split = f", split {f.split}" if f.split else ""
        lines.append(f"  {f.relpath} [{f.kind}{split}]: {where}; {pin}")
    lines.append(f"  manual: {source.manual}")
    return "\n".join(lines)
