"""Supplementary collected data (section 4.1: "meme-text pairs and online debates"), in one CSV at
``<root>/supplementary.csv``; extra columns are kept as source labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.moca.dataset.sources.base import RemoteFile, Source, SourceOptions
from socialbench.moca.dataset.sources.tabular import column_map, read_table

NAME = "supplementary"
DEFAULT_COLUMNS = {"id": "id", "text": "text", "media": "media", "modality": "modality"}


def read(root: Path, options: SourceOptions) -> list[dict[str, Any]]:
    cols = column_map(NAME, DEFAULT_COLUMNS, options.columns)
    return read_table(
        NAME, root, "supplementary.csv", split="all", modality=None, columns=cols, encoding=options.encoding
    )


SOURCE = Source(
    name=NAME,
    title="Supplementary collected data (meme-text pairs, online debates)",
    modality="image_text",
    citation="MoCA section 4.1 (collected by the benchmark's builders)",
    homepage="(local)",
    license="whatever the collected material allows; record it in a column",
    files=(RemoteFile("supplementary.csv", None, split="all"),),
    manual=(
        "Put your collected pairs at <root>/supplementary.csv with columns id, modality (image_text or video_text),"
        " text, media (a path relative to <root>, or an http(s) URL), plus any provenance columns, and the media"
        " files under <root>."
    ),
    read=read,
)
