"""``you`` events: singular deictic "you" inside a same-speaker act with exactly one addressee."""

import re
import xml.etree.ElementTree as ET

import pytest

from socialbench.meetingtom.dataset.ami.nxt import parse_meeting
from socialbench.meetingtom.dataset.ami.you_events import YouEvent, you_candidates, you_events
from tests.meetingtom import tiny_ami as T
from tests.meetingtom.tiny_ami import MEETING


def rewrite_act_a1(ami_dir, addressee_attr: str):
    body = T.DACTS["A"].replace(' addressee="B"', addressee_attr, 1)
    T.write(ami_dir, f"dialogueActs/{MEETING}.A.dialog-act.xml", T.root(f"{MEETING}.A.dialog-act", body))
    return parse_meeting(ami_dir, MEETING)


def test_singular_you_in_an_act_with_one_addressee_is_an_event(tiny_meeting):
    assert you_events(tiny_meeting) == [YouEvent(MEETING, "A", f"{MEETING}.A.words3", 10.8, 11.0, "B")]


def test_event_record_has_exactly_the_six_fields(tiny_meeting):
    (e,) = you_events(tiny_meeting)
    assert set(e.as_dict()) == {"meeting", "speaker", "word_id", "start", "end", "addressee"}


def test_discourse_you_is_not_an_event_and_says_why(tiny_meeting):
    c = next(c for c in you_candidates(tiny_meeting) if c.usage.speaker == "B")
    assert (c.reason, c.event()) == ("not_singular", None)
    assert "DISCOURSE" in c.detail


def test_act_with_several_addressees_gives_no_event(ami_dir):
    m = rewrite_act_a1(ami_dir, ' addressee="B,C"')
    assert you_events(m) == []
    assert you_candidates(m)[0].reason == "several_addressees"


def test_act_without_addressee_gives_no_event(ami_dir):
    m = rewrite_act_a1(ami_dir, "")
    assert you_events(m) == []
    assert you_candidates(m)[0].reason == "no_addressee"


def test_you_outside_every_act_of_its_speaker_gives_no_event(ami_dir):
    # A's first act now ends before the "you" (word 3).
    body = T.DACTS["A"].replace(
        f"id({MEETING}.A.words0)..id({MEETING}.A.words6)", f"id({MEETING}.A.words0)..id({MEETING}.A.words2)"
    )
    T.write(ami_dir, f"dialogueActs/{MEETING}.A.dialog-act.xml", T.root(f"{MEETING}.A.dialog-act", body))
    assert you_candidates(parse_meeting(ami_dir, MEETING))[0].reason == "outside_act"


def test_another_speakers_act_over_the_same_time_does_not_count(ami_dir):
    # B's act is addressed to A and overlaps A's "you" in time, but it is not A's act.
    rewrite_act_a1(ami_dir, "")
    body = T.DACTS["B"].replace('dialog-act.t.1">', 'dialog-act.t.1" addressee="A">', 1)
    T.write(ami_dir, f"dialogueActs/{MEETING}.B.dialog-act.xml", T.root(f"{MEETING}.B.dialog-act", body))
    assert you_events(parse_meeting(ami_dir, MEETING)) == []


def test_events_are_sorted_by_meeting_then_start(tiny_meeting):
    import dataclasses

    later = dataclasses.replace(tiny_meeting, id="AA0000a")
    events = you_events([tiny_meeting, later])
    assert [e.meeting for e in events] == ["AA0000a", MEETING]


# --- real AMI annotations (../shared)


@pytest.mark.shared
def test_real_events_are_singular_yous_with_another_participant_as_addressee(real_corpus):
    events = you_events(real_corpus.meetings)
    assert len(events) > 100
    meetings = {m.id: m for m in real_corpus.meetings}
    for e in events:
        m = meetings[e.meeting]
        assert m.token(e.word_id).text.lower().startswith("you"), e
        assert e.addressee in m.participants and e.addressee != e.speaker
    assert events == sorted(events, key=lambda e: (e.meeting, e.start, e.word_id))


@pytest.mark.shared
def test_real_events_of_one_meeting_match_an_independent_reading(real_ami, real_corpus):
    # IS1001a recomputed with ElementTree alone: you_11 words inside a single-addressee act of
    # the same speaker (acts and usages are word ranges of one words file).
    def ids(href):
        return [int(n) for n in re.findall(r"words(\d+)\)", href)]

    expected = set()
    for x in "ABCD":
        acts = []
        for d in ET.parse(real_ami / f"dialogueActs/IS1001a.{x}.dialog-act.xml").getroot():
            addr = d.get("addressee")
            if addr and "," not in addr:
                for ch in d:
                    if ch.tag.endswith("child"):
                        n = ids(ch.get("href"))
                        acts.append((n[0], n[-1]))
        path = real_ami / f"youUsages/IS1001a.{x}.you.xml"
        for u in ET.parse(path).getroot() if path.is_file() else []:
            kinds = [p.get("href") for p in u if p.tag.endswith("pointer")]
            (w,) = ids(next(c.get("href") for c in u if c.tag.endswith("child")))
            if kinds == ["you-types.xml#id(you_11)"] and any(a <= w <= b for a, b in acts):
                expected.add(f"IS1001a.{x}.words{w}")
    m = next(m for m in real_corpus.meetings if m.id == "IS1001a")
    assert {e.word_id for e in you_events(m)} == expected


def test_the_real_task2_1_run_covers_every_shared_meeting_with_you_usages_and_words(real_ami):
    """params' ami.meetings is every meeting of the shared corpus that has the layers Task 2.1 needs
    ("you" usages, the words, the dialogue acts with their addressees), so the real run's intervals are as narrow as
    the corpus allows (issue 19, point 7)."""
    import yaml

    def meetings(layer):
        return {f.name.split(".", 1)[0] for f in (real_ami / layer).glob("*.xml")}

    needed = meetings("youUsages") & meetings("words") & meetings("dialogueActs")
    listed = yaml.safe_load(open("params.yaml"))["meetingtom"]["ami"]["meetings"]
    assert set(listed) == needed and len(listed) == len(set(listed))


def _cand(meeting, type_id, addressee, in_act=True):
    from types import SimpleNamespace

    from socialbench.meetingtom.dataset.ami.you_events import YouCandidate

    act = SimpleNamespace(addressee=addressee) if in_act else None
    return YouCandidate(meeting, SimpleNamespace(type_id=type_id), act, None, None)


def test_layer_agreement_crosses_the_you_number_with_the_acts_addressees():
    from socialbench.meetingtom.dataset.ami.you_events import layer_agreement

    cands = [
        _cand("m", "you_11", ("B",)),  # singular, one addressee: agree
        _cand("m", "you_11", None),  # singular, group: disagree
        _cand("m", "you_121", ("A", "C")),  # plural, several: agree
        _cand("m", "you_12", ("D",)),  # plural, one: disagree
        _cand("m", "you_2", ("B",)),  # generic: not counted
        _cand("m", "you_11", ("B",), in_act=False),  # outside any act: not counted
        _cand("unannotated", "you_11", None),  # a meeting whose acts name no addressee: not counted
    ]
    got = layer_agreement(cands)
    assert got["n"] == 4 and got["agreement"] == 50.0 and got["kappa"] == 0.0 and got["meetings"] == ["m"]
    assert got["table"] == {"singular": {"one": 1, "group": 1}, "plural": {"one": 1, "group": 1}}


def test_the_real_task2_1_golds_layers_agree_as_reported_in_the_docs(real_corpus):
    """docs/meetingtom.md reports these figures for the shared meetings (issue 19, point 10)."""
    import yaml

    from socialbench.meetingtom.dataset.ami.you_events import layer_agreement

    listed = set(yaml.safe_load(open("params.yaml"))["meetingtom"]["ami"]["meetings"])
    cands = [c for m in real_corpus.meetings if m.id in listed for c in you_candidates(m)]
    got = layer_agreement(cands)
    assert (got["n"], got["agreement"], got["kappa"]) == (328, 75.0, 0.4812)


def test_the_agreement_from_the_mined_records_is_the_agreement_from_the_corpus(real_corpus):
    """The instances stage reports it from the mined candidates (source.json): the same figures."""
    from socialbench.meetingtom.dataset.ami.mining import mine_you
    from socialbench.meetingtom.dataset.ami.you_events import layer_agreement, layer_agreement_records

    meetings = [m for m in real_corpus.meetings if m.id in ("IS1001b", "IS1003b", "ES2002c")]
    records = [c.as_dict() for m in meetings for r in [mine_you(m)] for c in (*r.accepted, *r.rejected)]
    cands = [c for m in meetings for c in you_candidates(m)]
    assert layer_agreement_records(records) == layer_agreement(cands)
    assert layer_agreement_records(records)["n"] > 0
