"""MMSD2.0 (Qin et al., 2023): tweets with an image, labelled sarcastic or not, with MMSD's spurious cues
removed. Text: JoeYing1019/MMSD2.0's JSON arrays of ``{image_id, text, label}`` (the URL follows
``main``; the pinned sha256 catches a change); images: the original MMSD's archives (manual)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.paths import resolve_inside
from socialbench.moca.dataset.sources.base import RemoteFile, Source, SourceOptions, candidate
from socialbench.moca.dataset.sources.readers import expect_str, json_records, read_text, require_fields

NAME = "mmsd2"
_BASE = "https://raw.githubusercontent.com/JoeYing1019/MMSD2.0/main/data/text_json_final"
SPLITS = {"train": None, "valid": "2029f3a9975959344f294292f2417a3b7e8d705eabd2e9f006f53ba343eb141a", "test": None}
IMAGES = "dataset_image"


def read(root: Path, options: SourceOptions) -> list[dict[str, Any]]:
    out = []
    for split in options.wanted(SPLITS):
        path = root / f"{split}.json"
        shown = str(path)
        for pos, value in json_records(read_text(path, options.encoding), shown, "array"):
            where = f"{pos + 1}"
            rec = require_fields(value, ("image_id", "text", "label"), shown, where)
            image_id = rec["image_id"]
            if isinstance(image_id, bool) or not isinstance(image_id, (int, str)) or not str(image_id).strip():
                raise DataError(shown, f"expected a number or string, got {image_id!r}", record=where, field="image_id")
            image_id = str(image_id)
            text = expect_str(rec["text"], shown, image_id, "text")
            if rec["label"] not in (0, 1) or isinstance(rec["label"], bool):
                raise DataError(shown, f"expected 0 or 1, got {rec['label']!r}", record=image_id, field="label")
            out.append(
                candidate(
                    NAME,
                    image_id,
                    split=split,
                    modality="image_text",
                    text=text,
                    media=[str(resolve_inside(root / IMAGES, f"{image_id}.jpg", shown, where, "image_id", "image"))],
                    source_labels={"sarcasm": bool(rec["label"])},
                    origin_file=f"{split}.json",
                    origin_record=where,
                )
            )
    return out


SOURCE = Source(
    name=NAME,
    title="MMSD2.0 (Qin et al., 2023)",
    modality="image_text",
    citation="Qin et al. 2023, MMSD2.0: Towards a Reliable Multi-modal Sarcasm Detection System, Findings of ACL",
    homepage="https://github.com/JoeYing1019/MMSD2.0",
    license="none stated in the repository",
    files=tuple(
        RemoteFile(
            f"{split}.json",
            f"{_BASE}/{split}.json",
            sha,
            split=split,
            provenance="sha256 of ../shared/data/mmsd2/valid.json (commit 1627811)" if sha else "",
        )
        for split, sha in SPLITS.items()
    )
    + (RemoteFile(IMAGES, None, kind="media", folder=True),),
    manual=(
        "The images are the original MMSD images, in four Google Drive archives linked from the MMSD2.0 README:"
        " https://drive.google.com/file/d/1mK0Nf-jv_h2bgHUCRM4_EsdTiiitZ_Uj/view,"
        " https://drive.google.com/file/d/1AOWzlOz5hmdO39dEmzhQ4z_nabgzi7Tu/view,"
        " https://drive.google.com/file/d/1dJERrVlp7DlNSXk-uvbbG6Rv7uvqTOKd/view,"
        " https://drive.google.com/file/d/1pODuKC4gP6-QDQonG8XTqI8w8ds68mE3/view;"
        " download all four and unzip them into <root>/dataset_image/ (one <image_id>.jpg per tweet)."
    ),
    read=read,
)
