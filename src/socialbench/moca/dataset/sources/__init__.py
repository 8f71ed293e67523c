"""MoCA's raw sources (section 4.1, appendix B.1): one module per source, each with its official
locations (``SOURCE``, a :class:`~socialbench.moca.dataset.sources.base.Source`) and a reader yielding
normalized candidate records. ``get_source(name)`` finds one; ``read_source`` reads and validates."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError
from socialbench.moca.dataset.sources.base import Source, SourceOptions, validate_candidates

#: Every source module, in the order section 4.1 names them (video first, then image-text, then the
#: supplementary collected data).
SOURCE_NAMES = (
    "mustard",
    "mintrec",
    "redcaps",
    "mmsd2",
    "hateful_memes",
    "multimet",
    "memecap",
    "instagram",
    "supplementary",
)


def get_source(name: str) -> Source:
    if name not in SOURCE_NAMES:
        raise ConfigError(f"unknown MoCA source {name!r}; known: {', '.join(SOURCE_NAMES)}")
    return importlib.import_module(f"socialbench.moca.dataset.sources.{name}").SOURCE


def read_source(name: str, root: str | Path, options: SourceOptions | None = None) -> list[dict[str, Any]]:
    """The validated candidate records of source ``name`` whose files are under ``root``."""
    source = get_source(name)
    options = options or SourceOptions()
    records = source.read(Path(root), options)
    validate_candidates(records, f"{root} ({name})")
    return records


__all__ = ["SOURCE_NAMES", "Source", "SourceOptions", "get_source", "read_source"]
