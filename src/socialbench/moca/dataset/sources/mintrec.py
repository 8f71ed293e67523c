"""MIntRec (Zhang et al., 2022): Superstore utterances with one of 20 intents, as video segments. The
release is manual (Google Drive, BaiduYun); the text splits are also in JoeYing1019/SDIF-DA (commit
ca974a6, a third-party copy). A clip is ``raw_data/<season>/<episode>/<clip>.mp4``."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.paths import resolve_inside
from socialbench.moca.dataset.sources.base import RemoteFile, Source, SourceOptions, candidate
from socialbench.moca.dataset.sources.readers import read_text, table_rows

NAME = "mintrec"
COMMIT = "ca974a6f2275ae796b7b701aa3cb140a48d84efe"
COLUMNS = ("season", "episode", "clip", "text", "label")
_BASE = f"https://raw.githubusercontent.com/JoeYing1019/SDIF-DA/{COMMIT}/data/MIntRec"
SPLITS = {
    "train": "348289d7d140b2c0716b35a03e7045b684c4b90f5c30d1281f9a6b7cb3b9903b",
    "dev": "a697b382fdf05450d9d6c23995b92087863938d6b73b6e6d2d14babccc7c48e5",
    "test": None,
}


def clip_path(root: Path, season: str, episode: str, clip: str, source: str = "", record: str | None = None) -> Path:
    """The clip's file, nested (``S05/E16/329.mp4``) or flat (``S05_E16_329.mp4``), inside ``raw_data/``."""
    clips, shown = root / "raw_data", source or str(root)
    nested = resolve_inside(clips, f"{season}/{episode}/{clip}.mp4", shown, record, "season, episode, clip", "clip")
    flat = resolve_inside(clips, f"{season}_{episode}_{clip}.mp4", shown, record, "season, episode, clip", "clip")
    return flat if not nested.exists() and flat.exists() else nested


def read(root: Path, options: SourceOptions) -> list[dict[str, Any]]:
    out = []
    for split in options.wanted(SPLITS):
        path = root / f"{split}.tsv"
        shown = str(path)
        _, rows = table_rows(read_text(path, options.encoding), shown, COLUMNS, "\t", csv.QUOTE_NONE)
        for line, row in rows:
            season, episode, clip = (row[c].strip() for c in ("season", "episode", "clip"))
            if not (season and episode and clip):
                why = "season, episode and clip must all be given"
                raise DataError(shown, why, record=f"line {line}", field="clip")
            native = f"{season}_{episode}_{clip}"
            out.append(
                candidate(
                    NAME,
                    native,
                    split=split,
                    modality="video_text",
                    text=row["text"],
                    media=[str(clip_path(root, season, episode, clip, shown, f"line {line}"))],
                    source_labels={"intent": row["label"].strip()},
                    metadata={"season": season, "episode": episode, "clip": clip},
                    origin_file=f"{split}.tsv",
                    origin_record=f"line {line}",
                )
            )
    return out


SOURCE = Source(
    name=NAME,
    title="MIntRec (Zhang et al., 2022)",
    modality="video_text",
    citation="Zhang et al. 2022, MIntRec: A New Dataset for Multimodal Intent Recognition, ACM MM",
    homepage="https://github.com/thuiar/MIntRec",
    license="MIT (official repository)",
    files=tuple(
        RemoteFile(
            f"{split}.tsv",
            f"{_BASE}/{split}.tsv",
            sha,
            split=split,
            provenance="third-party copy of the official splits (SDIF-DA); sha256 of ../shared/data/mintrec",
        )
        for split, sha in SPLITS.items()
    )
    + (RemoteFile("raw_data", None, kind="media", folder=True),),
    manual=(
        "The official release is on Google Drive (https://drive.google.com/drive/folders/18iLqmUYDDOwIiiRbgwLpzw76BD62PK0p)"
        " or BaiduYun (https://pan.baidu.com/s/1lAHdQ_RRaMw-DugtqRnEDg, code dbhc): download it and put its"
        " raw_data/ folder (S<season>/E<episode>/<clip>.mp4) at <root>/raw_data/; for mode manual also put"
        " train.tsv, dev.tsv and test.tsv at <root>/."
    ),
    read=read,
)
