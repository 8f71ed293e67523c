"""MultiMET (Zhang et al., 2021): text-image pairs annotated with metaphors, sentiment and intent. No
public download link could be verified, so it is manual (``SOURCE.manual``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.moca.dataset.sources.base import RemoteFile, Source, SourceOptions
from socialbench.moca.dataset.sources.tabular import column_map, read_table

NAME = "multimet"
DEFAULT_COLUMNS = {"id": "id", "text": "text", "media": "image"}


def read(root: Path, options: SourceOptions) -> list[dict[str, Any]]:
    cols = column_map(NAME, DEFAULT_COLUMNS, options.columns)
    return read_table(
        NAME, root, "multimet.csv", split="all", modality="image_text", columns=cols, encoding=options.encoding
    )


SOURCE = Source(
    name=NAME,
    title="MultiMET (Zhang et al., 2021)",
    modality="image_text",
    citation="Zhang et al. 2021, MultiMET: A Multimodal Dataset for Metaphor Understanding, ACL-IJCNLP",
    homepage="https://aclanthology.org/2021.acl-long.249/",
    license="research use, as granted by the authors",
    files=(RemoteFile("multimet.csv", None, split="all"), RemoteFile("images", None, kind="media", folder=True)),
    manual=(
        "MultiMET is released for research by its authors (Dalian University of Technology; contact on the paper,"
        " https://aclanthology.org/2021.acl-long.249/). Put its annotations at <root>/multimet.csv with columns"
        " id, text, image (the image path relative to <root>, e.g. images/123.jpg) and the images under"
        " <root>/images/; if the columns are named otherwise, map them in params"
        " (moca.sources.multimet.columns: {id: ..., text: ..., media: ...}). Other columns are kept as labels."
    ),
    read=read,
)
