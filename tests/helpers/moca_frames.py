"""A working folder for ``socialbench moca frames`` and the media commands: a video, an empty one, and
MoCA instances naming them, with params allowing media in media/ (tests/moca/test_cli.py,
tests/media/test_cli.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import make_instance

#: ``moca frames`` over the working folder's test and dev splits.
ARGS = [
    "frames",
    "--input",
    "data/interim/moca/test.jsonl",
    "--output",
    "data/processed/moca/test.jsonl",
    "--input",
    "data/interim/moca/dev.jsonl",
    "--output",
    "data/processed/moca/dev.jsonl",
]


def make_workdir(root: Path, clip: Path) -> Path:
    """media/good.mp4 (a copy of ``clip``), media/empty.mp4 and data/interim/moca/{test,dev}.jsonl
    under ``root``; ``root``."""
    (root / "media").mkdir()
    shutil.copyfile(clip, root / "media" / "good.mp4")
    (root / "media" / "empty.mp4").write_bytes(b"")
    # the fixture's media live in media/, not data/: allowed in params (media.allowed_roots)
    (root / "params.yaml").write_text(
        "moca:\n  frames: 4\nmedia:\n  frame_max_side: 64\n  allowed_roots: [media]\n", "utf-8"
    )
    interim = root / "data" / "interim" / "moca"
    interim.mkdir(parents=True)
    test = [
        make_instance("i1", media=["media/pic.png"]),
        make_instance("v1", modality="video_text", media=["media/good.mp4"], transcript="A: hi"),
        make_instance("v2", modality="video_text", media=["media/empty.mp4"], transcript="A: hi"),
    ]
    (interim / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in test), "utf-8")
    (interim / "dev.jsonl").write_text(json.dumps(make_instance("d1", media=["media/pic.png"])) + "\n", "utf-8")
    return root


def read(path) -> list[dict]:
    """The records of a JSON-lines file."""
    return [json.loads(line) for line in open(path, encoding="utf-8")]
