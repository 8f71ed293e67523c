"""Bad AMI input: each defect is a report entry naming meeting, file and element (or, with
``strict=True``, a DataError naming them), and the rest of the meeting is kept."""

import pytest

from socialbench.core.errors import DataError
from socialbench.meetingtom.dataset.ami.nxt import parse_corpus, parse_meeting
from tests.meetingtom import tiny_ami as T
from tests.meetingtom.tiny_ami import MEETING


def errors(meeting):
    return [p for p in meeting.problems if p.is_error]


def only_error(meeting):
    (p,) = errors(meeting)
    return p


# --- malformed XML


def test_malformed_dialogue_act_file_is_reported_with_its_file(ami_dir):
    T.write(ami_dir, f"dialogueActs/{MEETING}.B.dialog-act.xml", T.root(f"{MEETING}.B.dialog-act", T.DACTS["B"])[:-20])
    (p,) = [p for p in parse_meeting(ami_dir, MEETING).problems if p.kind == "malformed_xml"]
    assert (p.kind, p.meeting, p.file) == ("malformed_xml", MEETING, f"dialogueActs/{MEETING}.B.dialog-act.xml")
    assert "line" in p.message  # the parser's position helps find the fault


def test_malformed_file_loses_only_its_own_elements(ami_dir):
    T.write(ami_dir, f"dialogueActs/{MEETING}.B.dialog-act.xml", "<nite:root")
    m = parse_meeting(ami_dir, MEETING)
    assert {a.speaker for a in m.dialogue_acts} == {"A", "C"}
    assert len(m.decisions) == 1 and len(m.you_usages) == 2 and set(m.words) == {"A", "B", "C"}


def test_adjacency_pairs_into_a_malformed_act_file_are_kept_without_that_end(ami_dir):
    T.write(ami_dir, f"dialogueActs/{MEETING}.B.dialog-act.xml", "<nite:root")
    m = parse_meeting(ami_dir, MEETING)
    assert [p.target for p in m.adjacency_pairs] == [None, None]
    assert {p.kind for p in errors(m)} == {"malformed_xml", "dangling_href"}


def test_malformed_words_file_leaves_other_speakers_intact(ami_dir):
    T.write(ami_dir, f"words/{MEETING}.C.words.xml", T.words_xml("C").replace("</w>", "", 1))
    m = parse_meeting(ami_dir, MEETING)
    assert set(m.words) == {"A", "B"}
    assert {a.speaker for a in m.dialogue_acts} == {"A", "B"}
    # What points into the lost file is reported element by element.
    dangling = [p.element for p in m.problems if p.kind == "dangling_href"]
    assert sorted(dangling) == [f"{MEETING}.C.dialog-act.t.1", f"{MEETING}.sync.C1"]


def test_malformed_xml_in_strict_mode_is_a_data_error_naming_meeting_and_file(ami_dir):
    T.write(ami_dir, f"decision/manual/{MEETING}.decision.xml", "<nite:root><decision>")
    with pytest.raises(DataError) as exc:
        parse_meeting(ami_dir, MEETING, strict=True)
    assert f"decision/manual/{MEETING}.decision.xml" in str(exc.value) and f"meeting {MEETING}" in str(exc.value)


def test_malformed_meetings_xml_is_a_corpus_problem_and_meetings_still_parse(ami_dir):
    T.write(ami_dir, "corpusResources/meetings.xml", "<nite:root")
    corpus = parse_corpus(ami_dir)
    assert [p.kind for p in corpus.resource_problems] == ["malformed_xml"]
    (m,) = corpus.meetings
    assert m.participants == {} and len(m.dialogue_acts) == 5


# --- dangling NITE hrefs


def test_act_pointing_to_a_missing_word_is_reported_and_left_out(ami_dir):
    body = T.DACTS["A"].replace(f"{MEETING}.A.words6)", f"{MEETING}.A.words99)")
    T.write(ami_dir, f"dialogueActs/{MEETING}.A.dialog-act.xml", T.root(f"{MEETING}.A.dialog-act", body))
    m = parse_meeting(ami_dir, MEETING)
    p = only_error(m)
    assert (p.kind, p.file, p.element) == (
        "dangling_href",
        f"dialogueActs/{MEETING}.A.dialog-act.xml",
        f"{MEETING}.A.dialog-act.t.1",
    )
    assert f"{MEETING}.A.words99" in p.message
    assert m.act(f"{MEETING}.A.dialog-act.t.1") is None and m.act(f"{MEETING}.A.dialog-act.t.2") is not None


def test_decision_keeps_its_resolvable_ranges_when_one_dangles(ami_dir):
    body = T.DECISIONS.replace(f"id({MEETING}.B.words5)", f"id({MEETING}.B.words50)")
    T.write(ami_dir, f"decision/manual/{MEETING}.decision.xml", T.root(f"{MEETING}.decision", body))
    m = parse_meeting(ami_dir, MEETING)
    (d,) = m.decisions
    assert (d.start, d.end) == (60.0, 61.5)  # A's range only
    assert only_error(m).element == f"{MEETING}.decision.t.1"


def test_href_into_an_absent_words_file_is_dangling(ami_dir):
    body = T.YOUS["A"].replace(f"{MEETING}.A.words.xml", f"{MEETING}.D.words.xml")
    T.write(ami_dir, f"youUsages/{MEETING}.A.you.xml", T.root(f"{MEETING}.A.you", body))
    p = only_error(parse_meeting(ami_dir, MEETING))
    assert (p.kind, p.element) == ("dangling_href", f"{MEETING}.A.you.1") and "not read" in p.message


def test_pointer_to_an_unknown_ontology_type_keeps_the_act_untyped(ami_dir):
    body = T.DACTS["C"].replace("ami_da_1", "ami_da_999")
    T.write(ami_dir, f"dialogueActs/{MEETING}.C.dialog-act.xml", T.root(f"{MEETING}.C.dialog-act", body))
    m = parse_meeting(ami_dir, MEETING)
    assert m.act(f"{MEETING}.C.dialog-act.t.1").type is None
    assert only_error(m).kind == "dangling_href"


def test_adjacency_pair_to_an_unknown_act_is_reported_and_kept(ami_dir):
    body = T.PAIRS.replace(f"{MEETING}.B.dialog-act.t.2)", f"{MEETING}.B.dialog-act.t.77)")
    T.write(ami_dir, f"dialogueActs/{MEETING}.adjacency-pairs.xml", T.root(f"{MEETING}.adjacency-pairs", body))
    m = parse_meeting(ami_dir, MEETING)
    assert m.adjacency_pairs[0].target is None and m.adjacency_pairs[0].source is not None
    assert only_error(m).element == f"{MEETING}.adjacency-pairs.t.1"


def test_dangling_href_in_strict_mode_names_meeting_file_and_element(ami_dir):
    body = T.DACTS["A"].replace(f"{MEETING}.A.words6)", f"{MEETING}.A.words99)")
    T.write(ami_dir, f"dialogueActs/{MEETING}.A.dialog-act.xml", T.root(f"{MEETING}.A.dialog-act", body))
    with pytest.raises(DataError) as exc:
        parse_meeting(ami_dir, MEETING, strict=True)
    msg = str(exc.value)
    assert (
        f"meeting {MEETING}" in msg
        and f"{MEETING}.A.dialog-act.xml" in msg
        and f"record {MEETING}.A.dialog-act.t.1" in msg
    )


def test_range_whose_end_precedes_its_start_is_reported(ami_dir):
    body = T.DACTS["B"].replace(
        f"id({MEETING}.B.words0)..id({MEETING}.B.words3)", f"id({MEETING}.B.words3)..id({MEETING}.B.words0)"
    )
    T.write(ami_dir, f"dialogueActs/{MEETING}.B.dialog-act.xml", T.root(f"{MEETING}.B.dialog-act", body))
    assert only_error(parse_meeting(ami_dir, MEETING)).kind == "reversed_range"


# --- word times


def test_reversed_word_times_are_reported_and_taken_from_the_neighbours(ami_dir):
    items = list(T.WORDS["B"])
    items[1] = (13.4, 13.0, "sure")
    T.write(ami_dir, f"words/{MEETING}.B.words.xml", T.words_xml("B", items))
    m = parse_meeting(ami_dir, MEETING)
    p = only_error(m)
    assert (p.kind, p.file, p.element) == ("reversed_times", f"words/{MEETING}.B.words.xml", f"{MEETING}.B.words1")
    sure = m.words["B"][1]
    assert (sure.start, sure.end, sure.timed) == (13.0, 13.0, False)  # the previous word's end
    assert len(m.words["B"]) == 6


def test_overlapping_word_times_are_reported_and_kept_as_given(ami_dir):
    items = list(T.WORDS["B"])
    items[2] = (13.2, 13.6, "you")  # starts before "sure" (13.0-13.4) ends
    T.write(ami_dir, f"words/{MEETING}.B.words.xml", T.words_xml("B", items))
    m = parse_meeting(ami_dir, MEETING)
    p = only_error(m)
    assert (p.kind, p.element) == ("overlapping_times", f"{MEETING}.B.words2") and f"{MEETING}.B.words1" in p.message
    assert (m.words["B"][2].start, m.words["B"][2].timed) == (13.2, True)


def test_word_without_times_gets_the_previous_end_and_a_note(ami_dir):
    items = list(T.WORDS["B"])
    items[1] = (None, None, "sure")
    T.write(ami_dir, f"words/{MEETING}.B.words.xml", T.words_xml("B", items))
    m = parse_meeting(ami_dir, MEETING)
    assert (m.words["B"][1].start, m.words["B"][1].timed) == (13.0, False)
    assert [p.kind for p in m.problems if p.element == f"{MEETING}.B.words1"] == ["untimed_word"]
    assert not errors(m)  # the release has untimed words: a note, not an error


def test_non_numeric_time_is_reported(ami_dir):
    bad = T.w("C", 0, "soon", 61.9, "Mm-hmm")
    T.write(ami_dir, f"words/{MEETING}.C.words.xml", T.root(f"{MEETING}.C.words", bad))
    assert only_error(parse_meeting(ami_dir, MEETING)).kind == "bad_time"


def test_reversed_times_in_strict_mode_are_a_data_error(ami_dir):
    items = list(T.WORDS["B"])
    items[1] = (13.4, 13.0, "sure")
    T.write(ami_dir, f"words/{MEETING}.B.words.xml", T.words_xml("B", items))
    with pytest.raises(
        DataError, match=f"record {MEETING}.B.words1: meeting {MEETING}: ends at 13.0 s before it starts"
    ):
        parse_meeting(ami_dir, MEETING, strict=True)


# --- speakers


def test_speaker_letter_missing_from_meetings_xml_is_reported(ami_dir):
    T.write(ami_dir, "corpusResources/meetings.xml", T.meetings_xml("AB"))
    m = parse_meeting(ami_dir, MEETING)
    p = only_error(m)
    assert (p.kind, p.file, p.element) == ("unknown_speaker", "corpusResources/meetings.xml", "meet_9")
    assert "speaker letter C" in p.message and f"words/{MEETING}.C.words.xml" in p.message


def test_unlisted_speaker_keeps_their_words_and_acts(ami_dir):
    T.write(ami_dir, "corpusResources/meetings.xml", T.meetings_xml("AB"))
    m = parse_meeting(ami_dir, MEETING)
    assert "C" in m.words and m.act(f"{MEETING}.C.dialog-act.t.1") is not None
    assert m.speakers == ("A", "B", "C")


def test_meeting_absent_from_meetings_xml_is_a_missing_layer(ami_dir):
    T.write(ami_dir, "corpusResources/meetings.xml", T.root("meet.00", ""))
    m = parse_meeting(ami_dir, MEETING)
    assert [p.kind for p in m.problems if p.file == "corpusResources/meetings.xml"] == ["missing_layer"]
    assert m.end == 62.8  # no duration: the last word's end


def test_addressee_letter_of_no_participant_is_reported(ami_dir):
    body = T.DACTS["A"].replace('addressee="B"', 'addressee="E"')
    T.write(ami_dir, f"dialogueActs/{MEETING}.A.dialog-act.xml", T.root(f"{MEETING}.A.dialog-act", body))
    p = only_error(parse_meeting(ami_dir, MEETING))
    assert (p.kind, p.element) == ("unknown_addressee", f"{MEETING}.A.dialog-act.t.1")


# --- missing layers


def test_missing_decision_layer_is_reported_not_fatal(ami_dir):
    (ami_dir / f"decision/manual/{MEETING}.decision.xml").unlink()
    m = parse_meeting(ami_dir, MEETING)
    assert m.decisions == () and "decisions" not in m.layers
    assert any(p.kind == "missing_layer" and p.file == f"decision/manual/{MEETING}.decision.xml" for p in m.problems)
    assert len(m.dialogue_acts) == 5


def test_missing_ontology_leaves_types_unknown_and_is_reported(ami_dir):
    (ami_dir / "ontologies/da-types.xml").unlink()
    corpus = parse_corpus(ami_dir)
    assert [(p.kind, p.file) for p in corpus.resource_problems] == [("missing_layer", "ontologies/da-types.xml")]
    assert {a.type for a in corpus.meetings[0].dialogue_acts} == {None}
