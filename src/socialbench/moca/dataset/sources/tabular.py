"""Sources read from a CSV table under the source root (MultiMET, Instagram, supplementary): their
releases are no public downloads and their column names vary, so ``columns`` maps them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError, DataError
from socialbench.core.paths import resolve_inside
from socialbench.moca.dataset.sources.base import MODALITIES, SourceOptions, candidate
from socialbench.moca.dataset.sources.readers import read_text, table_rows

ROLES = ("id", "text", "media")  # the columns every table needs; `modality` is optional
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp")


def column_map(name: str, defaults: Mapping[str, str], override: Mapping[str, str]) -> dict[str, str]:
    unknown = sorted(set(override) - set(ROLES) - {"modality"})
    if unknown:
        raise ConfigError(
            f"moca.sources.{name}.columns: unknown role(s) {', '.join(unknown)} (roles: {', '.join(ROLES)}, modality)"
        )
    return {**defaults, **override}


def media_file(root: Path, value: str, source: str = "", record: str | None = None, field: str | None = None) -> Path:
    """The media path a cell names, inside the root; without a suffix, the first existing image of that stem."""
    p = resolve_inside(root, value, source or str(root), record=record, field=field, what="media path")
    if p.suffix:
        return p
    for suffix in IMAGE_SUFFIXES:
        if p.with_suffix(suffix).is_file():
            return p.with_suffix(suffix)
    return p.with_suffix(".jpg")


def read_table(
    name: str,
    root: Path,
    relpath: str,
    *,
    split: str,
    modality: str | None,
    columns: Mapping[str, str],
    encoding: str = "utf-8",
) -> list[dict[str, Any]]:
    """Candidates of one table. ``modality`` None: every row says it in the ``modality`` column."""
    path = root / relpath
    shown = str(path)
    required = [columns[r] for r in ROLES] + ([columns["modality"]] if modality is None else [])
    _, rows = table_rows(read_text(path, encoding), shown, required)
    used = set(required)
    out = []
    for line, row in rows:
        native = row[columns["id"]].strip()
        if not native or any(c.isspace() for c in native):
            why = f"expected an id without spaces, got {native!r}"
            raise DataError(shown, why, record=f"line {line}", field=columns["id"])
        media = row[columns["media"]].strip()
        if not media:
            why = "empty: every candidate needs its image or video"
            raise DataError(shown, why, record=native, field=columns["media"])
        kind = modality or row[columns["modality"]].strip()
        if kind not in MODALITIES:
            why = f"expected one of {', '.join(MODALITIES)}, got {kind!r}"
            raise DataError(shown, why, record=native, field=columns.get("modality", "modality"))
        url = media.lower().startswith(("http://", "https://"))
        out.append(
            candidate(
                name,
                native,
                split=split,
                modality=kind,
                text=row[columns["text"]],
                media=[] if url else [str(media_file(root, media, shown, native, columns["media"]))],
                media_urls=[media] if url else [],
                source_labels={k: v for k, v in sorted(row.items()) if k not in used},
                origin_file=relpath,
                origin_record=f"line {line}",
            )
        )
    return out


def table_source(
    name: str, relpath: str, defaults: Mapping[str, str], modality: str | None
) -> Callable[[Path, SourceOptions], list[dict[str, Any]]]:
    """The ``read`` of a source that is one table, ``<root>/<relpath>`` (its columns mapped in params)."""

    def read(root: Path, options: SourceOptions) -> list[dict[str, Any]]:
        cols = column_map(name, defaults, options.columns)
        return read_table(name, root, relpath, split="all", modality=modality, columns=cols, encoding=options.encoding)

    return read
