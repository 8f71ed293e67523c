"""Paths a source's files name, or its folder walk finds, resolve inside the source root (issue 20,
point 3: core.paths.resolve_inside for every reader)."""

import json
import os

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.dataset.sources import read_source

RECORD = {"utterance": "Sure.", "speaker": "A", "context": [], "context_speakers": [], "sarcasm": True}


def _mustard(root, clip_target=None):
    (root / "sarcasm_data.json").write_text(json.dumps({"1_1": RECORD}))
    clips = root / "videos" / "mmsd_raw_data" / "utterances_final"
    clips.mkdir(parents=True)
    if clip_target is not None:
        os.symlink(clip_target, clips / "1_1.mp4")
    return clips


def test_mustard_refuses_a_clip_linked_outside_its_root_naming_the_record(tmp_path):
    outside = tmp_path / "elsewhere.mp4"
    outside.write_bytes(b"\x00")
    root = tmp_path / "mustard"
    root.mkdir()
    _mustard(root, outside)
    with pytest.raises(DataError, match=r"record 1_1.*clip .*1_1\.mp4 .*outside"):
        read_source("mustard", root)


def test_mustard_does_not_walk_into_a_linked_folder(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "1_1.mp4").write_bytes(b"\x00")
    root = tmp_path / "mustard"
    root.mkdir()
    _mustard(root)
    os.symlink(outside, root / "videos" / "linked")
    (record,) = read_source("mustard", root)
    assert "elsewhere" not in record["media"][0]


def test_mustard_takes_a_clip_inside_its_root(tmp_path):
    root = tmp_path / "mustard"
    root.mkdir()
    clips = _mustard(root)
    (clips / "1_1.mp4").write_bytes(b"\x00")
    (record,) = read_source("mustard", root)
    assert record["media"] == [str(root / "videos" / "mmsd_raw_data" / "utterances_final" / "1_1.mp4")]
