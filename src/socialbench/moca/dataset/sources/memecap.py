"""MemeCap (Hwang and Shwartz, 2023): Reddit memes with their title, image captions, meme captions and
metaphors (``data/memes-{trainval,test}.json`` of eujhwang/meme-cap, commit 30fd658). The text is the
post title; the literal image captions are its ``image_description`` (for unimodal filtering)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.paths import resolve_inside
from socialbench.moca.dataset.sources.base import RemoteFile, Source, SourceOptions, candidate
from socialbench.moca.dataset.sources.readers import (
    expect_str,
    expect_str_list,
    json_records,
    read_text,
    require_fields,
)

NAME = "memecap"
COMMIT = "30fd658558d56cb6d24bbfb6d64d5f9f29afdaee"
_BASE = f"https://raw.githubusercontent.com/eujhwang/meme-cap/{COMMIT}/data"
SPLITS = {"trainval": None, "test": "fa0f38bf35bd9216e8b12ede7dac315d85c33e99820ce65387996d12835581c0"}
IMAGES = "images"
FIELDS = ("post_id", "title", "img_captions", "meme_captions", "metaphors", "url", "img_fname")


def read(root: Path, options: SourceOptions) -> list[dict[str, Any]]:
    out = []
    for split in options.wanted(SPLITS):
        name = f"memes-{split}.json"
        path = root / name
        shown = str(path)
        for pos, value in json_records(read_text(path, options.encoding), shown, "array"):
            rec = require_fields(value, FIELDS, shown, str(pos + 1))
            post = expect_str(rec["post_id"], shown, str(pos + 1), "post_id", allow_empty=False)
            title = expect_str(rec["title"], shown, post, "title")
            captions = [c for c in expect_str_list(rec["img_captions"], shown, post, "img_captions") if c.strip()]
            fname = expect_str(rec["img_fname"], shown, post, "img_fname", allow_empty=False)
            if "/" in fname or "\\" in fname or fname in (".", ".."):
                raise DataError(shown, f"expected a file name, got {fname!r}", record=post, field="img_fname")
            url = expect_str(rec["url"], shown, post, "url")
            out.append(
                candidate(
                    NAME,
                    post,
                    split=split,
                    modality="image_text",
                    text=title,
                    media=[str(resolve_inside(root / IMAGES, fname, shown, post, "img_fname", "image file"))],
                    media_urls=[url] if url.strip() else [],
                    image_description=captions,
                    source_labels={
                        "meme_captions": expect_str_list(rec["meme_captions"], shown, post, "meme_captions"),
                        "metaphors": rec["metaphors"],
                    },
                    metadata={"category": rec.get("category")},
                    origin_file=name,
                    origin_record=str(pos + 1),
                )
            )
    return out


SOURCE = Source(
    name=NAME,
    title="MemeCap (Hwang and Shwartz, 2023)",
    modality="image_text",
    citation="Hwang and Shwartz 2023, MemeCap: A Dataset for Captioning and Interpreting Memes, EMNLP",
    homepage="https://github.com/eujhwang/meme-cap",
    license="none stated in the repository",
    files=tuple(
        RemoteFile(
            f"memes-{split}.json",
            f"{_BASE}/memes-{split}.json",
            sha,
            split=split,
            provenance="sha256 of ../shared/data/memecap/memes-test.json" if sha else "",
        )
        for split, sha in SPLITS.items()
    )
    + (RemoteFile(IMAGES, None, kind="media", folder=True),),
    manual=(
        "The images are in a Google Drive archive linked from the MemeCap README"
        " (https://drive.google.com/file/d/1o1IB6am0HdYS58CEOmmxra3WjJkrn-M1/view): download it and unzip it so"
        " that each image is <root>/images/<img_fname>. Each record's `url` (i.redd.it) is kept as media_urls."
    ),
    read=read,
)
