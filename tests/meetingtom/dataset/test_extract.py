"""Per-meeting extraction (socialbench.meetingtom.dataset.extract): you events, candidates, rejected ones,
problems, words and the context layers (dialogue acts, adjacency pairs, topics) of one meeting, as
the later stages read them."""

import pytest

from socialbench.core.errors import ConfigError, DataError
from socialbench.meetingtom.dataset.extract import (
    FILES,
    absent_meeting,
    context_records,
    extract_meeting,
    read_meeting,
    write_meeting,
)
from tests.meetingtom.tiny_ami import MEETING


def test_the_you_events_are_the_meetings_gold(ami_dir):
    files = extract_meeting(ami_dir, MEETING, "ami", {})
    assert files["you_events.jsonl"] == [
        {
            "meeting": MEETING,
            "speaker": "A",
            "word_id": f"{MEETING}.A.words3",
            "start": 10.8,
            "end": 11.0,
            "addressee": "B",
        }
    ]


def test_a_rejected_you_keeps_its_reason(ami_dir):
    files = extract_meeting(ami_dir, MEETING, "ami", {})
    rejected = {c["anchor"]: c["reason"] for c in files["rejected.jsonl"] if c["task"] == "you"}
    assert rejected == {f"{MEETING}.B.you.1": "not_singular"}


def test_the_meeting_record_maps_letters_to_cameras_and_counts_the_files(ami_dir):
    meeting = extract_meeting(ami_dir, MEETING, "ami", {})["meeting.json"]
    assert {x: p["camera"] for x, p in meeting["participants"].items()} == {
        "A": "Closeup1",
        "B": "Closeup2",
        "C": "Closeup3",
    }
    assert meeting["counts"]["you_events"] == 1 and meeting["end"] == 120


def test_the_words_are_the_transcript_with_punctuation_attached(ami_dir):
    words = extract_meeting(ami_dir, MEETING, "ami", {})["words.jsonl"]
    assert words[0] == {"speaker": "A", "start": 10.0, "end": 10.5, "text": "Hi,"}


def test_mining_thresholds_come_from_params(ami_dir):
    # a 130 s shortest window cannot fit the 120 s meeting
    files = extract_meeting(
        ami_dir, MEETING, "ami", {"you": {"window": {"min_s": 130, "preferred_s": 130, "max_s": 130}}}
    )
    assert [c["reason"] for c in files["rejected.jsonl"] if c["task"] == "you" and c["anchor"].endswith("A.you.1")] == [
        "meeting_too_short"
    ]


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


def test_the_context_layers_are_files_of_every_meeting():
    assert {"acts.jsonl", "pairs.jsonl", "topics.jsonl"} <= set(FILES)


def test_dialogue_acts_keep_speaker_times_type_and_addressees(tiny_meeting):
    acts = {a["id"]: a for a in context_records(tiny_meeting)["acts.jsonl"]}
    assert acts[f"{MEETING}.A.dialog-act.t.2"] == {
        "id": f"{MEETING}.A.dialog-act.t.2",
        "speaker": "A",
        "start": 60.0,
        "end": 61.5,
        "type": "sug",
        "addressee": ["B", "C"],
    }
    assert (
        acts[f"{MEETING}.C.dialog-act.t.1"]["addressee"] is None
        and acts[f"{MEETING}.C.dialog-act.t.1"]["type"] == "bck"
    )


def test_adjacency_pairs_link_a_source_act_to_its_answer(tiny_meeting):
    pairs = context_records(tiny_meeting)["pairs.jsonl"]
    assert {
        "id": f"{MEETING}.adjacency-pairs.t.1",
        "type": "POS",
        "source": f"{MEETING}.A.dialog-act.t.2",
        "target": f"{MEETING}.B.dialog-act.t.2",
    } in pairs and len(pairs) == 2


def test_topics_keep_their_nesting_times_and_type(tiny_meeting):
    topics = {t["id"]: t for t in context_records(tiny_meeting)["topics.jsonl"]}
    assert topics[f"{MEETING}.topic.t.1"] == {
        "id": f"{MEETING}.topic.t.1",
        "parent": None,
        "start": 10.0,
        "end": 13.9,
        "type": "opening",
    }
    assert topics[f"{MEETING}.topic.t.2"]["parent"] == f"{MEETING}.topic.t.1"


def test_the_meeting_record_counts_the_context_files(ami_dir):
    counts = extract_meeting(ami_dir, MEETING, "ami", {})["meeting.json"]["counts"]
    assert (counts["acts"], counts["pairs"], counts["topics"]) == (5, 2, 2)


def test_an_absent_meeting_has_empty_context_files():
    files = absent_meeting("IS1001a", "ami", "mirror not found")
    assert files["acts.jsonl"] == files["pairs.jsonl"] == files["topics.jsonl"] == []
    assert files["meeting.json"]["counts"]["acts"] == 0


def test_reading_a_meeting_without_its_context_files_fails(tmp_path, ami_dir):
    # a meeting folder extracted before the context layers existed must be extracted again
    write_meeting(tmp_path / MEETING, extract_meeting(ami_dir, MEETING, "ami", {}))
    (tmp_path / MEETING / "pairs.jsonl").unlink()
    with pytest.raises(DataError, match="pairs.jsonl"):
        read_meeting(tmp_path / MEETING)


def test_a_task22_item_on_the_tiny_meeting_reads_the_addressees_reply(ami_dir):
    from socialbench.meetingtom.dataset.instances import build_source

    m = extract_meeting(ami_dir, MEETING, "ami", {})
    _, items, _ = build_source([m], {}, {}, source="ami", modality="utterances", seed=7, dev_meetings=[])
    (item,) = [i for i in items if i["task"] == "task2_2"]
    # A's "can you check this?" to B is answered by B's "Yeah sure you know" (adjacency pair 2, POS)
    assert item["meta"]["reply"] == {"act": f"{MEETING}.B.dialog-act.t.1", "pair_type": "POS"}
