"""MultiMET (Zhang et al., 2021): text-image pairs annotated with metaphors, sentiment and intent. No
public download link could be verified, so it is manual (``SOURCE.manual``)."""

from __future__ import annotations

from socialbench.moca.dataset.sources.base import RemoteFile, Source
from socialbench.moca.dataset.sources.tabular import table_source

NAME = "multimet"
DEFAULT_COLUMNS = {"id": "id", "text": "text", "media": "image"}
read = table_source(NAME, "multimet.csv", DEFAULT_COLUMNS, "image_text")


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
