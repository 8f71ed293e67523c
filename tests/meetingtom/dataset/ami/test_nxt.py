"""The NXT parser on the tiny AMI folder (tests/meetingtom/tiny_ami.py): one layer per test."""

import pytest

from socialbench.core.errors import DataError
from socialbench.media.transcript import Word
from socialbench.meetingtom.dataset.ami.nxt import (
    list_meetings,
    parse_corpus,
    parse_meeting,
    words_file,
)
from socialbench.meetingtom.dataset.ami.records import transcript_words, words_text
from tests.meetingtom.tiny_ami import MEETING


def test_meetings_are_found_in_the_layer_folders(ami_dir):
    assert list_meetings(ami_dir) == [MEETING]


def test_words_keep_every_element_in_file_order_with_kinds(tiny_meeting):
    a = tiny_meeting.words["A"]
    assert [t.index for t in a] == list(range(14))
    assert [t.kind for t in a[6:9]] == ["w", "vocalsound", "disfmarker"]
    assert a[7].text == "laugh"  # a vocal sound's text is its type
    assert a[1].punc and not a[1].is_word and a[0].is_word
    assert (a[3].id, a[3].start, a[3].end, a[3].speaker) == (f"{MEETING}.A.words3", 10.8, 11.0, "A")


def test_words_text_attaches_punctuation_and_skips_sounds(tiny_meeting):
    assert words_text(tiny_meeting.words["A"][:9]) == "Hi, can you check this?"


def test_a_words_file_read_alone_gives_the_words_of_the_meeting(ami_dir, tiny_meeting):
    # The transcript windows read words through either path: both must agree.
    ours = [w for w in transcript_words(tiny_meeting) if w.speaker == "A"]
    assert ours == words_file(ami_dir / f"words/{MEETING}.A.words.xml", "A")


def test_participants_come_from_meetings_xml(tiny_meeting):
    b = tiny_meeting.participants["B"]
    assert (b.participant, b.role, b.speaker_id, b.camera) == ("P001", "ME", f"{MEETING}_1", "Closeup2")
    assert tiny_meeting.speakers == ("A", "B", "C")


def test_meeting_end_is_the_duration_when_speech_ends_earlier(tiny_meeting):
    assert tiny_meeting.end == 120.0


def test_dialogue_act_has_word_span_times_type_and_addressee(tiny_meeting):
    act = tiny_meeting.act(f"{MEETING}.A.dialog-act.t.1")
    assert (act.speaker, act.start, act.end, act.type, act.type_id) == ("A", 10.0, 11.8, "inf", "ami_da_4")
    assert act.addressee == ("B",)
    assert (act.spans[0].first, act.spans[0].last) == (0, 6)
    assert tiny_meeting.text(act.spans) == "Hi, can you check this?"


def test_addressee_naming_several_participants_keeps_all_letters(tiny_meeting):
    assert tiny_meeting.act(f"{MEETING}.A.dialog-act.t.2").addressee == ("B", "C")


def test_act_without_addressee_attribute_has_none(tiny_meeting):
    assert tiny_meeting.act(f"{MEETING}.B.dialog-act.t.1").addressee is None


def test_dialogue_acts_are_sorted_by_start(tiny_meeting):
    starts = [a.start for a in tiny_meeting.dialogue_acts]
    assert starts == sorted(starts) and len(starts) == 5


def test_adjacency_pair_points_to_acts_with_its_type(tiny_meeting):
    p = tiny_meeting.adjacency_pairs[0]
    assert (p.type, p.source, p.target) == ("POS", f"{MEETING}.A.dialog-act.t.2", f"{MEETING}.B.dialog-act.t.2")


def test_you_usage_names_its_word_and_ontology_type(tiny_meeting):
    u = next(u for u in tiny_meeting.you_usages if u.speaker == "A")
    assert (u.word_id, u.index, u.start, u.end, u.type_id, u.type, u.unsure) == (
        f"{MEETING}.A.words3",
        3,
        10.8,
        11.0,
        "you_11",
        "SINGULAR",
        False,
    )


def test_decision_word_ranges_become_a_time_span(tiny_meeting):
    (d,) = tiny_meeting.decisions
    assert (d.start, d.end, d.external) == (60.0, 62.8, True)
    assert [(s.speaker, s.first, s.last) for s in d.spans] == [("A", 9, 13), ("B", 4, 5)]


def test_nested_topics_are_flattened_with_their_parent(tiny_meeting):
    outer, inner = tiny_meeting.topics
    assert (outer.type, outer.description, outer.parent) == ("opening", "greetings", None)
    assert inner.parent == outer.id
    assert (outer.start, outer.end) == (10.0, 13.9)  # its own words and its sub-topic's


def test_segments_keep_transcriber_times_and_words(tiny_meeting):
    seg = tiny_meeting.segments[0]
    assert (seg.speaker, seg.start, seg.end, seg.spans[0].last) == ("A", 9.9, 13.1, 8)


def test_participant_roles_are_time_spans(tiny_meeting):
    assert [(r.speaker, r.start, r.end, r.type) for r in tiny_meeting.roles] == [
        ("A", 0.0, 60.0, "Neutral"),
        ("A", 60.0, 120.0, "Protagonist"),
    ]


def test_absent_optional_files_are_reported_as_missing_layers(tiny_meeting):
    missing = {p.file for p in tiny_meeting.problems if p.kind == "missing_layer"}
    assert f"youUsages/{MEETING}.C.you.xml" in missing
    assert all(p.kind == "missing_layer" for p in tiny_meeting.problems)


def test_corpus_parses_every_meeting_once(ami_dir):
    corpus = parse_corpus(ami_dir)
    assert [m.id for m in corpus.meetings] == [MEETING]
    assert not corpus.resource_problems


def test_folder_without_meetings_is_a_data_error(tmp_path):
    from socialbench.core.errors import DataError

    with pytest.raises(DataError, match="no AMI meeting found"):
        parse_corpus(tmp_path)


def test_missing_folder_is_a_data_error(tmp_path):
    from socialbench.core.errors import DataError

    with pytest.raises(DataError, match="not a folder"):
        parse_meeting(tmp_path / "nope", MEETING)


AMI_XML = """<?xml version="1.0" encoding="ISO-8859-1" standalone="yes"?>
<nite:root nite:id="ES2002a.A.words" xmlns:nite="http://nite.sourceforge.net/">
   <w nite:id="ES2002a.A.words0" starttime="53.56" endtime="53.96">Okay</w>
   <w nite:id="ES2002a.A.words1" starttime="53.96" endtime="53.96" punc="true">.</w>
   <vocalsound nite:id="ES2002a.A.words2" starttime="55.0" endtime="55.4" type="laugh"/>
   <w nite:id="ES2002a.A.words3" starttime="56.11" endtime="56.4">Right</w>
   <w nite:id="ES2002a.A.words4">um</w>
</nite:root>
"""


def test_a_words_file_attaches_punctuation_and_skip_non_words(tmp_path):
    path = tmp_path / "ES2002a.A.words.xml"
    path.write_text(AMI_XML, encoding="iso-8859-1")
    assert words_file(path, "A") == [
        Word("A", 53.56, 53.96, "Okay."),
        Word("A", 56.11, 56.4, "Right"),
        Word("A", 56.4, 56.4, "um"),  # no times: placed at the end of the word before
    ]


def test_an_unreadable_words_file_names_the_file(tmp_path):
    path = tmp_path / "broken.words.xml"
    path.write_text("<nite:root>", encoding="utf-8")
    with pytest.raises(DataError, match="broken.words.xml"):
        words_file(path, "A")
