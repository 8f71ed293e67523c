"""RedCaps (Desai et al., 2021): image-text pairs from Reddit posts (the caption is the title). The
annotations archive is not pinned; ``include`` (file-name globs) limits which subreddit files are read;
images come from the official ``redcaps download-imgs`` tool (manual)."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.paths import resolve_inside
from socialbench.moca.dataset.sources.base import RemoteFile, Source, SourceOptions, candidate
from socialbench.moca.dataset.sources.readers import expect_str, json_records, read_text, require_fields

NAME = "redcaps"
RELEASE = "release"
URL = "https://www.dropbox.com/s/cqtdpsl4hewlli1/redcaps_v1.0_annotations.zip?dl=1"
FIELDS = ("image_id", "url", "caption", "subreddit")


def annotation_files(root: Path, include: tuple[str, ...] | None) -> list[Path]:
    files = sorted((root / RELEASE).rglob("*.json"))
    if include is not None:
        files = [f for f in files if any(fnmatch.fnmatch(f.name, pat) for pat in include)]
    return files


def read(root: Path, options: SourceOptions) -> list[dict[str, Any]]:
    files = annotation_files(root, options.include)
    if not files:
        matching = f" matching {list(options.include)}" if options.include else ""
        raise DataError(str(root / RELEASE), f"no annotation file (annotations/<subreddit>_<year>.json) here{matching}")
    out = []
    for path in files:
        shown = str(path)
        rel = path.relative_to(root).as_posix()
        for key, value in json_records(read_text(path, options.encoding), shown, "object"):
            if key != "annotations":
                continue
            if not isinstance(value, list):
                raise DataError(shown, "expected a list of annotations", field="annotations")
            for pos, ann in enumerate(value):
                rec = require_fields(ann, FIELDS, shown, f"annotation {pos + 1}")
                native = expect_str(rec["image_id"], shown, f"annotation {pos + 1}", "image_id", allow_empty=False)
                subreddit = expect_str(rec["subreddit"], shown, native, "subreddit", allow_empty=False)
                text = rec.get("raw_caption") if isinstance(rec.get("raw_caption"), str) else rec["caption"]
                url = expect_str(rec["url"], shown, native, "url")
                text = expect_str(text, shown, native, "raw_caption")
                image = resolve_inside(root / "images", f"{subreddit}/{native}.jpg", shown, native, "image_id", "image")
                out.append(
                    candidate(
                        NAME,
                        native,
                        split="all",
                        modality="image_text",
                        text=text,
                        speaker=rec.get("author") if isinstance(rec.get("author"), str) else None,
                        media=[str(image)],
                        media_urls=[url] if url else [],
                        source_labels={"subreddit": subreddit, "score": rec.get("score")},
                        metadata={"permalink": rec.get("permalink"), "created_utc": rec.get("created_utc")},
                        origin_file=rel,
                        origin_record=f"annotation {pos + 1}",
                    )
                )
    return out


SOURCE = Source(
    name=NAME,
    title="RedCaps (Desai et al., 2021)",
    modality="image_text",
    citation=(
        "Desai et al. 2021, RedCaps: Web-curated image-text data created by the people, for the people, NeurIPS D&B"
    ),
    homepage="https://redcaps.xyz/",
    license="CC BY 4.0 (annotations) and the Reddit API terms of use",
    files=(
        RemoteFile(
            "redcaps_v1.0_annotations.zip",
            URL,
            None,
            split="all",
            extract_to=RELEASE,
            provenance="the v1.0 download link of redcaps.xyz/download",
        ),
        RemoteFile("images", None, kind="media", folder=True),
    ),
    manual=(
        "Images are fetched from Reddit/Imgur/Flickr by the official tool (https://github.com/redcaps-dataset/redcaps-downloader):"
        " `redcaps download-imgs -a <root>/release/annotations/<file>.json --save-to <root>/images --resize 512 -j 4`"
        " for each annotation file you read (see `include`). Each record's url is also kept as media_urls."
    ),
    read=read,
)
