"""MUStARD (Castro et al., 2019): sarcastic and non-sarcastic TV-show utterances with their dialogue, as
video clips. Annotations pinned to commit b34b513; the videos' archive (now on Hugging Face) as a
third-party audit recorded it (not re-hashed here: no network)."""

from __future__ import annotations

import os
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

NAME = "mustard"
COMMIT = "b34b5134beeec42a36cdac79330637de9cc9894e"
MEDIA_REVISION = "c1f7c88cf6caa9beb67a5b8550436e20a911bace"
VIDEOS = "videos"  # where mmsd_raw_data.zip is unpacked, under the source root
#: Where an utterance clip is expected inside the unpacked archive when the folder is not there yet.
UTTERANCE_DIR = "mmsd_raw_data/utterances_final"


def _clip_index(folder: Path) -> dict[str, Path]:
    """Clip id -> path of every .mp4 under ``folder`` (an utterance clip wins; linked folders not walked)."""
    index: dict[str, Path] = {}
    if folder.is_dir():
        found = sorted(Path(top, n) for top, _, files in os.walk(folder, followlinks=False) for n in files)
        for p in found:
            if p.suffix == ".mp4" and (p.stem not in index or "utterances_final" in p.parts):
                index[p.stem] = p.relative_to(folder)
    return index


def read(root: Path, options: SourceOptions) -> list[dict[str, Any]]:
    path = root / "sarcasm_data.json"
    shown = str(path)
    text = read_text(path, options.encoding)
    clips = _clip_index(root / VIDEOS)
    out = []
    for key, value in json_records(text, shown, "object"):
        rec = require_fields(value, ("utterance", "speaker", "context", "context_speakers", "sarcasm"), shown, key)
        utterance = expect_str(rec["utterance"], shown, key, "utterance")
        speaker = expect_str(rec["speaker"], shown, key, "speaker")
        context = expect_str_list(rec["context"], shown, key, "context")
        speakers = expect_str_list(rec["context_speakers"], shown, key, "context_speakers")
        if len(context) != len(speakers):
            why = f"{len(context)} context utterances but {len(speakers)} context speakers"
            raise DataError(shown, why, record=key, field="context_speakers")
        if not isinstance(rec["sarcasm"], bool):
            raise DataError(shown, f"expected true or false, got {rec['sarcasm']!r}", record=key, field="sarcasm")
        clip = resolve_inside(root / VIDEOS, clips.get(key) or f"{UTTERANCE_DIR}/{key}.mp4", shown, key, None, "clip")
        context_clip = clips.get(f"{key}_c")
        if context_clip is not None:
            context_clip = resolve_inside(root / VIDEOS, context_clip, shown, key, None, "context clip")
        out.append(
            candidate(
                NAME,
                key,
                split="all",
                modality="video_text",
                text=utterance,
                speaker=speaker,
                context=[{"speaker": s, "text": t} for s, t in zip(speakers, context)],
                media=[str(clip)],
                source_labels={"sarcasm": rec["sarcasm"]},
                metadata={"show": rec.get("show"), **({"context_clip": str(context_clip)} if context_clip else {})},
                origin_file="sarcasm_data.json",
                origin_record=key,
            )
        )
    return out


SOURCE = Source(
    name=NAME,
    title="MUStARD (Castro et al., 2019)",
    modality="video_text",
    citation="Castro et al. 2019, Towards Multimodal Sarcasm Detection (An _Obviously_ Perfect Paper), ACL",
    homepage="https://github.com/soujanyaporia/MUStARD",
    license="MIT (repository LICENSE)",
    files=(
        RemoteFile(
            "sarcasm_data.json",
            f"https://raw.githubusercontent.com/soujanyaporia/MUStARD/{COMMIT}/data/sarcasm_data.json",
            "ec9533032c5f143f197cb5fa5d4b29ab9bf56a20b0dc05d5b31d052f5957d39c",
            split="all",
            provenance="sha256 of ../shared/data/mustard/sarcasm_data.json (that commit's file)",
        ),
        RemoteFile(
            "mmsd_raw_data.zip",
            f"https://huggingface.co/datasets/MichiganNLP/MUStARD/resolve/{MEDIA_REVISION}/mmsd_raw_data.zip",
            "a2e68c48b7d13c66af98900dc5119b54b3b0bf962c228d99069cb0930c3880d5",
            kind="media",
            extract_to=VIDEOS,
            size=1403183019,
            provenance="revision, size and sha256 as recorded by a third-party audit script",
        ),
    ),
    manual=(
        "The clips are also in the Google Drive file linked from the MUStARD README"
        " (https://drive.google.com/file/d/1i9ixalVcXskA5_BkNnbR60sqJqvGyi6E/view): download mmsd_raw_data.zip"
        " and put it at <root>/mmsd_raw_data.zip, or unzip it into <root>/videos/ (utterance clips are found"
        " by name, <id>.mp4, anywhere below it)."
    ),
    read=read,
)
