"""Candidate mining on the 45 real AMI meetings in ../shared (skipped when it is absent)."""

from collections import defaultdict

import pytest

from socialbench.meetingtom.dataset.ami.mining import mine_corpus
from socialbench.meetingtom.dataset.ami.you_events import you_events

pytestmark = pytest.mark.shared

LENGTHS = {"state": (5.0, 5.0), "you": (50.0, 70.0), "consensus": (50.0, 70.0)}


_MINED = {}


@pytest.fixture
def mined(real_corpus):
    """Mined once per parsed corpus (about a second) and shared by this module's tests."""
    if id(real_corpus) not in _MINED:
        _MINED[id(real_corpus)] = mine_corpus(real_corpus.meetings)
    return _MINED[id(real_corpus)]


def test_every_task_keeps_candidates(mined):
    assert {c.task for c in mined.accepted} == {"state", "you", "consensus"}


def test_kept_windows_do_not_overlap_within_a_meeting_and_task(mined):
    groups = defaultdict(list)
    for c in mined.accepted:
        groups[c.meeting, c.task].append((c.start, c.end))
    for spans in groups.values():
        spans.sort()
        assert all(a_end <= b_start + 1e-9 for (_, a_end), (b_start, _) in zip(spans, spans[1:]))


def test_kept_windows_contain_their_anchor_and_lie_inside_the_meeting(real_corpus, mined):
    ends = {m.id: m.end for m in real_corpus.meetings}
    for c in mined.accepted:
        assert 0.0 <= c.start <= c.anchor_start <= c.anchor_end <= c.end <= ends[c.meeting], c.id


def test_kept_windows_have_their_tasks_length(mined):
    for c in mined.accepted:
        lo, hi = LENGTHS[c.task]
        assert lo - 1e-6 <= c.end - c.start <= hi + 1e-6, c.id


def test_most_you_and_consensus_windows_take_the_preferred_fifty_seconds(mined):
    for task in ("you", "consensus"):
        lengths = [round(c.end - c.start, 3) for c in mined.accepted if c.task == task]
        assert sum(x == 50.0 for x in lengths) > len(lengths) / 2, task


def test_every_you_usage_and_decision_is_kept_or_reported(real_corpus, mined):
    for task, attr in (("you", "you_usages"), ("consensus", "decisions")):
        mined_ids = sorted(c.anchor for c in (*mined.accepted, *mined.rejected) if c.task == task)
        assert mined_ids == sorted(x.id for m in real_corpus.meetings for x in getattr(m, attr)), task


def test_kept_you_windows_are_you_events(real_corpus, mined):
    words = {(e.meeting, e.word_id): e.addressee for e in you_events(real_corpus.meetings)}
    for c in mined.accepted:
        if c.task == "you":
            assert words[c.meeting, c.info["word_id"]] == c.info["addressee"]


def test_every_rejected_candidate_says_why(mined):
    assert mined.rejected and all(c.reason and c.detail for c in mined.rejected)


def test_mining_twice_gives_the_same_records(real_corpus, mined):
    some = [m for m in real_corpus.meetings if m.id in ("ES2002a", "IS1003b", "TS3005a")]
    again = mine_corpus(some)
    assert [c.as_dict() for c in again.accepted] == [
        c.as_dict() for c in mined.accepted if c.meeting in ("ES2002a", "IS1003b", "TS3005a")
    ]
    assert [c.as_dict() for c in again.rejected] == [
        c.as_dict() for c in mined.rejected if c.meeting in ("ES2002a", "IS1003b", "TS3005a")
    ]
