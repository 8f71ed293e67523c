"""Rendering Task 2.1 requests (socialbench.meetingtom.prompts): the modality decides the parts,
the settings the view and ingestion, and no AMI annotation reaches the model (B.4)."""

import json

import pytest

from socialbench.backends.base import ModelSpec, VideoPart
from socialbench.benchmark import InstanceInputError
from socialbench.errors import ConfigError
from socialbench.benchmark import get_benchmark
from socialbench.meetingtom.prompts import answer_task, build_request
from tests.meetingtom.test_instances import CAND, EVENT, WORDS

SPEC = ModelSpec(name="m", backend="random", max_tokens=64)
BENCH = get_benchmark("meetingtom")
TEMPLATES = (BENCH.template("direct", "system.txt"), BENCH.template("direct", "task2_1.txt"))


def frames(name):
    return [{"path": f"{name}/{k:06d}.png", "sha256": f"{k:064x}", "index": 20 * k, "timestamp": 2.0 * k} for k in range(3)]


CLIP = {"videos": {n: {"path": f"{n}.mp4", "sha256": n[0] * 64} for n in ("corner", "closeup_A", "closeup_B", "closeup_C", "closeup_D", "mosaic")},
        "audio": None, "frames": {n: frames(n) for n in ("corner", "closeup_B", "mosaic")}, "fps": 0.5}  # fmt: skip


def instance(modality="utterances", clip=CLIP):
    from socialbench.meetingtom.instances import build_task21

    return build_task21(CAND, EVENT, "ABCD", WORDS, clip, source="ami", split="test", modality=modality, seed=7)


def rendered(request) -> str:
    return json.dumps(request.key())


def test_utterances_only_is_text_with_the_transcript_and_the_options():
    inst = instance()
    req = build_request(inst, TEMPLATES, SPEC, {}, "direct")
    text = req.messages[1].text()
    assert req.media() == [] and inst["transcript"] in text and "Video: (not given)" in text
    for o in inst["options"]:
        assert f"{o['label']}. Participant {o['participant']}" in text
    assert 'participant B says "you" at 20.5 s' in text and req.decoding.json_object and req.decoding.temperature == 0


def test_no_ami_annotation_reaches_the_model():
    req = build_request(instance("both"), TEMPLATES, SPEC, {}, "direct")
    text = rendered(req)
    for leak in ("dialog-act", "IS1001a", "words7", "meta", "ami_da"):
        assert leak not in text, leak


def test_both_gives_the_mosaic_as_file_and_frames_and_the_transcript():
    req = build_request(instance("both"), TEMPLATES, SPEC, {}, "direct")
    (part,) = req.media()
    assert isinstance(part, VideoPart) and part.path == "mosaic.mp4" and [f.timestamp for f in part.frames] == [0.0, 2.0, 4.0]
    assert part.fps == 0.5 and part.view == "mosaic A-D" and "B: Could you" in req.messages[1].text()


def test_video_only_leaves_the_transcript_out():
    req = build_request(instance("video"), TEMPLATES, SPEC, {}, "direct")
    assert "Transcript (speaker: words, times in seconds from the start of the clip):\n(not given)" in req.messages[1].text()


@pytest.mark.parametrize("ingestion,has_file,n_frames", [("native", True, 0), ("frames", False, 3), ("auto", True, 3)])
def test_ingestion_chooses_the_file_the_frames_or_both(ingestion, has_file, n_frames):
    (part,) = build_request(instance("video"), TEMPLATES, SPEC, {"ingestion": ingestion}, "direct").media()
    assert (part.sha256 is not None) == has_file and len(part.frames) == n_frames


def test_the_close_up_view_is_the_speakers():
    (part,) = build_request(instance("video"), TEMPLATES, SPEC, {"view": "closeup"}, "direct").media()
    assert part.path == "closeup_B.mp4" and part.view == "Closeup B"


def test_a_view_the_clip_lacks_is_an_instance_input_error():
    clip = {**CLIP, "videos": {"corner": CLIP["videos"]["corner"]}}
    with pytest.raises(InstanceInputError, match="no mosaic video"):
        build_request(instance("video", clip), TEMPLATES, SPEC, {}, "direct")


def test_an_unknown_setting_is_a_config_error():
    with pytest.raises(ConfigError, match="view must be one of"):
        build_request(instance(), TEMPLATES, SPEC, {"view": "drone"}, "direct")
    with pytest.raises(ConfigError, match="unknown setting"):
        build_request(instance(), TEMPLATES, SPEC, {"zoom": 2}, "direct")


def test_the_baselines_view_lists_the_labels_and_what_each_participant_says():
    inst = instance()
    task = answer_task(inst, "direct")
    (choice,) = task["choices"]
    assert [o["value"] for o in choice["options"]] == [o["label"] for o in inst["options"]]
    d = next(o for o in choice["options"] if o["value"] == inst["answer"])
    assert d["text"] == "Participant D: Sure." and task["query"] == "Could you check it?" and task["prior_group"] == "task2_1"


def test_a_participant_who_says_nothing_is_marked_so():
    task = answer_task(instance(), "direct")
    texts = [o["text"] for o in task["choices"][0]["options"]]
    assert "Participant A: (says nothing in the clip)" in texts
