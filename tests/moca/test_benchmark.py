"""MoCA as a registered benchmark (src/socialbench/moca/benchmark.py): the overall score, the settings
each method gets, the prediction record made of an answer (the answer itself: tests/moca/eval/test_answers.py), the
dev answers a prior baseline learns from. Its tables are tested in tests/moca/results/ and through
``socialbench tables`` in tests/stages/test_tables.py."""

from socialbench.core.backend import ModelSpec
from socialbench.core.benchmarks import Final, get_benchmark
from socialbench.moca.results.hooks import macro
from tests.conftest import make_instance

BENCH = get_benchmark("moca")
SPEC = ModelSpec(name="m", backend="random")


def test_the_overall_score_is_the_unweighted_mean_over_the_scenarios_rounded_half_up():
    scores = {"intent": {"holis": 10.0}, "stance": {"holis": 20.005}, "affection": {"holis": 30.0}}
    assert macro(scores, "holis") == 20.0
    assert macro({"intent": {"holis": 0.125}, "stance": {"holis": 0.125}}, "holis") == 0.13  # not 0.12


def test_the_overall_score_is_undefined_when_one_scenarios_value_is():
    assert macro({"intent": {"faith": 50.0}, "stance": {"faith": None}}, "faith") is None


def test_the_benchmark_passes_params_answer_options_to_every_method():
    section = {"answer": {"code_fence": "tolerate"}, "method_options": {"direct": {"k": 1}}}
    assert BENCH.method_settings(section, "direct") == {"k": 1, "answer": {"code_fence": "tolerate"}}
    assert BENCH.method_settings(section, "direct_constrained") == {"answer": {"code_fence": "tolerate"}}


def test_only_a_method_that_retrieves_gets_the_retrieval_settings():
    section = {"retrieval": {"retriever": "none"}}
    assert BENCH.method_settings(section, "codar")["retrieval"] == {"retriever": "none"}
    assert "retrieval" not in BENCH.method_settings(section, "direct")


def test_every_run_needs_the_images_or_the_frames_of_mocas_instances():
    needs = {(n.any_of, n.what): n.text_only for n in BENCH.run_needs({}, "direct")}
    assert needs[(("image",), "MoCA's images")] == "the text without its images"
    assert needs[(("frames",), "MoCA's video frames")] == "the text without its frames"


def test_the_record_of_a_method_that_stopped_before_answering_gives_each_field_its_error():
    inst = make_instance("i0")
    record = BENCH.prediction_record(inst, Final(error="all calls failed"), model="m", method="direct")
    assert record["field_errors"] == {k: "all calls failed" for k in ("subject", "target", "mechanism", "label")}
    assert record["mechanism"] is None and record["format"]["retries"] == 0
    assert record["gold"] == {k: inst[k] for k in ("subject", "target", "mechanism", "label")}


def test_dev_answers_give_the_mechanism_and_label_by_scenario_only():
    dev = [make_instance("d0"), make_instance("d1", scenario="stance")]
    assert BENCH.dev_answers(dev) == [
        {"group": "intent", "answers": {"mechanism": dev[0]["mechanism"], "label": dev[0]["label"]}},
        {"group": "stance", "answers": {"mechanism": dev[1]["mechanism"], "label": dev[1]["label"]}},
    ]


def test_a_moca_order_run_reads_whether_lists_are_reordered_and_no_other_robustness_key():
    section = {"answer": {}, "robustness": {"orders": 3, "models": ["a"], "methods": ["direct"], "reorder_lists": True}}
    keys = get_benchmark("moca").settings_keys(section, "direct__order1")
    assert keys == ["method_options.direct", "answer", "robustness.reorder_lists"]


def test_every_moca_run_reads_the_answer_options_and_codar_the_retriever_too():
    section = {"retrieval": {"retriever": "bm25"}, "answer": {}, "ablations": {"wo_step2": {"stages": ["observer"]}}}
    bench = get_benchmark("moca")
    assert bench.settings_keys(section, "direct") == ["method_options.direct", "answer"]
    assert bench.settings_keys(section, "codar__wo_step2") == [
        "method_options.codar",
        "ablations.wo_step2",
        "answer",
        "retrieval",
    ]
