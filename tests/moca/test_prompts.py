from socialbench.backends.base import ModelSpec
from socialbench.backends.base import ModelSpec as _Spec  # noqa: F401
from socialbench.benchmark import get_benchmark
from socialbench.moca.prompts import answer_schema, build_direct_request as _build, slot_maps

from tests.conftest import make_instance

DIRECT = tuple(get_benchmark("moca").template("direct", n) for n in ("system.txt", "user.txt"))


def build_direct_request(inst, tax, spec, seed):
    return _build(inst, tax, spec, seed, DIRECT)


def test_slot_shuffle_is_deterministic_per_instance_and_seed():
    inst = make_instance("a")
    assert slot_maps(inst, 1) == slot_maps(inst, 1)
    assert sorted(slot_maps(inst, 1)["subject"].values()) == sorted(inst["subject_options"])
    # Over many instances the order differs from the given one (no position shortcut).
    orders = {tuple(slot_maps(make_instance(f"i{k}"), 1)["subject"].values()) for k in range(20)}
    assert len(orders) > 3


def test_direct_request_shows_options_with_criteria_and_slots(tmp_path, taxonomy):
    img = tmp_path / "img.png"
    img.write_bytes(b"\x89PNG fake")
    inst = make_instance("a", media=[str(img)])
    req, maps = build_direct_request(inst, taxonomy, ModelSpec(name="m", backend="random"), seed=3)
    system = req.messages[0].text()
    user = req.messages[1].text()
    for label in taxonomy.label_names("intent"):
        assert f"- {label}:" in system
    assert "happy" not in system  # never options of another scenario
    for slot, option in maps["subject"].items():
        assert f"{slot}: {option}" in user
    assert req.images()[0].sha256 and req.task["scenario"] == "intent"
    assert req.temperature == 0.0


def test_answer_schema_enumerates_scenario_options(taxonomy):
    maps = slot_maps(make_instance("a"), 0)
    schema = answer_schema("stance", taxonomy, maps)
    assert schema["properties"]["label"]["enum"] == taxonomy.label_names("stance")
    assert schema["properties"]["subject"]["enum"] == ["subject0", "subject1", "subject2", "subject3"]
    assert schema["additionalProperties"] is False


def test_video_request_uses_frames_with_timestamps_capped_at_max_frames(taxonomy):
    frames = [{"path": f"f{k}.png", "sha256": f"h{k}", "index": k * 3, "timestamp": k * 0.3} for k in range(8)]
    inst = make_instance("v", modality="video_text", transcript="A: hi", frames=frames)
    req, _ = build_direct_request(inst, taxonomy, ModelSpec(name="m", backend="random", max_frames=4), seed=0)
    imgs = req.images()
    assert [i.sha256 for i in imgs] == ["h0", "h2", "h5", "h7"]
    assert "0.00s" in req.messages[1].text() and "A: hi" in req.messages[1].text()


def test_direct_task_lists_each_fields_choices_for_the_baselines(tmp_path, taxonomy):
    img = tmp_path / "img.png"
    img.write_bytes(b"\x89PNG fake")
    req, maps = build_direct_request(make_instance("a", media=[str(img)]), taxonomy, ModelSpec(name="m", backend="random"), 3)
    choices = {c["field"]: c for c in req.task["choices"]}
    assert list(choices) == ["mechanism", "label", "subject", "target"]
    assert [o["value"] for o in choices["label"]["options"]] == taxonomy.label_names("intent")
    assert {o["value"]: o["text"] for o in choices["subject"]["options"]} == maps["subject"]
    assert choices["target"]["distinct_from"] == "subject" and req.task["prior_group"] == "intent"


def test_video_instance_without_frames_is_an_input_error_of_field_frames(taxonomy):
    import pytest

    from socialbench.benchmark import InstanceInputError

    inst = make_instance("v", modality="video_text", transcript="A: hi")
    with pytest.raises(InstanceInputError, match="needs sampled frames; run socialbench moca frames first") as exc:
        build_direct_request(inst, taxonomy, ModelSpec(name="m", backend="random"), seed=0)
    assert exc.value.field == "frames"


def test_missing_image_is_an_input_error_of_field_media_naming_the_path(tmp_path, taxonomy):
    import pytest

    from socialbench.benchmark import InstanceInputError

    inst = make_instance("a", media=[str(tmp_path / "gone.png")])
    with pytest.raises(InstanceInputError, match="image file not found: .*gone.png") as exc:
        build_direct_request(inst, taxonomy, ModelSpec(name="m", backend="random"), seed=0)
    assert exc.value.field == "media"
