"""Instagram captions: the paper names no release; the default is the Kaggle dataset "Instagram images
with captions" (manual: a login), its ``captions_csv.csv`` columns as its page describes them (not
verified here: map other names in params)."""

from __future__ import annotations

from socialbench.moca.dataset.sources.base import RemoteFile, Source
from socialbench.moca.dataset.sources.tabular import table_source

NAME = "instagram"
DEFAULT_COLUMNS = {"id": "Sr No", "text": "Caption", "media": "Image File"}
read = table_source(NAME, "captions_csv.csv", DEFAULT_COLUMNS, "image_text")


SOURCE = Source(
    name=NAME,
    title="Instagram captions (Kaggle: Instagram images with captions)",
    modality="image_text",
    citation=(
        "Instagram captions (MoCA section 4.1 names no release; Kaggle prithvijaunjale/instagram-images-with-captions)"
    ),
    homepage="https://www.kaggle.com/datasets/prithvijaunjale/instagram-images-with-captions",
    license="as stated on the Kaggle page (login required)",
    files=(RemoteFile("captions_csv.csv", None, split="all"), RemoteFile("img", None, kind="media", folder=True)),
    manual=(
        "Sign in to Kaggle, download https://www.kaggle.com/datasets/prithvijaunjale/instagram-images-with-captions"
        " (or `kaggle datasets download prithvijaunjale/instagram-images-with-captions` with your own API token),"
        " unzip it, and put captions_csv.csv at <root>/captions_csv.csv and the images so that each `Image File`"
        " value resolves under <root> (e.g. <root>/img/insta1.jpg). Other caption collections work too: same"
        " file name, columns mapped in params (moca.sources.instagram.columns)."
    ),
    read=read,
)
