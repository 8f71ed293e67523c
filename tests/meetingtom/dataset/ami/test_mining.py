"""Candidate mining: window placement, non-overlap selection, speech measurement, and the three
task miners on the tiny AMI folder (tests/meetingtom/tiny_ami.py)."""

import itertools

import pytest

from socialbench.core.errors import ConfigError
from socialbench.meetingtom.dataset.ami.mining import (
    Candidate,
    ConsensusParams,
    SpeechTimeline,
    StateParams,
    WindowError,
    WindowRule,
    YouParams,
    mine_consensus,
    mine_meeting,
    mine_state,
    mine_you,
    place_window,
    select_non_overlapping,
)
from socialbench.meetingtom.dataset.ami.nxt import parse_meeting
from tests.meetingtom import tiny_ami as T
from tests.meetingtom.tiny_ami import MEETING

RULE = WindowRule()  # 50 s preferred, 50-70 s, 10 s of context each side


# --- place_window


def test_short_anchor_gets_the_preferred_length_centred_on_it():
    assert place_window(100.0, 104.0, 1000.0, RULE) == (77.0, 127.0)


def test_anchor_needing_more_context_gets_a_longer_window():
    start, end = place_window(100.0, 140.0, 1000.0, RULE)  # 40 s + 10 s + 10 s
    assert (start, end) == (90.0, 150.0)


def test_window_never_exceeds_the_maximum():
    start, end = place_window(100.0, 165.0, 1000.0, RULE)
    assert end - start == pytest.approx(70.0) and start <= 100.0 and end >= 165.0


def test_anchor_longer_than_the_maximum_is_refused():
    with pytest.raises(WindowError) as exc:
        place_window(100.0, 171.0, 1000.0, RULE)
    assert exc.value.reason == "anchor_too_long"


def test_window_near_the_start_is_shifted_into_the_meeting():
    assert place_window(3.0, 5.0, 1000.0, RULE) == (0.0, 50.0)


def test_window_near_the_end_is_shifted_into_the_meeting():
    assert place_window(995.0, 998.0, 1000.0, RULE) == (950.0, 1000.0)


def test_meeting_shorter_than_the_shortest_window_is_refused():
    with pytest.raises(WindowError) as exc:
        place_window(10.0, 12.0, 40.0, RULE)
    assert exc.value.reason == "meeting_too_short"


def test_meeting_between_shortest_and_preferred_length_is_one_whole_window():
    assert place_window(10.0, 12.0, 45.0, WindowRule(preferred_s=50, min_s=40, max_s=70)) == (0.0, 45.0)


def test_anchor_outside_the_meeting_is_refused():
    with pytest.raises(WindowError) as exc:
        place_window(990.0, 1005.0, 1000.0, RULE)
    assert exc.value.reason == "anchor_outside"


def test_windows_always_contain_their_anchor_and_stay_inside_the_meeting():
    for a, need in itertools.product([0.0, 1.0, 20.0, 55.5, 140.0, 175.0, 199.0], [0.0, 0.4, 12.0, 35.0, 49.0, 66.0]):
        b = min(a + need, 200.0)
        start, end = place_window(a, b, 200.0, RULE)
        assert 0.0 <= start <= a and b <= end <= 200.0
        assert 50.0 - 1e-9 <= end - start <= 70.0 + 1e-9


# --- select_non_overlapping


def cand(cid, start, end):
    return Candidate("you", cid, "M", cid, start, start, start, end)


def test_of_overlapping_windows_the_one_ending_first_is_kept():
    kept, dropped = select_non_overlapping([cand("late", 10, 70), cand("early", 0, 50)])
    assert [c.id for c in kept] == ["early"]
    assert (dropped[0].id, dropped[0].reason) == ("late", "overlap") and "early" in dropped[0].detail


def test_touching_windows_do_not_overlap():
    kept, dropped = select_non_overlapping([cand("a", 0, 50), cand("b", 50, 100)])
    assert [c.id for c in kept] == ["a", "b"] and dropped == []


def test_selection_does_not_depend_on_input_order():
    cs = [cand(str(i), s, s + 50) for i, s in enumerate([0, 30, 45, 60, 100, 149, 150])]
    assert select_non_overlapping(cs) == select_non_overlapping(list(reversed(cs)))


# --- SpeechTimeline


def test_speech_seconds_are_clipped_to_the_span(tiny_meeting):
    tl = SpeechTimeline(tiny_meeting)
    assert tl.seconds("A", 10.2, 10.9) == pytest.approx(0.7)  # "Hi" from 10.2, "can", "you" to 10.9
    assert tl.seconds("A", 0.0, 120.0) == pytest.approx(3.3)
    assert tl.seconds("A", 20.0, 30.0) == 0.0


def test_speech_ignores_punctuation_and_vocal_sounds(tiny_meeting):
    assert SpeechTimeline(tiny_meeting).seconds("A", 11.9, 13.5) == 0.0  # laugh and marker only


# --- Task 1: state


def test_state_keeps_five_second_windows_of_speakers(tiny_meeting):
    res = mine_state(tiny_meeting)
    assert [(c.anchor, c.target, c.info["role"]) for c in res.accepted] == [
        (f"{MEETING}.A.dialog-act.t.1", "A", "speaker"),
        (f"{MEETING}.A.dialog-act.t.2", "A", "speaker"),
    ]
    assert all(c.end - c.start == pytest.approx(5.0) for c in res.accepted)


def test_state_window_is_centred_on_a_short_act(tiny_meeting):
    first = mine_state(tiny_meeting).accepted[0]
    assert (first.start, first.end) == (8.4, 13.4)  # act 10.0-11.8


def test_state_rejects_a_speaker_who_says_too_little(tiny_meeting):
    res = mine_state(tiny_meeting)
    c = next(c for c in res.rejected if c.anchor == f"{MEETING}.B.dialog-act.t.1")
    assert c.reason == "target_silent"


def test_state_takes_the_single_addressee_as_listener(tiny_meeting):
    c = next(c for c in mine_state(tiny_meeting).rejected if c.id == f"state:{MEETING}.A.dialog-act.t.1:B")
    assert (c.info["role"], c.info["basis"], c.reason) == ("listener", "addressed", "nothing_to_hear")


def test_state_backchannel_speaker_is_a_listener_target(tiny_meeting):
    # Without the suggestion's window in the way, C's backchannel window is kept.
    res = mine_state(tiny_meeting, StateParams(skip_act_types=("sug",)))
    c = next(c for c in res.accepted if c.target == "C")
    assert (c.info["role"], c.info["basis"]) == ("listener", "backchannel")


def test_state_overlapping_windows_are_rejected_as_overlap(tiny_meeting):
    c = next(c for c in mine_state(tiny_meeting).rejected if c.target == "C")
    assert c.reason == "overlap"


def test_state_skipped_act_types_are_reported(tiny_meeting):
    res = mine_state(tiny_meeting, StateParams(skip_act_types=("inf",)))
    assert [c.reason for c in res.rejected if c.anchor == f"{MEETING}.A.dialog-act.t.1"] == ["act_type"]


def test_a_state_candidate_skipped_for_its_act_type_names_the_acts_speaker_as_its_target(tiny_meeting):
    # the rejection report keeps whose state the window would have asked about
    res = mine_state(tiny_meeting, StateParams(skip_act_types=("inf",)))
    skipped = [c for c in res.rejected if c.reason == "act_type"]
    assert skipped and all(c.target == c.info["act_speaker"] for c in skipped)


# --- Task 2: you


def test_you_keeps_a_fifty_second_window_around_the_utterance(tiny_meeting):
    (c,) = mine_you(tiny_meeting).accepted
    assert (c.start, c.end, c.anchor_start, c.anchor_end) == (0.0, 50.0, 10.0, 11.8)
    assert (c.info["speaker"], c.info["addressee"], c.info["utterance"]) == ("A", "B", "Hi, can you check this?")


def test_you_reports_usages_without_a_resolvable_addressee(tiny_meeting):
    (c,) = mine_you(tiny_meeting).rejected
    assert (c.anchor, c.reason) == (f"{MEETING}.B.you.1", "not_singular")


def test_you_long_utterance_is_cut_around_the_you(tiny_meeting):
    (c,) = mine_you(tiny_meeting, YouParams(max_anchor_s=1.0)).accepted
    assert (c.anchor_start, c.anchor_end, c.info["anchor_cut"]) == (10.4, 11.4, True)


def test_you_unsure_usages_can_be_left_out(ami_dir):
    T.write(
        ami_dir, f"youUsages/{MEETING}.A.you.xml", T.root(f"{MEETING}.A.you", T.you("A", 1, "you_11", 3, unsure="true"))
    )
    res = mine_you(parse_meeting(ami_dir, MEETING), YouParams(skip_unsure=True))
    assert res.accepted == ()
    assert [c.reason for c in res.rejected if c.anchor == f"{MEETING}.A.you.1"] == ["unsure"]


# --- Task 3: consensus


def test_consensus_keeps_a_decision_with_proposal_response_and_agreement(tiny_meeting):
    (c,) = mine_consensus(tiny_meeting).accepted
    assert (c.start, c.end) == (36.4, 86.4)  # decision 60.0-62.8, centred
    assert [r["response"] for r in c.info["proposal_responses"]] == [f"{MEETING}.B.dialog-act.t.2"]
    assert [(m["speaker"], m["cue"]) for m in c.info["agreement_markers"]] == [("C", "word:mm-hmm"), ("B", "pair:POS")]


def test_consensus_without_adjacency_pairs_is_rejected(ami_dir):
    T.write(ami_dir, f"dialogueActs/{MEETING}.adjacency-pairs.xml", T.root(f"{MEETING}.adjacency-pairs", ""))
    (c,) = mine_consensus(parse_meeting(ami_dir, MEETING)).rejected
    assert c.reason == "no_proposal_response"


def test_consensus_without_agreement_markers_is_rejected(tiny_meeting):
    (c,) = mine_consensus(tiny_meeting, ConsensusParams(agreement_pair_types=(), agreement_words=())).rejected
    assert c.reason == "no_agreement_marker"


def test_consensus_proposers_own_yeah_is_no_agreement_marker(tiny_meeting):
    # Only answers by someone other than the last proposer count.
    (c,) = mine_consensus(tiny_meeting).accepted
    assert "A" not in c.info["agreeing"]


def test_consensus_window_grows_only_when_the_preferred_one_lacks_the_proposal(tiny_meeting):
    # A 3 s window around the decision's last second misses A's suggestion (midpoint 60.75 s);
    # 3 + 5 = 8 s reaches it.
    params = ConsensusParams(
        window=WindowRule(preferred_s=3, min_s=3, max_s=10, before_s=0, after_s=0), max_anchor_s=1.0
    )
    (c,) = mine_consensus(tiny_meeting, params).accepted
    assert (c.start, c.end) == (58.3, 66.3)


def test_consensus_long_decision_keeps_its_final_part(tiny_meeting):
    (c,) = mine_consensus(tiny_meeting, ConsensusParams(max_anchor_s=1.0)).accepted
    assert (c.anchor_start, c.anchor_end, c.info["anchor_cut"]) == (61.8, 62.8, True)
    assert (c.info["decision_start"], c.info["decision_end"]) == (60.0, 62.8)


# --- all tasks


def test_every_rejected_candidate_has_a_reason_and_every_kept_one_none(tiny_meeting):
    res = mine_meeting(tiny_meeting)
    assert all(c.reason and c.detail for c in res.rejected)
    assert all(c.reason is None and c.detail is None for c in res.accepted)


def test_mining_is_deterministic(ami_dir):
    a = mine_meeting(parse_meeting(ami_dir, MEETING))
    b = mine_meeting(parse_meeting(ami_dir, MEETING))
    assert [c.as_dict() for c in a.accepted + a.rejected] == [c.as_dict() for c in b.accepted + b.rejected]


def test_unknown_task_is_a_config_error(tiny_meeting):
    with pytest.raises(ConfigError, match="unknown task"):
        mine_meeting(tiny_meeting, tasks=("states",))
