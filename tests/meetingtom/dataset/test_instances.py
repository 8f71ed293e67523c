"""Instances and items of the five subtasks (socialbench.meetingtom.dataset.instances): Task 2.1's gold from
the you events, the annotated tasks' items, seeded options, the contextual priors, what the model
may see, the source report. Their validation (schema/instances.py) is tested in
tests/meetingtom/schema/test_instances.py."""

import json

import pytest

from socialbench.meetingtom.dataset.instances import (
    build_source,
    build_task21,
    context_of,
    item_task1,
    item_task22,
    items_task3,
    reply_of,
    shuffled_options,
)
from socialbench.meetingtom.schema.instances import check_instance
from socialbench.meetingtom.schema.questions import CONSENSUS, STATES

M = "IS1001a"
ACT_B = f"{M}.B.dialog-act.x.3"  # B's "Could you check it?", addressed to D
ACT_D = f"{M}.D.dialog-act.x.4"  # D's "Sure.", B's adjacency-pair partner
CAND = {
    "id": "you:M.B.you.1",
    "task": "you",
    "meeting": M,
    "anchor": f"{M}.B.you.1",
    "start": 100.0,
    "end": 150.0,
    "info": {"utterance": "Could you check it?", "word_id": f"{M}.B.words7", "act": ACT_B},
}
EVENT = {"meeting": M, "speaker": "B", "word_id": f"{M}.B.words7", "start": 120.5, "end": 120.7, "addressee": "D"}
WORDS = [
    {"speaker": "B", "start": 120.0, "end": 120.4, "text": "Could"},
    {"speaker": "B", "start": 120.5, "end": 120.7, "text": "you"},
    {"speaker": "D", "start": 122.0, "end": 122.3, "text": "Sure."},
]
STATE = {
    "id": f"state:{ACT_B}:D",
    "task": "state",
    "meeting": M,
    "anchor": ACT_B,
    "anchor_start": 119.9,
    "anchor_end": 121.0,
    "start": 118.0,
    "end": 123.0,
    "target": "D",
    "info": {
        "act_type": "el.inf",
        "act_speaker": "B",
        "role": "listener",
        "basis": "addressed",
        "speech_s": {"A": 0.0, "B": 0.7, "C": 0.0, "D": 0.3},
    },
}
CONS = {
    "id": f"consensus:{M}.decision.x.1",
    "task": "consensus",
    "meeting": M,
    "anchor": f"{M}.decision.x.1",
    "anchor_start": 120.0,
    "anchor_end": 122.3,
    "start": 100.0,
    "end": 150.0,
    "target": None,
    "info": {
        "decision_start": 120.0,
        "decision_end": 122.3,
        "agreeing": ["D"],
        "proposal_responses": [
            {"pair": "p1", "type": "POS", "proposal": ACT_B, "proposer": "B", "response": ACT_D, "responder": "D"}
        ],
    },
}
ACTS = [
    {"id": ACT_B, "speaker": "B", "start": 119.9, "end": 121.0, "type": "el.inf", "addressee": ["D"]},
    {"id": ACT_D, "speaker": "D", "start": 121.9, "end": 122.4, "type": "ass", "addressee": None},
]
PAIRS = [{"id": "p1", "type": "POS", "source": ACT_B, "target": ACT_D}]
TOPICS = [
    {"id": "t1", "parent": None, "start": 0.0, "end": 300.0, "type": "opening"},
    {"id": "t2", "parent": "t1", "start": 110.0, "end": 140.0, "type": "interface specialist presentation"},
]
ROLES = {"A": "PM", "B": "ME", "C": "UI", "D": "ID"}
KW = dict(source="ami", split="test", modality="utterances", seed=7)


def meeting_records(events=(EVENT,), candidates=(CAND,), acts=ACTS, pairs=PAIRS, topics=TOPICS):
    return {
        "meeting.json": {
            "meeting": M,
            "participants": {x: {"role": r} for x, r in ROLES.items()},
            "speakers": list("ABCD"),
        },
        "you_events.jsonl": list(events),
        "candidates.jsonl": list(candidates),
        "words.jsonl": WORDS,
        "acts.jsonl": list(acts),
        "pairs.jsonl": list(pairs),
        "topics.jsonl": list(topics),
    }


def make(**kw):
    return build_task21(CAND, EVENT, ["A", "B", "C", "D"], WORDS, None, **{**KW, **kw})


def source(meetings, **kw):
    return build_source(
        meetings, {}, {}, **{"source": "ami", "modality": "utterances", "seed": 7, "dev_meetings": [], **kw}
    )


# ---- Task 2.1 ---------------------------------------------------------------------------------------


def test_the_options_are_the_other_participants_shuffled_per_instance():
    a = shuffled_options("ABCD", "B", "x-1", 7, False)
    assert sorted(o["participant"] for o in a) == ["A", "C", "D"] and [o["label"] for o in a] == ["1", "2", "3"]
    assert a == shuffled_options("ABCD", "B", "x-1", 7, False)
    orders = {tuple(o["participant"] for o in shuffled_options("ABCD", "B", f"x-{k}", 7, False)) for k in range(20)}
    assert len(orders) > 1  # each instance has its own order


def test_the_speaker_is_an_option_only_when_params_say_so():
    assert "B" in {o["participant"] for o in shuffled_options("ABCD", "B", "x", 7, True)}


def test_the_answer_is_the_label_of_the_events_addressee():
    inst = make()
    assert next(o["participant"] for o in inst["options"] if o["label"] == inst["answer"]) == "D" == inst["addressee"]


def test_a_task21_instance_has_the_shared_record_fields():
    inst = make()
    assert inst["clip_id"] == CAND["id"] and inst["gold"] == "D" and inst["duration"] == 50.0
    assert all(o["value"] == o["participant"] for o in inst["options"])
    assert inst["variables"] == {"duration": 50.0, "speaker": "B", "you_time": 20.5, "utterance": "Could you check it?"}


def test_the_task21_question_names_the_speaker_the_you_and_the_utterance():
    q = make()["question"]
    assert (
        'participant B says "you" at 20.5 s' in q
        and '"Could you check it?"' in q
        and q.endswith('addressing with this "you"?')
    )


def test_the_transcript_is_the_window_around_the_event():
    inst = make()
    assert inst["transcript"] == "[20.00-20.70] B: Could you\n[22.00-22.30] D: Sure."
    assert inst["you_time"] == 20.5 and inst["speaker"] == "B" and inst["utterance"] == "Could you check it?"


def test_ami_annotations_stay_in_meta():
    inst = make()
    assert inst["meta"]["act"] == ACT_B and inst["meta"]["meeting"] == M
    outside = json.dumps({k: v for k, v in inst.items() if k not in ("meta", "id", "clip_id")})
    assert "dialog-act" not in outside and M not in outside


def test_a_task21_instance_built_with_its_meeting_gets_the_contextual_priors():
    assert make(meeting=meeting_records())["context"]["roles"] == ROLES
    assert make()["context"] == {
        "roles": {},
        "phase": None,
        "topic": None,
        "position": None,
        "acts": [None, None],
    }  # words alone: no priors


def test_a_video_modality_without_a_clip_is_kept_with_a_media_error():
    inst = make(modality="both", clip_problem="window_beyond_end: the video ends at 80 s")
    assert inst["media"] is None and "window_beyond_end" in inst["media_error"]


def test_a_clip_becomes_the_instances_media():
    clip = {
        "videos": {"mosaic": {"path": "m.mp4", "sha256": "a" * 64}},
        "audio": None,
        "frames": {"mosaic": []},
        "fps": 0.5,
    }
    inst = build_task21(CAND, EVENT, "ABCD", WORDS, clip, source="demo", split="dev", modality="both", seed=7)
    assert (
        inst["media"]["videos"]["mosaic"]["path"] == "m.mp4" and inst["media_error"] is None and inst["split"] == "dev"
    )


# ---- the items of the annotated tasks ------------------------------------------------------------------


def test_a_task1_item_offers_the_seven_states_as_name_and_definition():
    item = item_task1(meeting_records(), STATE, None, **KW)
    assert sorted(o["value"] for o in item["options"]) == sorted(STATES) and len(item["options"]) == 7
    assert all(o["text"] == f"{STATES[o['value']][0]}: {STATES[o['value']][1]}" for o in item["options"])


def test_a_task1_question_names_the_target_participant():
    item = item_task1(meeting_records(), STATE, None, **KW)
    assert item["question"] == "What is participant D's mental state in this 5.0-second clip?" and item["target"] == "D"


def test_a_task1_items_meta_is_what_the_simulated_annotators_read():
    meta = item_task1(meeting_records(), STATE, None, **KW)["meta"]
    assert {k: meta[k] for k in ("meeting", "candidate", "target", "role", "act_type", "basis", "addressed")} == {
        "meeting": M,
        "candidate": STATE["id"],
        "target": "D",
        "role": "listener",
        "act_type": "el.inf",
        "basis": "addressed",
        "addressed": True,
    }
    assert meta["speech_s"] == STATE["info"]["speech_s"]


def test_an_item_has_no_answer_or_gold_and_validates_as_an_item():
    item = item_task1(meeting_records(), STATE, None, **KW)
    assert "answer" not in item and "gold" not in item
    check_instance(item, "items.jsonl", item=True)


def test_a_task22_items_reply_is_the_addressees_adjacency_pair():
    item = item_task22(meeting_records(), CAND, EVENT, None, **KW)
    assert item["meta"]["reply"] == {"act": ACT_D, "pair_type": "POS"} and item["meta"]["act"] == ACT_B
    assert sorted(o["value"] for o in item["options"]) == ["negative", "neutral", "positive", "uncertain"]


def test_a_task22_question_names_speaker_and_addressee():
    q = item_task22(meeting_records(), CAND, EVENT, None, **KW)["question"]
    assert "participant B addresses participant D" in q and "attitude does participant D hold" in q


def test_a_reply_by_someone_other_than_the_addressee_is_no_reply():
    other = [{**ACTS[1], "speaker": "C"}]
    assert reply_of(meeting_records(acts=[ACTS[0], *other]), ACT_B, "D") is None


def test_a_pair_from_another_act_is_no_reply():
    assert reply_of(meeting_records(), "some-other-act", "D") is None


def test_without_adjacency_pairs_the_reply_is_none():
    assert item_task22(meeting_records(pairs=[]), CAND, EVENT, None, **KW)["meta"]["reply"] is None


def test_a_decision_clip_makes_a_task31_and_a_task32_item_of_the_same_clip():
    t31, t32 = items_task3(meeting_records(), CONS, "ABCD", None, **KW)
    assert (t31["task"], t32["task"]) == ("task3_1", "task3_2")
    assert t31["clip_id"] == t32["clip_id"] == CONS["id"] and t31["id"] != t32["id"]


def test_task31_offers_the_three_consensus_kinds_and_task32_the_participants():
    t31, t32 = items_task3(meeting_records(), CONS, "ABCD", None, **KW)
    assert sorted(o["value"] for o in t31["options"]) == sorted(CONSENSUS)
    assert sorted(o["participant"] for o in t32["options"]) == ["A", "B", "C", "D"]
    assert all(o["value"] == o["participant"] for o in t32["options"])


def test_the_task3_questions_give_the_decision_moment_from_the_clip_start():
    for item in items_task3(meeting_records(), CONS, "ABCD", None, **KW):
        assert "between 20.0 s and 22.3 s" in item["question"]


def test_task3_meta_lists_proposers_agreeing_and_responses():
    meta = items_task3(meeting_records(), CONS, "ABCD", None, **KW)[0]["meta"]
    assert meta["proposers"] == ["B"] and meta["agreeing"] == ["D"] and meta["participants"] == ["A", "B", "C", "D"]
    assert meta["responses"] == [{"responder": "D", "type": "POS"}] and meta["decision"] == CONS["anchor"]


def test_an_items_option_order_is_reproducible_and_seeded():
    def orders(seed):
        return [o["value"] for o in item_task1(meeting_records(), STATE, None, **{**KW, "seed": seed})["options"]]

    assert orders(7) == orders(7)
    assert len({tuple(orders(s)) for s in range(10)}) > 1


# ---- contextual priors -----------------------------------------------------------------------------------


def test_the_topic_is_the_innermost_topic_holding_the_clip_midpoint_and_the_phase_its_stage():
    ctx = context_of(meeting_records(), 100.0, 150.0, [])  # midpoint 125: in t2 inside t1
    assert (ctx["topic"], ctx["phase"]) == ("interface specialist presentation", "presentation")
    assert context_of(meeting_records(), 200.0, 250.0, [])["phase"] == "opening"


def test_a_clip_whose_midpoint_is_in_no_topic_has_no_phase_without_the_meetings_span():
    assert context_of(meeting_records(), 400.0, 450.0, [])["phase"] is None


def test_the_position_is_the_midpoints_share_of_the_meeting():
    records = meeting_records()
    records["meeting.json"] = {**records["meeting.json"], "start": 0.0, "end": 1000.0}
    ctx = context_of(records, 400.0, 450.0, [])
    assert (ctx["position"], ctx["phase"]) == (0.425, "discussion")
    assert context_of(records, 960.0, 980.0, [])["phase"] == "closing"


def test_each_transcript_line_gets_its_speakers_most_overlapping_act():
    inst = make(meeting=meeting_records())
    assert [t["speaker"] for t in inst["turns"]] == ["B", "D"]
    assert inst["context"]["acts"] == ["el.inf", "ass"]


def test_a_line_no_act_of_its_speaker_overlaps_has_no_act():
    inst = make(meeting=meeting_records(acts=[ACTS[0], {**ACTS[1], "start": 130.0, "end": 131.0}]))
    assert inst["context"]["acts"] == ["el.inf", None]


def test_the_roles_come_from_the_meeting_record():
    assert context_of(meeting_records(), 100.0, 150.0, [])["roles"] == ROLES


def _leaves(value):
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value] if isinstance(value, str) and len(value) > 1 else []  # a participant letter is a task variable


def test_meta_and_context_never_reach_question_transcript_or_options():
    insts, items, _ = source([meeting_records(candidates=[CAND, STATE, CONS])])
    assert {r["task"] for r in insts + items} == {"task1", "task2_1", "task2_2", "task3_1", "task3_2"}
    for rec in insts + items:
        shown = "\n".join([rec["question"], rec["transcript"], *(o["text"] for o in rec["options"])])
        hidden = _leaves(rec["meta"]) + _leaves(rec["context"])
        assert hidden and not [h for h in hidden if h in shown], rec["id"]


# ---- one source -----------------------------------------------------------------------------------------------


def test_a_source_makes_one_instance_per_you_window_and_splits_by_meeting():
    insts, items, report = source([meeting_records()], dev_meetings=[M])
    assert [i["id"] for i in insts] == [f"ami-task2_1-{M}.B.you.1"] and insts[0]["split"] == "dev" and report == []
    assert [i["task"] for i in items] == ["task2_2"] and items[0]["split"] == "dev"


def test_a_source_makes_items_of_every_annotated_task_sorted_by_id():
    _, items, _ = source([meeting_records(candidates=[CONS, STATE, CAND])])
    assert sorted(i["task"] for i in items) == ["task1", "task2_2", "task3_1", "task3_2"]
    assert [i["id"] for i in items] == sorted(i["id"] for i in items)


def test_a_window_without_its_event_is_reported_not_dropped_silently():
    insts, items, report = source([meeting_records(events=[])])
    assert insts == [] and items == [] and report[0]["reason"] == "no_event" and report[0]["id"] == CAND["id"]


def test_a_missing_clip_is_in_the_report_with_its_problem():
    problems = {M: [{"id": CAND["id"], "problem": "view_length_mismatch", "detail": "views differ"}]}
    insts, items, report = build_source(
        [meeting_records()], {}, problems, source="ami", modality="both", seed=7, dev_meetings=[]
    )
    assert insts[0]["media_error"].startswith("no clip for this window (view_length_mismatch")
    assert {(r["id"], r["reason"]) for r in report} == {
        (insts[0]["id"], "media_error"),
        (items[0]["id"], "media_error"),
    }


def test_an_unknown_candidate_task_is_reported():
    _, _, report = source([meeting_records(candidates=[{**CAND, "task": "mood", "id": "mood:x"}])])
    assert [(r["id"], r["reason"]) for r in report] == [("mood:x", "unknown_task")]


def test_other_tasks_candidates_make_no_task21_instance():
    insts, items, _ = source([meeting_records(candidates=[CONS])])
    assert insts == [] and len(items) == 2


@pytest.mark.shared
def test_real_events_become_instances_whose_gold_is_the_event(real_ami):
    from socialbench.meetingtom.dataset.extract import extract_meeting

    m = extract_meeting(real_ami, "IS1001a", "ami", {})
    insts, items, report = source([m])
    events = {e["word_id"]: e for e in m["you_events.jsonl"]}
    assert len(insts) == 7 and report == []
    for inst in insts:
        e = events[inst["meta"]["word_id"]]
        assert inst["addressee"] == e["addressee"] and inst["speaker"] == e["speaker"]
        assert e["speaker"] not in {o["participant"] for o in inst["options"]}
        check_instance(inst, "real")
    for item in items:
        check_instance(item, "real", item=True)
    assert sum(i["task"] == "task2_2" for i in items) == 7 and sum(i["task"] == "task3_1" for i in items) == sum(
        i["task"] == "task3_2" for i in items
    )
