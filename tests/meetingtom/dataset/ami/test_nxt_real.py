"""The NXT parser on the 45 real AMI meetings in ../shared (skipped when it is absent). Counts are
taken from the XML independently, with regular expressions over the raw text."""

import re
from collections import Counter

import pytest

from socialbench.meetingtom.dataset.ami.nxt import list_meetings, words_file
from socialbench.meetingtom.dataset.ami.records import transcript_words

pytestmark = pytest.mark.shared


def count(path, pattern) -> int:
    return len(re.findall(pattern, path.read_text(encoding="latin-1"))) if path.is_file() else 0


def per_meeting(real_ami, folder, suffix, pattern) -> Counter:
    """Meeting -> number of ``pattern`` matches over its files ``folder/<meeting>.*suffix``."""
    out = Counter()
    for f in (real_ami / folder).glob(f"*{suffix}"):
        out[f.name.split(".", 1)[0]] += count(f, pattern)
    return out


def parsed(real_corpus, attr) -> Counter:
    return Counter({m.id: len(getattr(m, attr)) for m in real_corpus.meetings})


def test_all_45_meetings_parse(real_ami, real_corpus):
    assert len(list_meetings(real_ami)) == 45
    assert len(real_corpus.meetings) == 45


def test_only_known_release_defects_are_reported(real_corpus):
    # The release has 17 elements whose end precedes their start and 3 untimed words (ES2008a);
    # anything else (a dangling href, a malformed file) would be a parser bug.
    kinds = Counter(p.kind for p in real_corpus.problems)
    assert set(kinds) <= {"missing_layer", "reversed_times", "untimed_word"}
    assert (kinds["reversed_times"], kinds["untimed_word"]) == (17, 3)


def test_word_elements_match_the_xml(real_ami, real_corpus):
    expected = per_meeting(real_ami, "words", ".words.xml", r"<(?:w|vocalsound|disfmarker|gap|transformerror)\s")
    got = Counter({m.id: sum(len(t) for t in m.words.values()) for m in real_corpus.meetings})
    assert got == expected


def test_punctuation_and_vocal_sounds_match_the_xml(real_ami, real_corpus):
    expected_punc = sum(per_meeting(real_ami, "words", ".words.xml", r'punc="true"').values())
    expected_vocal = sum(per_meeting(real_ami, "words", ".words.xml", r"<vocalsound\s").values())
    tokens = [t for m in real_corpus.meetings for ts in m.words.values() for t in ts]
    assert sum(t.punc for t in tokens) == expected_punc
    assert sum(t.kind == "vocalsound" for t in tokens) == expected_vocal


def test_segments_match_the_xml(real_ami, real_corpus):
    assert parsed(real_corpus, "segments") == per_meeting(real_ami, "segments", ".segments.xml", r"<segment\s")


def test_dialogue_acts_match_the_xml(real_ami, real_corpus):
    assert parsed(real_corpus, "dialogue_acts") == per_meeting(real_ami, "dialogueActs", ".dialog-act.xml", r"<dact\s")


def test_addressee_attributes_match_the_xml(real_ami, real_corpus):
    expected = per_meeting(real_ami, "dialogueActs", ".dialog-act.xml", r'<dact [^>]*addressee="')
    got = Counter({m.id: sum(a.addressee is not None for a in m.dialogue_acts) for m in real_corpus.meetings})
    assert +got == +expected


def test_adjacency_pairs_match_the_xml(real_ami, real_corpus):
    assert parsed(real_corpus, "adjacency_pairs") == per_meeting(
        real_ami, "dialogueActs", ".adjacency-pairs.xml", r"<adjacency-pair\s"
    )


def test_you_usages_match_the_xml(real_ami, real_corpus):
    assert +parsed(real_corpus, "you_usages") == per_meeting(real_ami, "youUsages", ".you.xml", r"<you-usage\s")


def test_decisions_match_the_xml(real_ami, real_corpus):
    assert +parsed(real_corpus, "decisions") == per_meeting(
        real_ami, "decision/manual", ".decision.xml", r"<decision\s"
    )


def test_topics_and_sub_topics_match_the_xml(real_ami, real_corpus):
    assert +parsed(real_corpus, "topics") == per_meeting(real_ami, "topics", ".topic.xml", r"<topic\s")


def test_participant_roles_match_the_xml(real_ami, real_corpus):
    assert +parsed(real_corpus, "roles") == per_meeting(real_ami, "participantRoles", ".role.xml", r"<role\s")


def test_participants_match_meetings_xml(real_ami, real_corpus):
    text = (real_ami / "corpusResources/meetings.xml").read_text(encoding="latin-1")
    for m in real_corpus.meetings:
        block = re.search(rf'observation="{m.id}".*?</meeting>', text, re.S).group(0)
        letters = re.findall(r'nxt_agent="([A-Z])"', block)
        assert sorted(m.participants) == sorted(letters), m.id
        names = dict(re.findall(r'nxt_agent="([A-Z])"[^>]*global_name="([^"]+)"', block))
        assert {x: p.participant for x, p in m.participants.items()} == names, m.id


def test_dialogue_act_types_resolve_through_the_ontology(real_corpus):
    m = next(m for m in real_corpus.meetings if m.id == "ES2002a")
    act = m.act("ES2002a.A.dialog-act.dharshi.1")  # da-types.xml#id(ami_da_4)
    assert (act.type_id, act.type, act.start, act.end) == ("ami_da_4", "inf", 77.44, 80.87)
    untyped = sum(a.type is None for mm in real_corpus.meetings for a in mm.dialogue_acts)
    assert untyped == 9  # acts of the release without a da-aspect pointer


def test_addressee_letters_are_participant_letters(real_corpus):
    for m in real_corpus.meetings:
        for a in m.dialogue_acts:
            assert a.addressee is None or set(a.addressee) <= set(m.participants), a.id


def test_decision_spans_are_the_times_of_their_words(real_ami, real_corpus):
    # ES2002a.decision.melissa.1 covers B.words624..B.words747 and D.words233..D.words299.
    m = next(m for m in real_corpus.meetings if m.id == "ES2002a")
    d = next(d for d in m.decisions if d.id == "ES2002a.decision.melissa.1")
    times = []
    for x in "BD":
        text = (real_ami / f"words/ES2002a.{x}.words.xml").read_text(encoding="latin-1")
        lo, hi = {"B": (624, 747), "D": (233, 299)}[x]
        for n, s, e in re.findall(rf'nite:id="ES2002a\.{x}\.words(\d+)" starttime="([\d.]+)" endtime="([\d.]+)"', text):
            if lo <= int(n) <= hi:
                times += [float(s), float(e)]
    assert (d.start, d.end) == (min(times), max(times))


def test_you_types_ontology_calls_you_11_singular_deictic(real_ami):
    text = (real_ami / "ontologies/you-types.xml").read_text(encoding="latin-1")
    assert re.search(r'nite:id="you_1" name="DEICTIC".*?nite:id="you_11" name="SINGULAR"', text, re.S)


def test_transcript_words_agree_with_the_media_parser(real_ami, real_corpus):
    # One meeting per site, and ES2008a for its untimed words.
    for m in (m for m in real_corpus.meetings if m.id in ("ES2002a", "ES2008a", "IS1003b", "TS3005a")):
        ours = transcript_words(m)
        for x in m.words:
            theirs = words_file(real_ami / f"words/{m.id}.{x}.words.xml", x)
            assert [w for w in ours if w.speaker == x] == theirs, (m.id, x)
