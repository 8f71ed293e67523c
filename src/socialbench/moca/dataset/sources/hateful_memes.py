"""Hateful Memes (Kiela et al., 2020): memes whose text and image together are hateful or not (manual:
a licence acceptance). JSON-lines split files of ``{id, img, text, label}`` and ``img/<id>.png``; the
first release had only ``train``, ``dev`` and ``test`` (choose ``splits`` accordingly)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.paths import resolve_inside
from socialbench.moca.dataset.sources.base import RemoteFile, Source, SourceOptions, candidate
from socialbench.moca.dataset.sources.readers import expect_str, jsonl_records, read_text, require_fields

NAME = "hateful_memes"
SPLITS = ("train", "dev_seen", "dev_unseen", "test_seen", "test_unseen", "dev", "test")
DEFAULT_SPLITS = ("train", "dev_seen", "dev_unseen", "test_seen", "test_unseen")


def read(root: Path, options: SourceOptions) -> list[dict[str, Any]]:
    out = []
    for split in options.splits if options.splits is not None else DEFAULT_SPLITS:
        name = f"{split}.jsonl"
        path = root / name
        shown = str(path)
        for line, value in jsonl_records(read_text(path, options.encoding), shown):
            rec = require_fields(value, ("id", "img", "text"), shown, f"line {line}")
            native = str(rec["id"]).strip()
            if not native or isinstance(rec["id"], bool):
                raise DataError(shown, f"expected an id, got {rec['id']!r}", record=f"line {line}", field="id")
            img = expect_str(rec["img"], shown, native, "img", allow_empty=False)
            media = resolve_inside(root, img, shown, record=native, field="img", what="image path")
            labels = {"hateful": bool(rec["label"])} if rec.get("label") in (0, 1) else {}
            out.append(
                candidate(
                    NAME,
                    native,
                    split=split,
                    modality="image_text",
                    text=expect_str(rec["text"], shown, native, "text"),
                    media=[str(media)],
                    source_labels=labels,
                    origin_file=name,
                    origin_record=f"line {line}",
                )
            )
    return out


SOURCE = Source(
    name=NAME,
    title="Hateful Memes (Kiela et al., 2020)",
    modality="image_text",
    citation="Kiela et al. 2020, The Hateful Memes Challenge: Detecting Hate Speech in Multimodal Memes, NeurIPS",
    homepage="https://ai.meta.com/tools/hatefulmemes/",
    license="Hateful Memes dataset licence (accepted on download)",
    files=tuple(RemoteFile(f"{s}.jsonl", None, split=s) for s in SPLITS)
    + (RemoteFile("img", None, kind="media", folder=True),),
    manual=(
        "Accept the dataset licence and download it from https://ai.meta.com/tools/hatefulmemes/ (formerly"
        " hatefulmemeschallenge.com; also on DrivenData, https://www.drivendata.org/competitions/64/hateful-memes/data/,"
        " after signing in). The archive may be password-protected (the password is shown when you accept), which"
        " the safe extractor refuses: unzip it yourself and put img/ and the *.jsonl files directly under <root>/."
    ),
    read=read,
)
