"""The mustard reader: its documented file format read into candidates (files made here), and what it refuses."""

import json
import os

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.dataset.sources import read_source


def test_mustard_checks_that_context_and_speakers_pair_up(tmp_path):
    (tmp_path / "sarcasm_data.json").write_text(
        json.dumps(
            {
                "1_1": {
                    "utterance": "Sure.",
                    "speaker": "A",
                    "context": ["x", "y"],
                    "context_speakers": ["B"],
                    "sarcasm": True,
                }
            }
        )
    )
    with pytest.raises(
        DataError, match=r"record 1_1, field 'context_speakers': 2 context utterances but 1 context speakers"
    ):
        read_source("mustard", tmp_path)


def test_mustard_names_a_missing_field(tmp_path):
    (tmp_path / "sarcasm_data.json").write_text(
        json.dumps({"1_1": {"utterance": "Sure.", "speaker": "A", "context": [], "context_speakers": []}})
    )
    with pytest.raises(DataError, match=r"sarcasm_data.json, record 1_1, field 'sarcasm': missing"):
        read_source("mustard", tmp_path)


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
