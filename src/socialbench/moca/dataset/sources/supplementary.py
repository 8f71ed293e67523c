"""Supplementary collected data (section 4.1: "meme-text pairs and online debates"), in one CSV at
``<root>/supplementary.csv``; extra columns are kept as source labels."""

from __future__ import annotations

from socialbench.moca.dataset.sources.base import RemoteFile, Source
from socialbench.moca.dataset.sources.tabular import table_source

NAME = "supplementary"
DEFAULT_COLUMNS = {"id": "id", "text": "text", "media": "media", "modality": "modality"}
read = table_source(NAME, "supplementary.csv", DEFAULT_COLUMNS, None)


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
