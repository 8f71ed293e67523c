import re

import pytest

from socialbench.core.backend import ModelSpec
from socialbench.core.benchmarks import InstanceInputError, get_benchmark
from socialbench.core.errors import ConfigError
from socialbench.moca.eval.prompts import (
    BOUNDARY_LINE,
    MediaUnavailable,
    addition_values,
    answer_schema,
    answer_settings,
    options_block,
    render,
    slot_maps,
)
from socialbench.moca.eval.prompts import (
    build_direct_request as _build,
)
from tests.conftest import make_instance

BENCH = get_benchmark("moca")
DIRECT = tuple(BENCH.template("direct", n) for n in ("system.txt", "user.txt"))
SPEC = ModelSpec(name="m", backend="random")


def build_direct_request(inst, tax, spec, seed, **kw):
    return _build(inst, tax, spec, seed, DIRECT, **kw)


@pytest.fixture
def image_instance(tmp_path):
    img = tmp_path / "img.png"
    img.write_bytes(b"\x89PNG fake")  # read for its hash only
    return make_instance("a", media=[str(img)])


def test_slot_shuffle_is_deterministic_per_instance_and_seed():
    inst = make_instance("a")
    assert slot_maps(inst, 1) == slot_maps(inst, 1)
    assert sorted(slot_maps(inst, 1)["subject"].values()) == sorted(inst["subject_options"])
    # Over many instances the order differs from the given one (no position shortcut).
    orders = {tuple(slot_maps(make_instance(f"i{k}"), 1)["subject"].values()) for k in range(20)}
    assert len(orders) > 3


def test_direct_request_shows_every_option_with_its_criterion_and_boundary_rule(image_instance, taxonomy):
    req, maps = build_direct_request(image_instance, taxonomy, SPEC, seed=3)
    system = req.messages[0].text()
    user = req.messages[1].text()
    for o in (*taxonomy.labels["intent"], *taxonomy.mechanisms["intent"]):
        assert f"- {o.name}: {o.criterion} Boundary: {o.boundary}\n" in system
    assert "Every option is supplied with its decision criterion and boundary rule." in system
    assert "- happy:" not in system  # never options of another scenario
    for slot, option in maps["subject"].items():
        assert f"{slot}: {option}" in user


def test_options_block_without_boundaries_gives_criteria_only(taxonomy):
    block = options_block(taxonomy.labels["intent"], with_boundary=False)
    assert block.splitlines()[0] == f"- mock: {taxonomy.labels['intent'][0].criterion}"
    assert "Boundary:" not in block


def test_options_without_criteria_are_listed_by_name():
    from socialbench.moca.schema.taxonomy import Option

    assert options_block((Option("x", ""), Option("y", "", boundary="not x"))) == "- x\n- y: Boundary: not x"


def test_direct_decodes_greedily_in_json_mode_without_an_enum_schema(image_instance, taxonomy):
    req, _ = build_direct_request(image_instance, taxonomy, SPEC, seed=3)
    d = req.decoding
    assert (d.temperature, d.json_object, d.json_schema) == (0.0, True, None)
    assert req.request_id == "a/direct/answer" and req.task["method"] == "direct"


def test_directs_json_mode_names_the_four_keys_with_free_string_values(image_instance, taxonomy):
    req, _ = build_direct_request(image_instance, taxonomy, SPEC, seed=3)
    assert req.decoding.json_keys == {k: {"type": "string"} for k in ("mechanism", "label", "subject", "target")}


def test_constrained_variant_sends_the_enum_schema_with_the_same_messages(image_instance, taxonomy):
    free, _ = build_direct_request(image_instance, taxonomy, SPEC, seed=3)
    req, maps = build_direct_request(
        image_instance, taxonomy, SPEC, seed=3, method="direct_constrained", constrained=True
    )
    assert req.decoding.json_schema == answer_schema("intent", taxonomy, maps) and not req.decoding.json_object
    assert req.decoding.temperature == 0.0 and req.messages == free.messages
    assert req.request_id == "a/direct_constrained/answer" and req.task["method"] == "direct_constrained"


def test_constrained_variant_templates_are_directs():
    # The two methods must differ in decoding only; each keeps its own folder so DVC reruns each alone.
    assert BENCH.method_class("direct_constrained").templates == BENCH.method_class("direct").templates
    for name in BENCH.method_class("direct").templates:
        assert BENCH.template("direct_constrained", name) == BENCH.template("direct", name)


def test_max_tokens_leaves_a_thinking_model_room_by_default(image_instance, taxonomy, tmp_path):
    from socialbench.core.config import load_params

    req, _ = build_direct_request(image_instance, taxonomy, ModelSpec(name="m", backend="random"), seed=0)
    assert req.max_tokens == 4096
    params = tmp_path / "params.yaml"
    params.write_text("seed: 0\nmodels:\n  m: {backend: random}\n")
    assert load_params(params)["models"]["m"]["max_tokens"] == 4096  # the params schema fills the same default


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


def test_direct_task_lists_each_fields_choices_for_the_baselines(image_instance, taxonomy):
    req, maps = build_direct_request(image_instance, taxonomy, SPEC, 3)
    choices = {c["field"]: c for c in req.task["choices"]}
    assert list(choices) == ["mechanism", "label", "subject", "target"]
    assert [o["value"] for o in choices["label"]["options"]] == taxonomy.label_names("intent")
    assert {o["value"]: o["text"] for o in choices["subject"]["options"]} == maps["subject"]
    assert choices["target"]["distinct_from"] == "subject" and req.task["prior_group"] == "intent"


def test_video_instance_never_through_the_media_stage_is_a_plain_input_error(taxonomy):
    inst = make_instance("v", modality="video_text", transcript="A: hi")
    with pytest.raises(InstanceInputError, match="needs sampled frames; run socialbench moca frames first") as exc:
        build_direct_request(inst, taxonomy, SPEC, seed=0)
    assert exc.value.field == "frames" and not isinstance(exc.value, MediaUnavailable)


def test_missing_image_is_media_unavailable_naming_the_path(tmp_path, taxonomy):
    inst = make_instance("a", media=[str(tmp_path / "gone.png")])
    with pytest.raises(MediaUnavailable, match="image file not found: .*gone.png") as exc:
        build_direct_request(inst, taxonomy, SPEC, seed=0)
    assert exc.value.field == "media"


def test_an_instance_marked_by_the_media_stage_is_media_unavailable(taxonomy):
    inst = make_instance("v", modality="video_text", transcript="A: hi", media_error="clip.mp4: truncated")
    with pytest.raises(MediaUnavailable, match="clip.mp4: truncated") as exc:
        build_direct_request(inst, taxonomy, SPEC, seed=0)
    assert exc.value.field == "media_error"


def test_answer_settings_default_to_the_papers_policy_and_refuse_unknown_values():
    paper = {"code_fence": "strict", "extra_keys": "ignore", "retries": 0}
    assert answer_settings({}) == answer_settings({"answer": {}}) == paper
    assert answer_settings({"answer": {"code_fence": "tolerate"}}) == {**paper, "code_fence": "tolerate"}
    with pytest.raises(ConfigError, match="moca.answer.code_fence: 'lenient' is not one of strict, tolerate"):
        answer_settings({"answer": {"code_fence": "lenient"}})
    with pytest.raises(ConfigError, match="moca.answer: unknown option"):
        answer_settings({"answer": {"fences": "strict"}})


@pytest.mark.parametrize(
    "answer, words",
    [
        ({"retries": -1}, "moca.answer.retries: expected a whole number from 0 to 3"),
        ({"retries": True}, "moca.answer.retries: expected a whole number from 0 to 3"),
        ({"extra_keys": "drop"}, "moca.answer.extra_keys: 'drop' is not one of ignore, invalid"),
    ],
)
def test_a_bad_answer_policy_is_a_config_error_naming_the_param(answer, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        answer_settings({"answer": answer})


# ---- option orders (params moca.robustness, issue 34) ----------------------------------------------
def _paper_draw(inst, seed):
    """The slot shuffle as the paper's protocol draws it (the code before order runs existed)."""
    import random

    rng = random.Random(f"{seed}:{inst['id']}:slots")
    out = {}
    for role in ("subject", "target"):
        options = list(inst[f"{role}_options"])
        rng.shuffle(options)
        out[role] = {f"{role}{k}": o for k, o in enumerate(options)}
    return out


def test_order_0_is_exactly_the_papers_draw():
    for k in range(10):
        inst = make_instance(f"i{k}")
        assert slot_maps(inst, 5) == slot_maps(inst, 5, 0) == _paper_draw(inst, 5)


def test_order_k_rotates_each_roles_slots_by_k_places():
    inst = make_instance("a")
    base = [list(slot_maps(inst, 5)[r].values()) for r in ("subject", "target")]
    for k in (1, 2, 3):
        got = [list(slot_maps(inst, 5, k)[r].values()) for r in ("subject", "target")]
        assert got == [b[k:] + b[:k] for b in base]
    # over the 4 orders of 4 candidates, every candidate is shown in every slot once
    shown = {slot_maps(inst, 5, k)["subject"]["subject0"] for k in range(4)}
    assert shown == set(inst["subject_options"])


def test_an_instance_has_as_many_distinct_orders_as_its_rotations_allow(taxonomy):
    from socialbench.moca.eval.prompts import Order

    two = make_instance("b", subject_options=["the speaker", "the coach"], target_options=["the player", "the crowd"])
    assert Order(3).distinct(two, taxonomy) == 2
    assert Order(3).shown(two, taxonomy) == 1  # order 3 of a 2-order item repeats order 1
    assert slot_maps(two, 5, 3) == slot_maps(two, 5, 1)
    assert Order(1).distinct(make_instance("c"), taxonomy) == 4
    mixed = make_instance("d", subject_options=["the speaker", "the coach"])  # 2 subjects, 4 targets
    assert Order(1).distinct(mixed, taxonomy) == 4


def test_an_order_run_repeating_an_earlier_order_asks_that_orders_very_request(image_instance, taxonomy):
    from socialbench.moca.eval.prompts import Order

    two = {**image_instance, "subject_options": ["the speaker", "the coach"], "target_options": ["a", "b"]}
    assert Order(2).asked_as("direct__order2", two, taxonomy) == "direct"
    assert Order(3).asked_as("direct__order3", two, taxonomy) == "direct__order1"
    again, _ = build_direct_request(two, taxonomy, SPEC, 3, method="direct", order=Order(2))
    first, _ = build_direct_request(two, taxonomy, SPEC, 3, method="direct")
    assert again == first


def test_reorder_lists_rotates_the_mechanism_and_label_lists_too_and_is_off_by_default(image_instance, taxonomy):
    from socialbench.moca.eval.prompts import Order

    names = [o.name for o in taxonomy.mechanisms["intent"]]
    slots_only, _ = build_direct_request(image_instance, taxonomy, SPEC, 3, order=Order(1))
    lists, _ = build_direct_request(image_instance, taxonomy, SPEC, 3, order=Order(1, lists=True))

    def listed(req):
        mech = next(c for c in req.task["choices"] if c["field"] == "mechanism")
        return [o["value"] for o in mech["options"]]

    assert listed(slots_only) == names
    assert listed(lists) == names[1:] + names[:1]
    system = lists.messages[0].text()
    assert system.index(f"- {names[1]}:") < system.index(f"- {names[0]}:")


# ---- D.1's text verbatim by default, the additions as a setting (issue 40, point 5) --------------
D1_TASK = (
    "[Task] Objectively classify the implicit social dynamics in the provided text–image or text–video pair."
    " This is a strict technical annotation task for sociological research."
)


def test_the_direct_prompts_task_is_d1s_text_verbatim_with_nothing_added(image_instance, taxonomy):
    req, _ = build_direct_request(image_instance, taxonomy, SPEC, seed=3)
    system = req.messages[0].text()
    assert system.startswith(D1_TASK + "\n\n[Terminology]")
    assert "The scenario is" not in system and "Boundary rule:" not in system


def test_prompt_additions_add_the_scenario_line_and_the_boundary_rule(image_instance, taxonomy):
    additions = {"scenario_question", "scenario_boundary"}
    req, _ = build_direct_request(image_instance, taxonomy, SPEC, seed=3, additions=additions)
    lines = req.messages[0].text().splitlines()
    assert lines[:2] == [D1_TASK, f"The scenario is intent: {taxonomy.questions['intent']}"]
    assert BOUNDARY_LINE in lines


def test_each_prompt_addition_fills_only_its_own_line(taxonomy):
    assert addition_values(taxonomy, "stance") == {"scenario_line": "", "boundary_line": ""}
    only = addition_values(taxonomy, "stance", {"scenario_boundary"})
    assert only == {"scenario_line": "", "boundary_line": BOUNDARY_LINE}
    with pytest.raises(ValueError, match="scenario_hint"):
        addition_values(taxonomy, "stance", {"scenario_hint"})


def test_render_leaves_out_a_line_whose_lone_placeholder_is_empty():
    text = "a $x\n$gone\n  ${also}  \nb\n"
    assert render(text, {"x": "1", "gone": "", "also": ""}, "t.txt") == "a 1\nb\n"
    assert render("$kept\n", {"kept": "v"}, "t.txt") == "v\n"


def test_render_names_the_template_of_a_placeholder_without_value():
    with pytest.raises(ConfigError, match=r"template t\.txt: placeholder \$y"):
        render("$y", {}, "t.txt")


def test_a_model_declared_text_only_gets_the_text_without_the_images(image_instance, taxonomy):
    text_only = ModelSpec(name="m", backend="hf", modalities=[])
    req, _ = build_direct_request(image_instance, taxonomy, text_only, seed=3)
    full, _ = build_direct_request(image_instance, taxonomy, SPEC, seed=3)
    assert req.images() == [] and len(full.images()) == 1
    assert "Visual: 0 image(s)" in req.messages[1].text()
    assert req.messages[1].text() == full.messages[1].text().replace("Visual: 1 image(s)", "Visual: 0 image(s)")
