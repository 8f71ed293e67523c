"""Task 2.1 instances (socialbench.meetingtom.instances): gold from the you events, seeded options,
what the model may see, validation naming file, record and field."""

import json

import pytest

from socialbench.errors import DataError
from socialbench.meetingtom.instances import build_source, build_task21, check_instance, load_instances, shuffled_options

CAND = {"id": "you:M.B.you.1", "task": "you", "meeting": "IS1001a", "anchor": "IS1001a.B.you.1", "start": 100.0, "end": 150.0,
        "info": {"utterance": "Could you check it?", "word_id": "IS1001a.B.words7", "act": "IS1001a.B.dialog-act.x.3"}}
EVENT = {"meeting": "IS1001a", "speaker": "B", "word_id": "IS1001a.B.words7", "start": 120.5, "end": 120.7, "addressee": "D"}
WORDS = [{"speaker": "B", "start": 120.0, "end": 120.4, "text": "Could"}, {"speaker": "B", "start": 120.5, "end": 120.7, "text": "you"},
         {"speaker": "D", "start": 122.0, "end": 122.3, "text": "Sure."}]  # fmt: skip


def make(**kw):
    args = dict(source="ami", split="test", modality="utterances", seed=7)
    args.update(kw)
    return build_task21(CAND, EVENT, ["A", "B", "C", "D"], WORDS, None, **args)


def test_the_options_are_the_other_participants_shuffled_per_instance():
    a = shuffled_options("ABCD", "B", "x-1", 7, False)
    assert sorted(o["participant"] for o in a) == ["A", "C", "D"] and [o["label"] for o in a] == ["A", "B", "C"]
    assert a == shuffled_options("ABCD", "B", "x-1", 7, False)
    orders = {tuple(o["participant"] for o in shuffled_options("ABCD", "B", f"x-{k}", 7, False)) for k in range(20)}
    assert len(orders) > 1  # each instance has its own order


def test_the_speaker_is_an_option_only_when_params_say_so():
    assert "B" in {o["participant"] for o in shuffled_options("ABCD", "B", "x", 7, True)}


def test_the_answer_is_the_label_of_the_events_addressee():
    inst = make()
    assert next(o["participant"] for o in inst["options"] if o["label"] == inst["answer"]) == "D" == inst["addressee"]


def test_the_transcript_is_the_window_around_the_event():
    inst = make()
    assert inst["transcript"] == "[20.00-20.70] B: Could you\n[22.00-22.30] D: Sure."
    assert inst["you_time"] == 20.5 and inst["speaker"] == "B" and inst["utterance"] == "Could you check it?"


def test_ami_annotations_stay_in_meta():
    inst = make()
    assert inst["meta"]["act"] == "IS1001a.B.dialog-act.x.3" and inst["meta"]["meeting"] == "IS1001a"
    outside = json.dumps({k: v for k, v in inst.items() if k != "meta"})
    assert "dialog-act" not in outside and "IS1001a" not in outside.replace("ami-task2_1-IS1001a.B.you.1", "")


def test_a_video_modality_without_a_clip_is_kept_with_a_media_error():
    inst = make(modality="both", clip_problem="window_beyond_end: the video ends at 80 s")
    assert inst["media"] is None and "window_beyond_end" in inst["media_error"]


def test_a_clip_becomes_the_instances_media():
    clip = {"videos": {"mosaic": {"path": "m.mp4", "sha256": "a" * 64}}, "audio": None, "frames": {"mosaic": []}, "fps": 0.5}
    inst = build_task21(CAND, EVENT, "ABCD", WORDS, clip, source="demo", split="dev", modality="both", seed=7)
    assert inst["media"]["videos"]["mosaic"]["path"] == "m.mp4" and inst["media_error"] is None and inst["split"] == "dev"


def meeting_records(events, candidates):
    return {"meeting.json": {"meeting": "IS1001a", "participants": {x: {} for x in "ABCD"}, "speakers": list("ABCD")},
            "you_events.jsonl": events, "candidates.jsonl": candidates, "words.jsonl": WORDS}  # fmt: skip


def test_a_source_makes_one_instance_per_you_window_and_splits_by_meeting():
    insts, report = build_source([meeting_records([EVENT], [CAND])], {}, {}, source="ami", modality="utterances", seed=7,
                                 dev_meetings=["IS1001a"])  # fmt: skip
    assert [i["id"] for i in insts] == ["ami-task2_1-IS1001a.B.you.1"] and insts[0]["split"] == "dev" and report == []


def test_a_window_without_its_event_is_reported_not_dropped_silently():
    insts, report = build_source([meeting_records([], [CAND])], {}, {}, source="ami", modality="utterances", seed=7, dev_meetings=[])
    assert insts == [] and report[0]["reason"] == "no_event" and report[0]["id"] == CAND["id"]


def test_a_missing_clip_is_in_the_report_with_its_problem():
    problems = {"IS1001a": [{"id": CAND["id"], "problem": "view_length_mismatch", "detail": "views differ"}]}
    insts, report = build_source([meeting_records([EVENT], [CAND])], {}, problems, source="ami", modality="both", seed=7, dev_meetings=[])
    assert insts[0]["media_error"].startswith("no clip for this window (view_length_mismatch")
    assert report[0]["reason"] == "media_error"


def test_other_tasks_candidates_make_no_task21_instance():
    other = {**CAND, "task": "consensus", "id": "consensus:x"}
    insts, _ = build_source([meeting_records([EVENT], [other])], {}, {}, source="ami", modality="utterances", seed=7, dev_meetings=[])
    assert insts == []


@pytest.mark.parametrize("change,field", [
    ({"answer": "Z"}, "answer"), ({"task": "task9"}, "task"), ({"split": "train"}, "split"), ({"modality": "smell"}, "modality"),
    ({"you_time": "12"}, "you_time"), ({"options": [{"label": "A"}]}, "options"),
])  # fmt: skip
def test_a_bad_instance_is_named_by_file_record_and_field(change, field):
    with pytest.raises(DataError) as err:
        check_instance({**make(), **change}, "t.jsonl")
    assert err.value.field == field and err.value.record == "ami-task2_1-IS1001a.B.you.1" and err.value.path == "t.jsonl"


def test_an_answer_that_is_not_the_addressee_is_refused():
    inst = make()
    other = next(o["label"] for o in inst["options"] if o["participant"] != "D")
    with pytest.raises(DataError, match="not the addressee"):
        check_instance({**inst, "answer": other}, "t.jsonl")


def test_a_missing_field_is_named():
    inst = make()
    del inst["transcript"]
    with pytest.raises(DataError, match="field 'transcript': missing"):
        check_instance(inst, "t.jsonl")


def test_duplicate_ids_in_a_file_are_an_error(tmp_path):
    from socialbench.io import write_jsonl

    write_jsonl(tmp_path / "i.jsonl", [make(), make()])
    with pytest.raises(DataError, match="duplicate id"):
        load_instances(tmp_path / "i.jsonl")


def test_real_events_become_instances_whose_gold_is_the_event(real_ami):
    from socialbench.meetingtom.extract import extract_meeting

    m = extract_meeting(real_ami, "IS1001a", "ami", {})
    insts, report = build_source([m], {}, {}, source="ami", modality="utterances", seed=7, dev_meetings=[])
    events = {e["word_id"]: e for e in m["you_events.jsonl"]}
    assert len(insts) == 7 and report == []
    for inst in insts:
        e = events[inst["meta"]["word_id"]]
        assert inst["addressee"] == e["addressee"] and inst["speaker"] == e["speaker"]
        assert e["speaker"] not in {o["participant"] for o in inst["options"]}
        check_instance(inst, "real")
