"""Rendering MeetingToM requests (socialbench.meetingtom.eval.prompts): the default view per task, the
modality deciding the parts, the discourse-marker and contextual-prior ablations, and no AMI
annotation reaching the model outside them (B.4). The settings are checked in
tests/meetingtom/schema/test_methods.py.

The builders at the top (one small meeting with roles, a topic and dialogue acts; an instance of
any task, with a gold answer) are shared with the method and benchmark tests."""

import json

import pytest

from socialbench.core.backend import ModelSpec, VideoPart
from socialbench.core.benchmarks import InstanceInputError, get_benchmark
from socialbench.meetingtom.eval.prompts import (
    answer_task,
    build_request,
    render_context,
    render_transcript,
    settings_of,
    strip_markers,
)
from socialbench.meetingtom.schema.questions import label_of

SPEC = ModelSpec(name="m", backend="random", max_tokens=64)
BENCH = get_benchmark("meetingtom")
TEMPLATES = (BENCH.template("no_prompt", "system.txt"), BENCH.template("no_prompt", "user.txt"))
#: params.yaml's marker list (meetingtom.discourse_markers), copied so the tests do not read params.
MARKERS = [
    "uh",
    "um",
    "uhm",
    "umm",
    "er",
    "erm",
    "ah",
    "eh",
    "hmm",
    "hm",
    "mm",
    "mmm",
    "emm",
    "mm-hmm",
    "mm-hm",
    "uh-huh",
    "mhm",
]

# ---- builders: one meeting, an instance of any task ---------------------------------------------
MEETING_ID = "IS1001a"


def _words(speaker, t0, text):
    return [
        {"speaker": speaker, "start": t0 + 0.3 * k, "end": t0 + 0.3 * k + 0.25, "text": x}
        for k, x in enumerate(text.split())
    ]


# B opens with markers, D says only a marker (a line that the no-markers ablation drops), C says
# words that contain markers ("umbrella", "hummus"), B says the "you" of Task 2.
WORDS = (
    _words("B", 120.0, "Um, so uh we go")
    + _words("D", 124.0, "Uh.")
    + _words("C", 128.0, "The umbrella and hummus.")
    + _words("B", 132.0, "Could you check it?")
)
MEETING = {
    "meeting.json": {
        "meeting": MEETING_ID,
        "participants": {x: {"role": r} for x, r in zip("ABCD", ("PM", "ME", "UI", "ID"))},
    },
    "words.jsonl": WORDS,
    "topics.jsonl": [{"id": "t1", "start": 90.0, "end": 200.0, "type": "opening"}],
    "acts.jsonl": [
        {"id": "a1", "speaker": "B", "start": 120.0, "end": 121.5, "type": "inf"},
        {"id": "a2", "speaker": "D", "start": 124.0, "end": 124.3, "type": "bck"},
        {"id": "a3", "speaker": "C", "start": 128.0, "end": 129.2, "type": "sug"},
        {"id": "a4", "speaker": "B", "start": 132.0, "end": 133.2, "type": "el.inf"},
    ],
}
#: The gold value each task's instance gets unless told otherwise.
GOLD = {
    "task1": "hesitation",
    "task2_1": "D",
    "task2_2": "negative",
    "task3_1": "pseudo_consensus",
    "task3_2": ["B", "D"],
}


def frames(name):
    return [
        {"path": f"{name}/{k:06d}.png", "sha256": f"{k:064x}", "index": 20 * k, "timestamp": 2.0 * k} for k in range(3)
    ]


CLIP = {
    "videos": {
        n: {"path": f"{n}.mp4", "sha256": n[0] * 64}
        for n in ("corner", "closeup_A", "closeup_B", "closeup_C", "closeup_D", "mosaic")
    },
    "audio": None,
    "frames": {n: frames(n) for n in ("corner", "closeup_B", "closeup_C", "mosaic")},
    "fps": 0.5,
}


def make(task="task2_1", modality="utterances", clip=CLIP, *, k=1, gold=None, split="test", clip_problem=None):
    """A labelled instance of ``task`` (the k-th of its kind: its own id and option order)."""
    from socialbench.meetingtom.dataset.instances import build_task21, item_task1, item_task22, items_task3

    gold = GOLD[task] if gold is None else gold
    kw = dict(source="ami", split=split, modality=modality, seed=7, clip_problem=clip_problem)
    cand = {
        "id": f"you:{k}",
        "task": "you",
        "meeting": MEETING_ID,
        "anchor": f"{MEETING_ID}.B.you.{k}",
        "start": 100.0,
        "end": 150.0,
        "info": {"utterance": "Could you check it?", "word_id": f"w{k}", "act": "a4"},
    }
    event = {"meeting": MEETING_ID, "speaker": "B", "word_id": f"w{k}", "start": 132.3, "end": 132.5, "addressee": "D"}
    if task == "task2_1":
        return build_task21(cand, {**event, "addressee": gold}, "ABCD", WORDS, clip, meeting=MEETING, **kw)
    if task == "task1":
        inst = item_task1(
            MEETING,
            {
                **cand,
                "id": f"state:{k}",
                "task": "state",
                "anchor": f"{MEETING_ID}.state.{k}",
                "target": "C",
                "info": {},
            },
            clip,
            **kw,
        )
    elif task == "task2_2":
        inst = item_task22(MEETING, cand, event, clip, **kw)
    else:
        dec = {
            **cand,
            "id": f"consensus:{k}",
            "task": "consensus",
            "anchor": f"{MEETING_ID}.decision.{k}",
            "anchor_start": 130.0,
            "anchor_end": 135.0,
            "info": {},
        }
        inst = items_task3(MEETING, dec, "ABCD", clip, **kw)[task == "task3_2"]
    answer = (
        sorted(label_of(inst["options"], g) for g in gold)
        if isinstance(gold, list)
        else label_of(inst["options"], gold)
    )
    return {**inst, "answer": answer, "gold": gold}


def request(inst, settings=None, templates=TEMPLATES):
    return build_request(inst, templates, SPEC, settings, "no_prompt")


def user_text(req) -> str:
    return req.messages[1].text()


# ---- discourse markers -----------------------------------------------------------------------------
def test_markers_are_removed_as_whole_words_whatever_their_case():
    assert strip_markers("Um, so uh we go", MARKERS) == "so we go"


def test_words_that_contain_a_marker_are_kept():
    text = "Hmm, the umbrella, the drum and hummus, er, errands over yeah."
    assert strip_markers(text, MARKERS) == "the umbrella, the drum and hummus, errands over yeah."


def test_hyphenated_markers_are_removed_whole():
    assert strip_markers("Mm-hmm. Uh-huh, right", MARKERS) == "right"


# ---- the transcript and the context ----------------------------------------------------------------
def test_the_default_transcript_is_the_instances_own():
    inst = make()
    assert render_transcript(inst, settings_of(None)) == inst["transcript"]


def test_removing_markers_drops_a_line_left_empty_and_keeps_the_times():
    text = render_transcript(make(), settings_of({"remove_markers": True, "markers": MARKERS}))
    assert text.splitlines() == [
        "[20.00-21.45] B: so we go",
        "[28.00-29.15] C: The umbrella and hummus.",
        "[32.00-33.15] B: Could you check it?",
    ]


def test_the_dialogue_act_prior_marks_each_line_with_its_act():
    text = render_transcript(make(), settings_of({"priors": ["dialogue_act"]}))
    assert text.splitlines()[:2] == [
        "[20.00-21.45] B (inform): Um, so uh we go",
        "[24.00-24.25] D (backchannel): Uh.",
    ]


def test_without_priors_there_is_no_context_block():
    assert render_context(make(), settings_of(None)) == ""


def test_the_role_prior_lists_every_participants_role_and_nothing_else():
    block = render_context(make(), settings_of({"priors": ["role"]}))
    assert "A: PM, B: ME, C: UI, D: ID" in block and "phase" not in block and "dialogue act" not in block


def test_the_phase_prior_names_the_meeting_phase():
    block = render_context(make(), settings_of({"priors": ["phase"]}))
    assert "Meeting phase (opening, presentation, discussion, decision or closing): opening" in block
    assert "roles" not in block


# ---- the request -----------------------------------------------------------------------------------
def test_utterances_only_is_json_mode_text_with_the_transcript_and_the_options():
    inst = make()
    req = request(inst)
    text = user_text(req)
    assert req.media() == [] and inst["transcript"] in text and "Video: (not given)" in text
    for o in inst["options"]:
        assert f"{o['label']}. Participant {o['participant']}" in text
    assert 'participant B says "you" at 32.3 s' in text and req.decoding.json_object and req.decoding.temperature == 0


def test_json_mode_names_the_answer_key_and_a_reasoning_method_its_reasoning_first():
    label = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert request(make()).decoding.json_keys == {"answer": label}
    cot = build_request(make("task3_2"), TEMPLATES, SPEC, None, "naive_cot", reasons=True)
    assert cot.decoding.json_keys == {"reasoning": {"type": "string"}, "answer": {"type": "array", "items": label}}


def test_the_final_line_form_asks_for_no_json_mode_and_names_no_keys():
    req = build_request(make(), TEMPLATES, SPEC, {"answer_form": "final_line"}, "naive_cot", reasons=True)
    assert not req.decoding.json_object and req.decoding.json_keys is None


def test_no_ami_annotation_reaches_the_model():
    text = json.dumps(request(make(modality="both")).key())
    for leak in ("dialog-act", "words7", "meta", "ami_da", '"a4"'):
        assert leak not in text, leak


@pytest.mark.parametrize("task", ["task1", "task2_1", "task2_2", "task3_1", "task3_2"])
def test_the_default_request_shows_no_role_phase_or_act(task):
    text = user_text(request(make(task)))
    for prior in ("Participant roles", "PM", "Meeting phase", "opening", "(inf)", "(bck)", "dialogue act"):
        assert prior not in text, prior


def test_the_role_prior_reaches_the_request():
    assert "B: ME" in user_text(request(make(), {"priors": ["role"]}))


def test_both_gives_the_mosaic_as_file_and_frames_and_the_transcript():
    req = request(make(modality="both"))
    (part,) = req.media()
    assert (
        isinstance(part, VideoPart)
        and part.path == "mosaic.mp4"
        and [f.timestamp for f in part.frames] == [0.0, 2.0, 4.0]
    )
    assert part.fps == 0.5 and part.view == "mosaic A-D" and "B: Could you check it?" in user_text(req)


def test_video_only_leaves_the_transcript_out():
    text = user_text(request(make(modality="video")))
    assert "Transcript (speaker: words, times in seconds from the start of the clip):\n(not given)" in text
    assert "Um, so uh we go" not in text


def test_a_modality_setting_overrides_the_instances():
    inst = make(modality="utterances")
    assert len(request(inst, {"modality": "video"}).media()) == 1
    assert request(make(modality="both"), {"modality": "utterances"}).media() == []


@pytest.mark.parametrize("ingestion,has_file,n_frames", [("native", True, 0), ("frames", False, 3), ("auto", True, 3)])
def test_ingestion_chooses_the_file_the_frames_or_both(ingestion, has_file, n_frames):
    (part,) = request(make(modality="video"), {"ingestion": ingestion}).media()
    assert (part.sha256 is not None) == has_file and len(part.frames) == n_frames


@pytest.mark.parametrize(
    "task,path",
    [
        ("task1", "closeup_C.mp4"),
        ("task2_1", "mosaic.mp4"),
        ("task2_2", "mosaic.mp4"),
        ("task3_1", "mosaic.mp4"),
        ("task3_2", "mosaic.mp4"),
    ],
)
def test_the_default_view_is_task1s_target_close_up_and_the_mosaic_otherwise(task, path):
    (part,) = request(make(task, "video")).media()
    assert part.path == path


@pytest.mark.parametrize(
    "task,path",
    [
        ("task1", "closeup_C.mp4"),
        ("task2_1", "closeup_B.mp4"),
        ("task2_2", "closeup_D.mp4"),
        ("task3_1", "mosaic.mp4"),
        ("task3_2", "mosaic.mp4"),
    ],
)
def test_the_close_up_view_is_the_tasks_subject_and_task3_falls_back_to_the_mosaic(task, path):
    (part,) = request(make(task, "video"), {"view": "closeup"}).media()
    assert part.path == path


def test_the_global_view_is_the_corner_camera():
    (part,) = request(make(modality="video"), {"view": "global"}).media()
    assert part.path == "corner.mp4" and part.view == "Corner"


def test_a_view_the_clip_lacks_is_an_instance_input_error():
    clip = {**CLIP, "videos": {"corner": CLIP["videos"]["corner"]}}
    with pytest.raises(InstanceInputError, match="no mosaic video"):
        request(make(modality="video", clip=clip))


def test_frames_ingestion_of_a_video_without_frames_is_an_instance_input_error():
    with pytest.raises(InstanceInputError, match="no sampled frames of the closeup_D video"):
        request(make("task2_2", "video"), {"view": "closeup", "ingestion": "frames"})


def test_a_media_error_with_a_video_modality_is_an_instance_input_error():
    with pytest.raises(InstanceInputError, match="window_beyond_end"):
        request(make(modality="both", clip=None, clip_problem="window_beyond_end"))


# ---- the baselines' structured view ----------------------------------------------------------------
def test_the_baselines_options_are_the_labels_keyed_by_the_option_values():
    inst = make("task1")
    (choice,) = answer_task(inst, "no_prompt")["choices"]
    assert [(o["value"], o["key"]) for o in choice["options"]] == [(o["label"], o["value"]) for o in inst["options"]]


def test_a_participant_option_says_what_the_participant_says():
    inst = make()
    task = answer_task(inst, "no_prompt")
    d = next(o for o in task["choices"][0]["options"] if o["value"] == inst["answer"])
    assert (
        d["text"] == "Participant D: Uh."
        and task["query"] == "Could you check it?"
        and task["prior_group"] == "task2_1"
    )


def test_a_participant_who_says_nothing_is_marked_so():
    texts = [o["text"] for o in answer_task(make(), "no_prompt")["choices"][0]["options"]]
    assert "Participant A: (says nothing in the clip)" in texts


def test_with_video_only_a_participant_option_is_its_name_and_the_query_the_question():
    inst = make()
    task = answer_task(inst, "no_prompt", settings_of({"modality": "video"}))
    assert {o["text"] for o in task["choices"][0]["options"]} == {"Participant A", "Participant C", "Participant D"}
    assert task["query"] == inst["question"]


def test_the_baselines_words_have_the_markers_removed_in_that_ablation():
    task = answer_task(make(), "no_prompt", settings_of({"remove_markers": True, "markers": MARKERS}))
    assert "Participant D: (says nothing in the clip)" in [o["text"] for o in task["choices"][0]["options"]]


def test_task3_2_asks_the_baselines_for_several_options():
    assert answer_task(make("task3_2"), "no_prompt")["multi"] and not answer_task(make("task3_1"), "no_prompt")["multi"]


# ---- the ablations change what the paper changes: the transcript, not the question -----------------------
def test_the_no_markers_ablation_keeps_the_question_and_its_quoted_utterance():
    inst = make()
    inst = {**inst, "utterance": "Um, could you uh check it?"}
    inst["question"] = inst["question"].replace('"Could you check it?"', '"Um, could you uh check it?"')
    text = user_text(request(inst, {"remove_markers": True, "markers": MARKERS}))
    assert '"Um, could you uh check it?"' in text


def test_the_no_markers_ablation_keeps_the_baselines_query_as_the_question_quotes_it():
    inst = {**make(), "utterance": "Um, could you uh check it?"}
    task = answer_task(inst, "no_prompt", settings_of({"remove_markers": True, "markers": MARKERS}))
    assert task["query"] == "Um, could you uh check it?"


AUDIO = {**CLIP, "audio": {"path": "audio.wav", "sha256": "f" * 64}}


def test_a_video_modality_gives_the_audio_track_to_a_backend_that_takes_audio():
    spec = ModelSpec(name="m", backend="scripted", max_tokens=64)
    req = build_request(make(modality="both", clip=AUDIO), TEMPLATES, spec, None, "no_prompt")
    assert [p.kind for p in req.media()] == ["video", "audio"] and "with the clip's audio" in user_text(req)


def test_no_audio_part_for_a_backend_without_audio_or_with_audio_off():
    spec = ModelSpec(name="m", backend="scripted", max_tokens=64)
    off = build_request(make(modality="both", clip=AUDIO), TEMPLATES, spec, {"audio": False}, "no_prompt")
    unknown = build_request(
        make(modality="both", clip=AUDIO), TEMPLATES, ModelSpec(name="m", backend="nope"), None, "x"
    )
    assert [p.kind for p in off.media()] == ["video"] == [p.kind for p in unknown.media()]


def test_the_audio_track_goes_to_a_vllm_model_that_declares_audio():
    omni = ModelSpec(name="omni", backend="vllm", max_tokens=64, modalities=["image", "frames", "video", "audio"])
    req = build_request(make(modality="both", clip=AUDIO), TEMPLATES, omni, None, "no_prompt")
    assert [p.kind for p in req.media()] == ["video", "audio"] and "with the clip's audio" in user_text(req)


def test_a_model_that_declares_no_audio_gets_the_transcript_and_no_audio_part():
    vl = ModelSpec(name="vl", backend="vllm", max_tokens=64)  # the vllm default: image, frames, video
    req = build_request(make(modality="both", clip=AUDIO), TEMPLATES, vl, None, "no_prompt")
    assert [p.kind for p in req.media()] == ["video"] and "with the clip's audio" not in user_text(req)
    assert "Could you check it?" in user_text(req)  # speech as the transcript


def test_utterances_only_gives_no_audio():
    spec = ModelSpec(name="m", backend="scripted", max_tokens=64)
    req = build_request(make(modality="both", clip=AUDIO), TEMPLATES, spec, {"modality": "utterances"}, "no_prompt")
    assert req.media() == []
