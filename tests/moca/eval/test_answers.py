"""The answer read from a MoCA answering call (socialbench.moca.eval.answers): the four fields mapped back
from the slot ids the request showed, under the run's answer-format policy and option order."""

import json

from socialbench.core.backend import ModelSpec, Response
from socialbench.core.benchmarks import Exchange, get_benchmark
from socialbench.moca.eval.answers import final_answer
from socialbench.moca.eval.prompts import Order, build_direct_request, slot_maps
from tests.conftest import make_instance

BENCH = get_benchmark("moca")
SPEC = ModelSpec(name="m", backend="random")


def run(settings=None):
    return BENCH.method("direct", SPEC, 7, settings)


def exchange(instance, taxonomy, text, order=Order(), **response):
    """The direct answering call of ``instance`` (seed 7) with a response of ``text``; and its slot maps."""
    request, maps = build_direct_request(instance, taxonomy, SPEC, 7, ("$scenario", "$text"), order=order)
    return Exchange(request, Response(text=text, **response), "k"), maps


def answer(taxonomy, **extra):
    """A valid intent answer in slot ids, as JSON."""
    fields = {"mechanism": taxonomy.mechanism_names("intent")[0], "label": taxonomy.label_names("intent")[0]}
    return json.dumps({**fields, "subject": "subject0", "target": "target1", **extra})


def test_the_request_carries_the_slot_maps_it_shows(taxonomy, image_file):
    inst = make_instance("i0", media=[str(image_file)])
    ex, maps = exchange(inst, taxonomy, "")
    assert ex.request.shown == {"slots": maps} and maps == slot_maps(inst, 7)
    assert "shown" not in ex.request.key()  # never part of the cache key


def test_a_direct_answer_with_an_extra_key_keeps_its_four_fields(taxonomy, image_file):
    inst = make_instance("i0", media=[str(image_file)])
    ex, maps = exchange(inst, taxonomy, answer(taxonomy, why="because"))
    final = final_answer(inst, ex, run())
    assert final.error is None and final.fields["field_errors"] == {}
    assert final.fields["subject"] == maps["subject"]["subject0"] and final.fields["slots"] == maps
    assert final.fields["format"]["ignored_keys"] == ["why"]


def test_the_slot_ids_are_read_with_the_maps_of_the_order_the_request_showed(taxonomy, image_file):
    inst = make_instance("i0", media=[str(image_file)], subject_options=["a", "b", "c"])
    ex, maps = exchange(inst, taxonomy, answer(taxonomy), order=Order(1))
    final = final_answer(inst, ex, run({"order": 1}))
    assert maps == slot_maps(inst, 7, 1) != slot_maps(inst, 7, 0)
    assert final.fields["subject"] == maps["subject"]["subject0"] and final.fields["order"]["index"] == 1


def test_an_extra_key_is_a_format_failure_under_the_runs_policy(taxonomy, image_file):
    inst = make_instance("i0", media=[str(image_file)])
    ex, _ = exchange(inst, taxonomy, answer(taxonomy, why="because"))
    assert final_answer(inst, ex, run({"answer": {"extra_keys": "invalid"}})).error is not None


def test_an_unusable_answer_cut_at_max_tokens_says_so(taxonomy, image_file):
    inst = make_instance("i0", media=[str(image_file)])
    ex, _ = exchange(inst, taxonomy, '{"mechanism": "', finish_reason="length")
    assert final_answer(inst, ex, run()).error.startswith("answer truncated at max_tokens: ")


def test_a_failed_call_is_the_answers_error(taxonomy, image_file):
    inst = make_instance("i0", media=[str(image_file)])
    ex, _ = exchange(inst, taxonomy, None, error="server said no")
    assert final_answer(inst, ex, run()).error == "server said no"
