"""Per-meeting extraction (socialbench.meetingtom.extract): you events, candidates, rejected ones,
problems and words of one meeting, as the later stages read them."""

import pytest

from socialbench.errors import ConfigError, DataError
from socialbench.meetingtom.extract import FILES, absent_meeting, extract_meeting, read_meeting, write_meeting
from tests.meetingtom.tiny_ami import MEETING


def test_the_you_events_are_the_meetings_gold(ami_dir):
    files = extract_meeting(ami_dir, MEETING, "ami", {})
    assert files["you_events.jsonl"] == [{"meeting": MEETING, "speaker": "A", "word_id": f"{MEETING}.A.words3",
                                          "start": 10.8, "end": 11.0, "addressee": "B"}]  # fmt: skip


def test_a_rejected_you_keeps_its_reason(ami_dir):
    files = extract_meeting(ami_dir, MEETING, "ami", {})
    rejected = {c["anchor"]: c["reason"] for c in files["rejected.jsonl"] if c["task"] == "you"}
    assert rejected == {f"{MEETING}.B.you.1": "not_singular"}


def test_the_meeting_record_maps_letters_to_cameras_and_counts_the_files(ami_dir):
    meeting = extract_meeting(ami_dir, MEETING, "ami", {})["meeting.json"]
    assert {x: p["camera"] for x, p in meeting["participants"].items()} == {"A": "Closeup1", "B": "Closeup2", "C": "Closeup3"}
    assert meeting["counts"]["you_events"] == 1 and meeting["end"] == 120


def test_the_words_are_the_transcript_with_punctuation_attached(ami_dir):
    words = extract_meeting(ami_dir, MEETING, "ami", {})["words.jsonl"]
    assert words[0] == {"speaker": "A", "start": 10.0, "end": 10.5, "text": "Hi,"}


def test_mining_thresholds_come_from_params(ami_dir):
    # a 130 s shortest window cannot fit the 120 s meeting
    files = extract_meeting(ami_dir, MEETING, "ami", {"you": {"window": {"min_s": 130, "preferred_s": 130, "max_s": 130}}})
    assert [c["reason"] for c in files["rejected.jsonl"] if c["task"] == "you" and c["anchor"].endswith("A.you.1")] == ["meeting_too_short"]


def test_an_unknown_mining_key_is_a_config_error(ami_dir):
    with pytest.raises(ConfigError, match="unknown key"):
        extract_meeting(ami_dir, MEETING, "ami", {"you": {"windw": {}}})


def test_a_meeting_without_annotations_is_named(ami_dir):
    with pytest.raises(DataError, match="no annotation file for meeting"):
        extract_meeting(ami_dir, "TS9998a", "ami", {})


def test_an_absent_source_gives_empty_files_and_its_note():
    files = absent_meeting("IS1001a", "ami", "mirror not found")
    assert all(files[name] == [] for name in FILES)
    assert files["meeting.json"]["note"] == "mirror not found"


def test_a_written_meeting_reads_back_the_same(tmp_path, ami_dir):
    files = extract_meeting(ami_dir, MEETING, "ami", {})
    write_meeting(tmp_path / MEETING, files)
    assert read_meeting(tmp_path / MEETING) == files


def test_reading_a_meeting_that_was_not_extracted_says_so(tmp_path):
    with pytest.raises(DataError, match="run socialbench meetingtom extract"):
        read_meeting(tmp_path / "nothing")
