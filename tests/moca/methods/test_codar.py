"""CoDAR (socialbench.moca.methods.codar, the codar method and its ablation runs codar__<ablation>) on
the real runner, driven by the codar_script test double (a stage-aware scripted backend, not a model)."""

from __future__ import annotations

import json

import pytest

from socialbench.core.backend import ModelSpec, Response, create_backend
from socialbench.core.benchmarks import Exchange, get_benchmark
from socialbench.core.cache import RequestCache
from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.core.io import jsonl_text
from socialbench.core.runner import run_method
from socialbench.moca.eval.prompts import build_direct_request
from socialbench.moca.eval.retrieval import NO_EVIDENCE
from socialbench.moca.eval.scoring import score
from socialbench.moca.eval.stages import StageOutputError, read_stage
from socialbench.moca.methods.codar import CodarMethod
from socialbench.moca.schema.methods import CODAR, STAGES, Variant
from tests.conftest import make_instance
from tests.moca.conftest import ABLATIONS, run_with_double

WO_STEP2 = Variant(("observer", "conflict", "decoder", "checker"))
SECTION = {"method_options": {"codar": {"revision_rounds": 1}}, "ablations": ABLATIONS}


# ---- helpers ------------------------------------------------------------------------------------
@pytest.fixture
def insts(image_file):
    # distinct texts: the double's answers depend on the instance id, the cache key on the content
    return [
        make_instance(
            f"i{k}",
            scenario=("intent", "affection", "stance")[k % 3],
            media=[str(image_file)],
            text=f"Nice job, genius #{k}.",
        )
        for k in range(3)
    ]


def run(insts, tmp_path, method="codar", settings=None, cache=None, **options):
    """(records, traces, stats, backend calls, requests by id) of one run with the codar_script double;
    an ablation run gets its entry of ``ABLATIONS`` (``settings`` over it)."""
    if "__" in method:
        settings = {**get_benchmark("moca").method_settings(SECTION, method), **(settings or {})}
    cache = cache or RequestCache(tmp_path / f"{method}.sqlite")
    return run_with_double(insts, method, cache, settings, {"reject_every": 0, **options})


def calls_of(calls, iid):
    return [c.split("/", 2)[2] for c in calls if c.startswith(f"{iid}/")]


def user_text(request):
    return request.messages[1].text()


# ---- the chain, stage by stage -------------------------------------------------------------------
def test_an_accepted_instance_makes_exactly_the_six_stage_calls_in_order(insts, tmp_path):
    *_, calls, _ = run(insts[:1], tmp_path)
    assert calls == [f"i0/codar/{s}" for s in STAGES]


def test_each_stage_request_names_benchmark_method_and_stage(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path)
    for s in STAGES:
        task = seen[f"i0/codar/{s}"].task
        assert (task["benchmark"], task["method"], task["stage"]) == ("moca", "codar", s)


def test_only_the_decoder_request_carries_the_direct_prompts_choices(insts, tmp_path, taxonomy):
    *_, seen = run(insts[:1], tmp_path)
    direct, _ = build_direct_request(
        insts[0], taxonomy, ModelSpec(name="script", backend="codar_script"), 7, ("$scenario", "$text")
    )
    assert seen["i0/codar/decoder"].task["choices"] == direct.task["choices"]
    assert all("choices" not in seen[f"i0/codar/{s}"].task for s in STAGES if s != "decoder")


def test_only_the_observer_sees_the_image(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path)
    assert [len(seen[f"i0/codar/{s}"].images()) for s in STAGES] == [1, 0, 0, 0, 0, 0]


def test_each_stage_gets_the_previous_stages_parsed_outputs(insts, tmp_path):
    _, traces, *_ = run(insts[:1], tmp_path)
    outputs = {e["stage"]: e["output"] for e in traces[0]["trace"]["stages"]}
    inputs = {e["stage"]: e["inputs"] for e in traces[0]["trace"]["stages"]}
    assert inputs["conflict"]["social_context"] == outputs["context"]
    assert inputs["decoder"]["conflict"] == outputs["conflict"]
    assert inputs["checker"]["decoded"]["label"] == outputs["decoder"]["label"]
    assert inputs["context"]["social_query"] == outputs["query"]


def test_the_scenario_and_slots_first_appear_in_the_decoder(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path)
    for s in ("observer", "query", "context", "conflict"):
        text = "".join(m.text() for m in seen[f"i0/codar/{s}"].messages)
        assert "subject0" not in text and "expressive aggression" not in text
    assert "subject0" in user_text(seen["i0/codar/decoder"])


def test_the_decoder_shows_every_option_with_its_boundary_rule(insts, tmp_path, taxonomy):
    *_, seen = run(insts[:1], tmp_path)
    system = seen["i0/codar/decoder"].messages[0].text()
    for o in taxonomy.mechanisms["intent"] + taxonomy.labels["intent"]:
        assert f"- {o.name}: {o.criterion} Boundary: {o.boundary}" in system.splitlines()


def test_the_checker_shows_the_candidate_sets_only_with_extra_input_checker_candidates(insts, tmp_path, taxonomy):
    *_, plain = run(insts[:1], tmp_path / "a")
    *_, extra = run(insts[:1], tmp_path / "b", settings={"extra_inputs": ["checker_candidates"]})
    line = "- {0.name}: {0.criterion} Boundary: {0.boundary}".format(taxonomy.mechanisms["intent"][0])
    assert line not in plain["i0/codar/checker"].messages[0].text()
    assert line in extra["i0/codar/checker"].messages[0].text().splitlines()
    assert "Subject slots:" in user_text(extra["i0/codar/checker"])


def test_stage_requests_use_the_papers_json_mode_at_temperature_0_by_default(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path)
    assert all(
        r.decoding.json_object and r.decoding.json_schema is None and r.decoding.temperature == 0.0
        for r in seen.values()
    )


def test_json_mode_names_each_stages_keys_with_their_types_and_no_enums(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path)
    query = seen["i0/codar/query"].decoding.json_keys
    assert list(query) == ["entities", "questions"] and query["entities"]["type"] == "array"
    decoder = seen["i0/codar/decoder"].decoding.json_keys
    assert list(decoder) == list(CODAR.decoder_keys) and all("enum" not in v for v in decoder.values())


def test_constrained_decoding_sends_each_stages_schema_with_the_allowed_values(insts, tmp_path, taxonomy):
    *_, seen = run(insts[:1], tmp_path, settings={"decoding": "constrained"})
    schema = seen["i0/codar/decoder"].decoding.json_schema
    assert schema["required"] == list(CODAR.decoder_keys)
    assert schema["properties"]["label"]["enum"] == taxonomy.label_names("intent")


def test_media_that_cannot_be_shown_is_answered_without_a_call_and_scored_invalid(insts, tmp_path):
    inst = {**insts[0], "media": [str(tmp_path / "gone.png")]}
    records, _, _, calls, _ = run([inst], tmp_path)
    assert calls == [] and records[0]["error"].startswith("media: image file not found")


def test_the_final_answer_has_the_direct_methods_record_fields_and_scores(insts, tmp_path):
    records, *_ = run(insts, tmp_path)
    direct, *_ = run(insts, tmp_path, method="direct")  # the double answers the direct prompt too
    assert all(set(r) == set(d) and r["error"] is None and r["field_errors"] == {} for r, d in zip(records, direct))
    r = records[0]
    assert r["subject"] == r["slots"]["subject"][json.loads(r["raw"])["subject"]]
    bench = get_benchmark("moca")
    assert score(insts, records, *bench.taxonomy.as_sets())["intent"]["invalid_rate"] == 0.0


def test_the_final_record_points_at_the_decoder_call_and_the_observers_image(insts, tmp_path):
    records, traces, *_ = run(insts[:1], tmp_path)
    decoder_call = next(c for c in traces[0]["calls"] if c["stage"] == "decoder")
    assert records[0]["request_key"] == decoder_call["key"] and records[0]["raw"] == decoder_call["text"]
    assert [i["sha256"] for i in records[0]["inputs"]] != [] and records[0]["finish_reason"] == "stop"


def test_the_trace_records_every_stage_verdict_and_acceptance(insts, tmp_path):
    _, traces, *_ = run(insts[:1], tmp_path)
    t = traces[0]["trace"]
    assert [e["stage"] for e in t["stages"]] == list(STAGES)
    assert t["verdicts"] == [{"pass": 0, "status": "ACCEPTED", "breakpoint": None, "refine": "", "by": "checker"}]
    assert (t["accepted"], t["revisions"], t["retries"]) == (True, 0, 0)


# ---- revision -------------------------------------------------------------------------------------
@pytest.mark.parametrize("bp, rerun", [(1, STAGES), (2, STAGES[1:]), (3, STAGES[3:]), (4, STAGES[4:])])
def test_a_rejection_reenters_its_breakpoint_stage_and_reruns_only_the_later_ones(insts, tmp_path, bp, rerun):
    _, traces, _, calls, _ = run(insts[:1], tmp_path, reject_every=1, breakpoint=bp)
    expected = list(STAGES) + [f"{s}.rev1" for s in rerun]
    assert calls_of(calls, "i0") == expected  # the model calls
    assert [e["request_id"].split("/")[-1] for e in traces[0]["trace"]["stages"]] == expected  # and the chain's steps


def test_a_revision_keeps_the_components_before_the_breakpoint(insts, tmp_path):
    _, traces, *_ = run(insts[:1], tmp_path, reject_every=1, breakpoint=3)
    t = traces[0]["trace"]["stages"]
    first = {e["stage"]: e for e in t if e["pass"] == 0}
    conflict_rev = next(e for e in t if e["stage"] == "conflict" and e["pass"] == 1)
    assert conflict_rev["inputs"]["explicit_perception"] == first["observer"]["output"]["explicit_perception"]
    assert conflict_rev["inputs"]["social_context"] == first["context"]["output"]


def test_the_reentered_stage_gets_the_checkers_note_and_its_previous_output(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path, reject_every=1, breakpoint=3)
    text = user_text(seen["i0/codar/conflict.rev1"])
    assert "[Revision]" in text and "Checker note: Scripted note for stage 3 (i0, pass 0)." in text
    assert '"the_conflict": "Scripted cue departs from the scripted expectation."' in text


def test_stages_after_the_reentered_one_rerun_without_a_revision_block(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path, reject_every=1, breakpoint=3)
    assert "[Revision]" not in user_text(seen["i0/codar/decoder.rev1"])
    assert "[Previous check]" in user_text(seen["i0/codar/checker.rev1"])


def test_breakpoint_2_reruns_both_query_and_context_with_the_note_and_retrieval_again(insts, tmp_path):
    _, traces, _, _, seen = run(insts[:1], tmp_path, reject_every=1, breakpoint=2)
    assert all("[Revision]" in user_text(seen[f"i0/codar/{s}.rev1"]) for s in ("query", "context"))
    assert [r["pass"] for r in traces[0]["trace"]["retrieval"]] == [0, 1]


def test_an_accepted_revision_is_the_output_and_counts_one_revision(insts, tmp_path):
    records, traces, stats, _, _ = run(insts[:1], tmp_path, reject_every=1, breakpoint=4)
    t = traces[0]["trace"]
    assert [v["status"] for v in t["verdicts"]] == ["REJECTED", "ACCEPTED"] and t["accepted"] is True
    assert records[0]["request_key"] == next(
        c["key"] for c in traces[0]["calls"] if c["request_id"] == "i0/codar/decoder.rev1"
    )
    assert stats.method["revisions_mean"] == 1.0 and stats.method["acceptance_rate"] == 1.0


def test_never_accepted_outputs_the_last_decoder_answer_and_says_so(insts, tmp_path):
    records, traces, *_ = run(insts[:1], tmp_path, never_accept=["i0"], breakpoint=4)
    t = traces[0]["trace"]
    last_decoder = [c for c in traces[0]["calls"] if c["stage"] == "decoder"][-1]
    assert t["accepted"] is False and "last decoder answer" in t["not_accepted"]
    assert records[0]["raw"] == last_decoder["text"] and records[0]["error"] is None


def test_revision_rounds_bound_the_number_of_checker_passes(insts, tmp_path):
    *_, calls, _ = run(insts[:1], tmp_path, settings={"revision_rounds": 3}, never_accept=["i0"], breakpoint=4)
    assert [c for c in calls_of(calls, "i0") if c.startswith("checker")] == [
        "checker",
        "checker.rev1",
        "checker.rev2",
        "checker.rev3",
    ]


def test_revision_rounds_zero_never_revises(insts, tmp_path):
    _, traces, _, calls, _ = run(insts[:1], tmp_path, settings={"revision_rounds": 0}, reject_every=1)
    assert calls_of(calls, "i0") == list(STAGES) and traces[0]["trace"]["accepted"] is False


def test_a_scenario_invalid_decoder_answer_returns_to_the_decoder_without_calling_the_checker(insts, tmp_path):
    records, traces, _, calls, seen = run(insts[:1], tmp_path, invalid_values=["i0"])
    assert calls_of(calls, "i0") == list(STAGES[:-1]) + ["decoder.rev1", "checker.rev1"]
    verdict = traces[0]["trace"]["verdicts"][0]
    assert (verdict["by"], verdict["breakpoint"]) == ("rule", 4) and "not a mechanism" in verdict["refine"]
    assert "[Revision]" in user_text(seen["i0/codar/decoder.rev1"]) and records[0]["field_errors"] == {}


def test_an_invalid_tuple_that_the_rule_sent_back_and_the_decoder_changed_counts_as_repaired(insts, tmp_path):
    records, _, stats, *_ = run(insts[:1], tmp_path, invalid_values=["i0"])
    assert records[0]["format"]["repairs"] == ["invalid_tuple"]
    assert (stats.method["repaired_invalid_tuple"], stats.method["invalid_tuple_rejections"]) == (1.0, 1.0)


def test_a_scenario_invalid_answer_never_revised_is_scored_invalid_field_by_field(insts, tmp_path):
    records, *_ = run(insts[:1], tmp_path, settings={"revision_rounds": 0}, invalid_values=["i0"])
    assert records[0]["mechanism"] is None and "invalid for scenario" in records[0]["field_errors"]["mechanism"]
    assert records[0]["label"] is not None


# ---- unparsable outputs and failed calls -------------------------------------------------------------
RETRY_ONCE = {"answer": {"retries": 1}}


def test_by_default_an_unparsable_stage_output_is_not_retried_as_the_paper_asks_once(insts, tmp_path):
    records, _, stats, calls, _ = run(insts[:1], tmp_path, unparsable=["i0/codar/decoder"])
    assert calls_of(calls, "i0") == ["observer", "query", "context", "conflict", "decoder"]
    assert records[0]["error"] == "codar stage decoder: unparsable: Expecting value at char 0"
    assert stats.method["format_retries"] == 0.0 and stats.method["answer_errors"] == 1.0


def test_with_params_retries_an_unparsable_stage_output_is_retried_with_a_note(insts, tmp_path):
    records, traces, stats, calls, seen = run(insts[:1], tmp_path, settings=RETRY_ONCE, unparsable=["i0/codar/context"])
    assert calls_of(calls, "i0") == ["observer", "query", "context", "context.retry1", "conflict", "decoder", "checker"]
    first, retry = user_text(seen["i0/codar/context"]), user_text(seen["i0/codar/context.retry1"])
    assert retry.startswith(first) and "[Format]" in retry and "not JSON" in retry
    assert records[0]["error"] is None and stats.method["format_retries"] == 1.0


def test_an_answer_that_a_retry_saved_counts_as_repaired(insts, tmp_path):
    records, _, stats, *_ = run(insts[:1], tmp_path, settings=RETRY_ONCE, unparsable=["i0/codar/decoder"])
    assert records[0]["format"] == {"retries": 1, "repairs": ["retry"], "ignored_keys": [], "last_tuple_kept": None}
    assert (stats.method["answers_repaired"], stats.method["repaired_retry"]) == (1.0, 1.0)


def test_a_stage_output_unparsable_after_its_retries_is_the_instances_error_scored_invalid(insts, tmp_path):
    unparsable = ["i0/codar/decoder", "i0/codar/decoder.retry1"]
    records, traces, *_ = run(insts[:1], tmp_path, settings=RETRY_ONCE, unparsable=unparsable)
    r = records[0]
    assert r["error"] == "codar stage decoder: unparsable after 1 retry: Expecting value at char 0"
    assert (r["mechanism"], r["label"], r["subject"], r["target"]) == (None, None, None, None)
    assert r["field_errors"] == {k: r["error"] for k in ("mechanism", "label", "subject", "target")}
    assert traces[0]["trace"]["error_stage"] == "decoder"
    assert score(insts[:1], records, *get_benchmark("moca").taxonomy.as_sets())["intent"]["invalid_rate"] == 100.0


def test_an_unparsable_checker_verdict_does_not_void_the_decoders_valid_tuple(insts, tmp_path):
    records, traces, stats, *_ = run(insts[:1], tmp_path, unparsable=["i0/codar/checker"])
    decoder = next(e["output"] for e in traces[0]["trace"]["stages"] if e["stage"] == "decoder")
    r = records[0]
    assert r["error"] is None and r["field_errors"] == {} and json.loads(r["raw"]) == decoder
    assert traces[0]["trace"]["last_tuple_kept"]["stage"] == "checker" and traces[0]["trace"]["accepted"] is None


def test_the_run_summary_counts_the_unparsable_checker_verdicts(insts, tmp_path):
    *_, stats, _, _ = run(insts, tmp_path, unparsable=["i0/codar/checker", "i2/codar/checker"])
    assert (stats.method["checker_unparsable"], stats.method["last_tuple_kept"]) == (2.0, 2.0)


def test_a_failed_stage_in_a_revision_pass_keeps_the_last_tuple(insts, tmp_path):
    records, traces, stats, *_ = run(
        insts[:1], tmp_path, reject_every=1, breakpoint=1, fail_ids=["i0/codar/observer.rev1"]
    )
    assert records[0]["error"] is None and records[0]["mechanism"] is not None
    assert traces[0]["trace"]["last_tuple_kept"]["stage"] == "observer" and stats.method["checker_unparsable"] == 0.0


def test_a_failed_call_is_the_instances_error_without_a_retry_and_the_others_go_on(insts, tmp_path):
    records, _, _, calls, _ = run(insts[:2], tmp_path, fail_ids=["i0/codar/query"])
    assert (
        calls_of(calls, "i0") == ["observer", "query"]
        and records[0]["error"] == "codar stage query: call failed: scripted failure"
    )
    assert records[1]["error"] is None


def test_a_chance_baseline_answers_the_first_free_text_stage_with_an_error_not_a_crash(insts, tmp_path):
    spec = ModelSpec(name="random", backend="random")
    bench = get_benchmark("moca")
    records, *_ = run_method(
        bench,
        bench.method("codar", spec, 7),
        insts[:1],
        spec=spec,
        cache=RequestCache(tmp_path / "r.sqlite"),
        seed=7,
        progress=False,
    )
    assert records[0]["error"].startswith("codar stage observer: call failed")


def test_a_baseline_can_answer_the_decoder_request_from_its_choices(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path)
    resp = create_backend(ModelSpec(name="random", backend="random")).complete(seen["i0/codar/decoder"])
    assert resp.error is None and set(json.loads(resp.text)) == {"mechanism", "label", "subject", "target"}


def test_a_video_instance_without_frames_stops_the_run_naming_the_field(tmp_path):
    inst = make_instance("v0", modality="video_text", media=["clip.mp4"])
    with pytest.raises(DataError, match="v0.*frames"):
        run([inst], tmp_path)


# ---- intermediate representations read tolerantly (C.2), the decoder as the direct answer (D.1) -------------
def test_an_observer_caption_in_prose_goes_on_as_text_and_the_instance_is_answered(insts, tmp_path):
    records, traces, stats, _, seen = run(insts[:1], tmp_path, unparsable=["i0/codar/observer"])
    t = traces[0]["trace"]
    assert records[0]["error"] is None and records[0]["field_errors"] == {}
    assert "Explicit perception: Sure! Here is my analysis, not as JSON." in user_text(seen["i0/codar/query"])
    assert t["unstructured"] == [{"stage": "observer", "pass": 0, "reason": "not JSON (Expecting value at char 0)"}]
    assert t["stages"][0]["output"] == "Sure! Here is my analysis, not as JSON." and t["stages"][0]["unstructured"]
    assert (stats.method["unstructured_outputs"], stats.method["instances_with_unstructured"]) == (1.0, 1.0)


@pytest.mark.parametrize("stage", ["context", "conflict"])
def test_a_context_or_conflict_in_prose_goes_on_as_text(insts, tmp_path, stage):
    records, traces, *_ = run(insts[:1], tmp_path, unparsable=[f"i0/codar/{stage}"])
    assert records[0]["error"] is None and [u["stage"] for u in traces[0]["trace"]["unstructured"]] == [stage]


def test_a_query_in_prose_goes_on_as_text_and_nothing_is_looked_up(insts, tmp_path):
    records, traces, _, _, seen = run(insts[:1], tmp_path, unparsable=["i0/codar/query"])
    assert records[0]["error"] is None
    assert traces[0]["trace"]["retrieval"][0]["status"] == "unstructured_query"
    assert "Social query: Sure! Here is my analysis, not as JSON." in user_text(seen["i0/codar/context"])


def test_a_decoder_answer_without_its_substeps_is_scored_and_the_omission_counted(insts, tmp_path):
    records, traces, stats, *_ = run(insts[:1], tmp_path, malformed_rate=1.0)  # every intermediate call broken
    assert records[0]["error"] is None and records[0]["field_errors"] == {}
    assert traces[0]["trace"]["substeps_missing"] == [{"pass": 0, "keys": ["counterfactual_cost", "conflict_utility"]}]
    assert stats.method["substeps_missing"] == 1.0 and stats.method["unknown_routes"] >= 0.0


def test_the_decoder_answer_is_read_under_the_direct_answers_policy(insts, tmp_path):
    records, *_ = run(insts[:1], tmp_path, settings={"answer": {"extra_keys": "invalid"}}, malformed_rate=0.0)
    assert records[0]["error"] is None  # the substeps are the decoder's own keys, not extra ones


def test_a_checker_verdict_in_prose_keeps_the_decoders_tuple(insts, tmp_path):
    records, traces, *_ = run(insts[:1], tmp_path, unparsable=["i0/codar/checker"])
    assert records[0]["error"] is None and traces[0]["trace"]["last_tuple_kept"]["stage"] == "checker"


def _no_answer(records):
    return sum(1 for r in records if r["error"])


@pytest.fixture
def many(image_file):
    return [
        make_instance(
            f"m{k}", scenario=("intent", "affection", "stance")[k % 3], media=[str(image_file)], text=f"T {k}."
        )
        for k in range(24)
    ]


def test_with_only_intermediate_stages_malformed_codar_answers_as_often_as_direct(many, tmp_path):
    codar, _, stats, *_ = run(many, tmp_path, malformed_rate=0.3, reject_every=3)
    direct, *_ = run(many, tmp_path, method="direct", malformed_rate=0.3)
    assert stats.method["unstructured_outputs"] > 0  # the double did break them
    assert _no_answer(codar) == _no_answer(direct) == 0


def test_with_every_call_malformed_at_one_rate_codar_answers_no_less_often_than_direct(many, tmp_path):
    opts = {"malformed_rate": 0.3, "malformed_calls": "all"}
    codar, *_ = run(many, tmp_path, reject_every=3, **opts)
    direct, *_ = run(many, tmp_path, method="direct", **opts)
    assert 0 < _no_answer(direct) and _no_answer(codar) <= _no_answer(direct)


# ---- what each stage sees (D.2 [Input]) ------------------------------------------------------------------
def test_by_default_each_stage_sees_what_d2_lists(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path)
    text = {s: user_text(seen[f"i0/codar/{s}"]) for s in STAGES}
    assert "Text:" in text["observer"] and all("Text:" not in text[s] for s in STAGES[1:])
    assert "Explicit perception:" in text["query"] and "Social query:" in text["context"]
    assert "Social context:" in text["conflict"]
    assert "Conflict analysis:" in text["decoder"] and "Subject slots:" in text["decoder"]
    assert "Explicit perception:" not in text["decoder"] and "Social context:" not in text["decoder"]
    checker = text["checker"]
    assert all(h in checker for h in ("Explicit perception:", "Social context:", "The conflict:", "Decoded answer:"))
    assert all(
        h not in checker for h in ("Social query:", "Retrieved evidence:", "Conflict analysis:", "counterfactual_cost")
    )


def test_the_checker_sees_each_slot_id_with_its_candidate(insts, tmp_path):
    records, _, _, _, seen = run(insts[:1], tmp_path)
    answer = json.loads(records[0]["raw"])
    assert f"subject: {answer['subject']} ({records[0]['subject']})" in user_text(seen["i0/codar/checker"])


@pytest.mark.parametrize(
    "extra, stage, heading",
    [
        ("text", "query", "Text: Nice job, genius #0."),
        ("text", "checker", "Text: Nice job, genius #0."),
        ("decoder_chain", "decoder", "Explicit perception:"),
        ("decoder_chain", "decoder", "Social context:"),
        ("checker_chain", "checker", "Conflict analysis:"),
        ("checker_chain", "checker", "counterfactual_cost:"),
        ("checker_chain", "checker", "Retrieved evidence:"),
    ],
)
def test_each_extra_input_adds_what_it_names(insts, tmp_path, extra, stage, heading):
    *_, seen = run(insts[:1], tmp_path, settings={"extra_inputs": [extra]})
    assert heading in user_text(seen[f"i0/codar/{stage}"])


def test_an_input_block_a_stage_does_not_see_leaves_no_empty_line(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path)
    assert all("\n\n" not in user_text(r) for r in seen.values())


# ---- the scenario-invalid rule and the revision rounds (C.3) ----------------------------------------------
@pytest.mark.parametrize("rounds, decoder_calls", [(0, 1), (1, 2), (2, 3)])
def test_the_invalid_tuple_rule_uses_one_of_the_revision_rounds(insts, tmp_path, rounds, decoder_calls):
    *_, calls, _ = run(
        insts[:1], tmp_path, settings={"revision_rounds": rounds}, invalid_values=["i0"], never_accept=["i0"]
    )
    assert len([c for c in calls_of(calls, "i0") if c.startswith("decoder")]) == decoder_calls


# ---- ablations (Table 5): variant runs codar__<ablation> --------------------------------------------
@pytest.mark.parametrize(
    "method, stages",
    [
        ("codar__wo_step2", ["observer", "conflict", "decoder", "checker"]),
        ("codar__wo_steps34", ["observer", "query", "context", "decoder", "checker"]),
        ("codar__wo_step5", ["observer", "query", "context", "conflict", "decoder"]),
    ],
)
def test_each_ablation_runs_its_stages_in_order(insts, tmp_path, method, stages):
    records, *_, calls, _ = run(insts[:1], tmp_path, method=method)
    assert calls == [f"i0/{method}/{s}" for s in stages] and records[0]["error"] is None


def test_params_declares_table_5s_ablations_with_the_papers_stages():
    from socialbench.core.config import load_params

    moca = load_params("params.yaml")["moca"]
    assert moca["ablations"] == ABLATIONS
    assert [m for m in moca["methods"] if "__" in m] == [f"codar__{a}" for a in ABLATIONS]


def test_without_step_2_no_stage_sees_a_social_context(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path, method="codar__wo_step2")
    assert all("fact:" not in user_text(r) and "Social query" not in user_text(r) for r in seen.values())


def test_without_step_2_the_checker_may_not_return_to_stage_2(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path, method="codar__wo_step2")
    assert seen["i0/codar__wo_step2/checker"].task["breakpoints"] == [1, 3, 4]
    with pytest.raises(StageOutputError, match=r"one of \[1, 3, 4\]"):
        read_stage("checker", '{"status": "REJECTED", "breakpoint": 2, "refine": "x"}', WO_STEP2)


def test_without_steps_3_and_4_the_answer_has_the_direct_keys_and_no_conflict(insts, tmp_path):
    records, *_, seen = run(insts[:1], tmp_path, method="codar__wo_steps34")
    assert list(json.loads(records[0]["raw"])) == ["mechanism", "label", "subject", "target"]
    assert "the_conflict" not in user_text(seen["i0/codar__wo_steps34/decoder"])


def test_without_steps_3_and_4_a_rejection_at_4_reruns_the_answering_stage(insts, tmp_path):
    *_, calls, _ = run(insts[:1], tmp_path, method="codar__wo_steps34", reject_every=1, breakpoint=4)
    assert calls_of(calls, "i0")[-2:] == ["decoder.rev1", "checker.rev1"]


def test_without_step_5_nothing_is_checked_or_revised(insts, tmp_path):
    records, traces, stats, *_ = run(insts[:1], tmp_path, method="codar__wo_step5", invalid_values=["i0"])
    assert traces[0]["trace"]["verdicts"] == [] and traces[0]["trace"]["accepted"] is None
    assert records[0]["mechanism"] is None and "acceptance_rate" not in stats.method


def test_an_ablation_reads_its_own_templates_and_codars_for_the_rest():
    bench = get_benchmark("moca")
    assert bench.template("codar__wo_step2", "conflict.system.txt") != bench.template("codar", "conflict.system.txt")
    assert bench.template("codar__wo_step2", "observer.system.txt") == bench.template("codar", "observer.system.txt")


WO_STEP3 = {"stages": ["observer", "query", "context", "decoder", "checker"], "retrieval": {"retriever": "none"}}


def test_a_new_ablation_whose_stages_change_an_answer_without_templates_of_its_own_is_refused_naming_the_run():
    """Issue 38: `infer --method codar__wo_step3` (no conflict stage, no templates/codar/wo_step3/) went
    ahead with CoDAR's decoder prompt, which asks for Step 4's substeps about a conflict the run never has."""
    with pytest.raises(ConfigError) as err:
        get_benchmark("moca").method("codar__wo_step3", ModelSpec(name="m", backend="codar_script"), 1, WO_STEP3)
    message = str(err.value)
    assert message.startswith(
        "moca.ablations.wo_step3: the method's templates (templates/codar/) do not fit its stages"
    )
    assert "decoder.system.txt asks for counterfactual_cost, conflict_utility" in message
    assert "checker.system.txt offers breakpoint 3 (conflict)" in message and message.endswith("(run codar__wo_step3)")


def test_a_template_that_cannot_render_at_run_time_names_the_run_and_its_params_key(insts, monkeypatch):
    bench = get_benchmark("moca")
    method = bench.method("codar__wo_step5", ModelSpec(name="m", backend="codar_script"), 1, ABLATIONS["wo_step5"])
    real = type(bench).template
    monkeypatch.setattr(type(bench), "template", lambda self, m, n: real(self, m, n) + "\n$nope\n")
    with pytest.raises(ConfigError, match=r"^moca\.ablations\.wo_step5 \(run codar__wo_step5\): template .*\$nope"):
        method.step(insts[0], [])


def test_an_ablation_inherits_codars_options_and_ignores_those_of_stages_it_leaves_out(insts, tmp_path):
    *_, traces, _, _, _ = run(insts[:1], tmp_path, method="codar__wo_step5", settings={"revision_rounds": 2})
    assert traces[0]["trace"]["revision_rounds"] == 0


@pytest.mark.parametrize(
    "stages, problem",
    [
        (["observer", "conflict", "checker"], "decoder cannot be left out"),
        (["observer", "query", "conflict", "decoder"], "query and context"),
        (["observer", "decoder", "conflict"], "in that order"),
    ],
)
def test_an_ablation_with_an_impossible_chain_is_refused_naming_its_stages(insts, tmp_path, stages, problem):
    with pytest.raises(ConfigError, match=rf"moca.ablations.wo_step5.stages: .*{problem}"):
        run(insts[:1], tmp_path, method="codar__wo_step5", settings={"stages": stages})


def test_params_refuse_an_ablation_naming_a_stage_that_does_not_exist():
    from socialbench.core.config import validate_params

    bad = {"x": {"table": "table5", "label": "x", "stages": ["observer", "dreamer", "decoder"]}}
    with pytest.raises(ConfigError, match=r"moca.ablations.x.stages.1: 'dreamer' is not one of"):
        validate_params({"models": {"r": {"backend": "random"}}, "moca": {"ablations": bad}})


def test_params_refuse_an_unknown_key_in_an_ablation():
    from socialbench.core.config import validate_params

    bad = {"x": {"table": "table5", "label": "x", "stages": ["observer", "decoder"], "rounds": 2}}
    with pytest.raises(ConfigError, match=r"moca.ablations.x: .*'rounds' was unexpected"):
        validate_params({"models": {"r": {"backend": "random"}}, "moca": {"ablations": bad}})


# ---- prompt hash --------------------------------------------------------------------------------------
def prompt_hashes(bench, runs=("codar", "codar__wo_step5", "codar__wo_step2")):
    return {r: bench.prompt_hash(r, bench.method_settings(SECTION, r)) for r in runs}


def test_the_prompt_hash_covers_every_template_it_uses(monkeypatch):
    bench = get_benchmark("moca")
    before = prompt_hashes(bench)
    real = type(bench).template
    monkeypatch.setattr(
        type(bench), "template", lambda self, m, n: real(self, m, n) + ("!" if n == "observer.system.txt" else "")
    )
    after = prompt_hashes(bench)
    assert all(before[m] != after[m] for m in before)  # every variant runs the observer


def test_an_ablations_prompt_hash_ignores_templates_it_does_not_use(monkeypatch):
    bench = get_benchmark("moca")
    before = prompt_hashes(bench)
    real = type(bench).template
    monkeypatch.setattr(
        type(bench), "template", lambda self, m, n: real(self, m, n) + ("!" if n == "checker.system.txt" else "")
    )
    after = prompt_hashes(bench)
    assert after["codar__wo_step5"] == before["codar__wo_step5"] and after["codar"] != before["codar"]


def test_an_ablations_prompt_hash_covers_its_own_template_files(monkeypatch):
    bench = get_benchmark("moca")
    before = prompt_hashes(bench)
    real = type(bench).template
    own = "templates/codar/wo_step2"
    monkeypatch.setattr(
        type(bench),
        "template",
        lambda self, m, n: real(self, m, n) + ("!" if self.template_folder(m, n) == own else ""),
    )
    after = prompt_hashes(bench)
    assert after["codar__wo_step2"] != before["codar__wo_step2"]
    assert after["codar"] == before["codar"] and after["codar__wo_step5"] == before["codar__wo_step5"]


# ---- settings ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "settings, words",
    [
        ({"revision_rounds": -1}, "revision_rounds: expected a whole number >= 0"),
        ({"revision_rounds": True}, "revision_rounds: expected a whole number >= 0"),
        ({"revision_rounds": 10}, "could take more than the runner's 64 rounds"),
        ({"max_tokens": 0}, "max_tokens: expected a whole number >= 1"),
        ({"rounds": 2}, "unknown key(s) ['rounds']"),
        ({"retriever": "bm25"}, "unknown key(s) ['retriever']; CoDAR takes"),
        ({"decoding": "guided"}, "decoding: 'guided' is not one of json_object, json_schema, constrained"),
        ({"extra_inputs": ["everything"]}, "extra_inputs: 'everything' is not one of text, decoder_chain"),
        ({"extra_inputs": "text"}, "extra_inputs: expected a list of distinct names"),
    ],
)
def test_bad_settings_are_a_config_error_naming_the_key(settings, words):
    with pytest.raises(ConfigError, match="moca.method_options.codar") as err:
        get_benchmark("moca").method("codar", ModelSpec(name="m", backend="codar_script"), 1, settings)
    assert words in str(err.value)


def test_max_tokens_setting_applies_to_every_stage(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path, settings={"max_tokens": 2048})
    assert {r.decoding.max_tokens for r in seen.values()} == {2048}


# ---- retrieval ----------------------------------------------------------------------------------------
def test_without_a_retriever_a_web_search_route_is_answered_from_model_prior_and_the_trace_says_so(insts, tmp_path):
    _, traces, _, _, seen = run(insts[:1], tmp_path, route="web_search")
    r = traces[0]["trace"]["retrieval"][0]
    assert (r["status"], r["route"], r["evidence"]) == ("no_retriever", "model_prior", [])
    assert "no retriever configured" in r["note"] and r["requested"] == [
        {"name": "entity of i0", "route": "web_search"}
    ]
    assert f"Retrieved evidence: {NO_EVIDENCE}" in user_text(seen["i0/codar/context"])


# ---- stage parsing (pure) ------------------------------------------------------------------------------


def test_the_code_fence_param_reaches_every_stage(insts, tmp_path):
    bench = get_benchmark("moca")
    method = bench.method(
        "codar", ModelSpec(name="m", backend="codar_script"), 1, {"answer": {"code_fence": "tolerate"}}
    )
    assert method.code_fence == "tolerate"


def test_the_answer_policy_reaches_codar_from_params_moca_answer():
    method = get_benchmark("moca").method(
        "codar", ModelSpec(name="m", backend="codar_script"), 1, {"answer": {"retries": 2, "extra_keys": "invalid"}}
    )
    assert (method.retries, method.extra_keys, method.code_fence) == (2, "invalid", "strict")


# ---- runs as a whole ------------------------------------------------------------------------------------
def test_two_runs_write_the_same_bytes(insts, tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
    a = run(insts, tmp_path / "a", reject_every=2, unparsable=["i1/codar/query"])
    b = run(insts, tmp_path / "b", reject_every=2, unparsable=["i1/codar/query"])
    assert jsonl_text(a[0]) == jsonl_text(b[0]) and jsonl_text(a[1]) == jsonl_text(b[1])


def test_a_warm_rerun_makes_no_call_and_gives_the_same_records(insts, tmp_path):
    cache = RequestCache(tmp_path / "c.sqlite")
    first = run(insts, tmp_path, cache=cache, reject_every=1, unparsable=["i2/codar/observer"])
    second = run(insts, tmp_path, cache=cache, reject_every=1, unparsable=["i2/codar/observer"])
    assert first[3] != [] and second[3] == [] and second[2].cache_misses == 0
    assert jsonl_text(first[0]) == jsonl_text(second[0])


def test_rounds_go_out_together_across_instances(insts, tmp_path):
    *_, stats, calls, _ = run(insts, tmp_path)
    assert stats.rounds == len(STAGES) and calls[:3] == ["i0/codar/observer", "i1/codar/observer", "i2/codar/observer"]


def test_the_run_summary_gives_revisions_acceptance_and_retries(insts, tmp_path):
    *_, stats, _, _ = run(
        insts, tmp_path, settings=RETRY_ONCE, never_accept=["i0"], breakpoint=4, unparsable=["i1/codar/decoder"]
    )
    assert stats.method == {
        "format_retries": 1.0,
        "answers_repaired": 1.0,
        "repaired_retry": 1.0,
        "repaired_code_fence": 0.0,
        "repaired_invalid_tuple": 0.0,
        "answers_with_ignored_keys": 0.0,
        "answer_errors": 0.0,
        "invalid_rate": 0.0,
        "last_tuple_kept": 0.0,
        "checker_unparsable": 0.0,
        "unstructured_outputs": 0.0,
        "instances_with_unstructured": 0.0,
        "unknown_routes": 0.0,
        "substeps_missing": 0.0,
        "invalid_tuple_rejections": 0.0,
        "revisions_mean": round(1 / 3, 4),
        "acceptance_rate": round(2 / 3, 4),
        "not_accepted": 1.0,
    }


def test_per_stage_calls_and_tokens_are_accounted(insts, tmp_path):
    *_, stats, _, _ = run(insts, tmp_path)
    assert set(stats.stages) == set(STAGES)
    assert all(s["calls"] == 3 and s["input_tokens"] > 0 and s["output_tokens"] > 0 for s in stats.stages.values())


def test_a_replay_that_does_not_match_the_chain_is_an_error_not_a_wrong_answer(insts):
    method = get_benchmark("moca").method("codar", ModelSpec(name="m", backend="codar_script"), 1)
    (request,) = method.step(insts[0], [])
    stray = Exchange(request.__class__("i0/codar/query", request.messages, request.task), Response(text="{}"), "k")
    with pytest.raises(SocialbenchError, match="replay out of step: expected i0/codar/observer"):
        method.step(insts[0], [[stray]])


def test_with_invalid_tuple_checker_a_scenario_invalid_tuple_goes_to_the_checker_like_any_other(insts, tmp_path):
    records, traces, _, calls, _ = run(
        insts[:1], tmp_path, settings={"invalid_tuple": "checker"}, invalid_values=["i0"]
    )
    assert calls_of(calls, "i0") == list(STAGES) and traces[0]["trace"]["verdicts"][0]["by"] == "checker"
    assert records[0]["mechanism"] is None and records[0]["format"]["repairs"] == []


def test_an_unknown_invalid_tuple_setting_is_a_config_error():
    with pytest.raises(
        ConfigError, match="moca.method_options.codar.invalid_tuple: 'model' is not one of rule, checker"
    ):
        get_benchmark("moca").method(
            "codar", ModelSpec(name="m", backend="codar_script"), 1, {"invalid_tuple": "model"}
        )


# ---- what the viewer shows of a chain's trace (CodarMethod.trace_section) ---------------------------
# The shape CoDAR's trace has (socialbench/moca/methods/codar.py): stage passes with inputs, output, error;
# the verdicts again in their own list (with the rule's verdict on an invalid tuple); `accepted`
# and, when never accepted, `not_accepted` with the reason.
CODAR_TRACE = {
    "accepted": False,
    "final_pass": 1,
    "method": "codar",
    "revision_rounds": 1,
    "retries": 1,
    "revisions": 1,
    "not_accepted": "no ACCEPTED within 1 revision round(s): the output is the last decoder answer",
    "retrieval": [{"pass": 0, "routes": ["model_prior"], "retrieved": False}],
    "stages": [
        {
            "stage": "observer",
            "pass": 0,
            "attempt": 1,
            "request_id": "x/codar/observer",
            "inputs": {},
            "output": {"caption": "c"},
            "error": None,
        },
        {
            "stage": "decoder",
            "pass": 0,
            "attempt": 1,
            "request_id": "x/codar/decoder",
            "inputs": {"The_Conflict": "praise vs failure"},
            "output": None,
            "error": "not one JSON object",
        },
        {
            "stage": "decoder",
            "pass": 0,
            "attempt": 2,
            "request_id": "x/codar/decoder.retry1",
            "inputs": {"The_Conflict": "praise vs failure"},
            "output": {"label": "mock"},
            "error": None,
        },
        {
            "stage": "checker",
            "pass": 0,
            "attempt": 1,
            "request_id": "x/codar/checker",
            "inputs": {},
            "output": {"status": "REJECTED", "breakpoint": 1, "refine": "unsupported evidence"},
            "error": None,
        },
        {
            "stage": "observer",
            "pass": 1,
            "attempt": 1,
            "request_id": "x/codar/observer.rev1",
            "inputs": {"revision": "r"},
            "output": {"caption": "c2"},
            "error": None,
        },
        {
            "stage": "decoder",
            "pass": 1,
            "attempt": 1,
            "request_id": "x/codar/decoder.rev1",
            "inputs": {},
            "output": {"label": "nonsense"},
            "error": None,
        },
    ],
    "stages_run": ["observer", "decoder", "checker"],
    "verdicts": [
        {"pass": 0, "status": "REJECTED", "breakpoint": 1, "refine": "unsupported evidence", "by": "checker"},
        {"pass": 1, "status": "REJECTED", "breakpoint": 4, "refine": "one value per field", "by": "rule"},
    ],
}


def test_the_viewer_takes_codars_verdicts_from_its_own_list_not_the_copies_in_the_stages():
    s = CodarMethod.trace_section(CODAR_TRACE)
    assert s.title_marks == (("REJECTED → stage 1", "bad"), ("REJECTED → stage 4", "bad"))


def test_a_chain_never_accepted_is_tagged_not_accepted_and_marked_in_the_rows_header():
    s = CodarMethod.trace_section(CODAR_TRACE)
    assert s.tags == ("revised", "not-accepted") and s.marks == (("REJECTED → stage 4", "bad"), ("not accepted", "bad"))
    assert CodarMethod.trace_filter == "checker"


def test_the_viewer_shows_each_of_codars_stage_passes_with_its_retries():
    titles = [p.title for p in CodarMethod.trace_section(CODAR_TRACE).passes]
    assert titles[:4] == ["observer · pass 0", "decoder · pass 0", "decoder · pass 0 · attempt 2", "checker · pass 0"]


# ---- D.2's text by default, the additions as settings (issue 40, points 4 and 5) -------------------
def test_the_context_synthesizer_answers_d2s_three_fields_by_default(insts, tmp_path):
    _, traces, _, _, seen = run(insts[:1], tmp_path)
    context = seen["i0/codar/context"]
    assert context.task["keys"] == ["fact", "connection", "social_norm"]
    assert "exactly three fields: fact, connection, social_norm." in context.messages[0].text()
    assert "uncertainty:" not in user_text(seen["i0/codar/conflict"])
    assert "uncertainty:" not in user_text(seen["i0/codar/checker"])
    assert traces[0]["trace"]["context_uncertainty"] is False


def test_setting_context_uncertainty_asks_for_a_fourth_field_that_later_stages_see(insts, tmp_path):
    _, traces, _, _, seen = run(insts[:1], tmp_path, settings={"context_uncertainty": True})
    context = seen["i0/codar/context"]
    assert context.task["keys"] == ["fact", "connection", "social_norm", "uncertainty"]
    assert "Make uncertainty explicit in a fourth field, uncertainty." in context.messages[0].text()
    assert "uncertainty: Rests on the script only." in user_text(seen["i0/codar/conflict"]).splitlines()
    assert "uncertainty: Rests on the script only." in user_text(seen["i0/codar/checker"]).splitlines()
    assert traces[0]["trace"]["context_uncertainty"] is True


def test_the_decoder_and_checker_add_neither_scenario_line_nor_boundary_rule_by_default(insts, tmp_path):
    *_, seen = run(insts[:1], tmp_path, settings={"extra_inputs": ["checker_candidates"]})
    for stage in ("decoder", "checker"):
        system = seen[f"i0/codar/{stage}"].messages[0].text()
        assert "The scenario is" not in system and "Boundary rule:" not in system, stage


def test_prompt_additions_put_the_scenario_line_and_the_boundary_rule_into_decoder_and_checker(insts, tmp_path):
    settings = {"prompt_additions": ["scenario_question", "scenario_boundary"], "extra_inputs": ["checker_candidates"]}
    _, traces, _, _, seen = run(insts[:1], tmp_path, settings=settings)
    decoder, checker = (seen[f"i0/codar/{s}"].messages[0].text().splitlines() for s in ("decoder", "checker"))
    line = "The scenario is intent: What interactional outcome does the subject seek to produce?"
    assert line in decoder and line in checker
    assert any(x.startswith("Boundary rule: Affection asks what is felt") for x in decoder)
    assert any(x.startswith("Boundary rule: Affection asks what is felt") for x in checker)
    assert traces[0]["trace"]["prompt_additions"] == ["scenario_boundary", "scenario_question"]


def test_an_unknown_prompt_addition_is_refused_naming_the_setting(insts, tmp_path):
    with pytest.raises(ConfigError, match=r"moca\.method_options\.codar\.prompt_additions"):
        run(insts[:1], tmp_path, settings={"prompt_additions": ["scenario_hint"]})
