"""MoCA's raw sources (section 4.1, appendix B.1): one module per source, each with its official
locations (``SOURCE``, a :class:`~socialbench.moca.dataset.sources.base.Source`) and a reader yielding
normalized candidate records. ``get_source(name)`` finds one; ``read_source`` reads and validates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.core.plugins import Registry
from socialbench.moca.dataset.sources.base import Source, SourceOptions, validate_candidates

#: Every source module, in the order section 4.1 names them.
SOURCE_NAMES = tuple("mustard mintrec redcaps mmsd2 hateful_memes multimet memecap instagram supplementary".split())


#: The sources: each module's ``SOURCE``, imported when first asked for.
SOURCES: Registry[Source] = Registry(
    "MoCA source", Source, {name: (f"{__name__}.{name}", "SOURCE", None) for name in SOURCE_NAMES}
)


def get_source(name: str) -> Source:
    """The source ``name`` (a ConfigError listing the known ones for an unknown name)."""
    return SOURCES.get(name)  # type: ignore[return-value]


def read_source(name: str, root: str | Path, options: SourceOptions | None = None) -> list[dict[str, Any]]:
    """The validated candidate records of source ``name`` whose files are under ``root``."""
    source = get_source(name)
    options = options or SourceOptions()
    records = source.read(Path(root), options)
    validate_candidates(records, f"{root} ({name})")
    return records


__all__ = ["SOURCES", "SOURCE_NAMES", "Source", "SourceOptions", "get_source", "read_source"]
