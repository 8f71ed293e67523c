"""spec.methods: the method settings checked when params load, without method or evaluation code."""

from __future__ import annotations

import subprocess
import sys

import pytest

from socialbench.core.benchmarks import get_benchmark
from socialbench.moca.schema.methods import HOOKS, MethodHooks


def test_loading_params_imports_no_moca_method_or_evaluation_module():
    # every stage command loads params: MeetingToM's too, whose code deps hold no MoCA eval/ or methods/
    code = (
        "import sys; from socialbench.core.config import load_params; load_params('params.yaml');"
        "print(sorted(m for m in sys.modules if m.startswith(('socialbench.moca.eval.', 'socialbench.moca.methods'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_declared_hooks_name_methods_of_moca():
    assert set(HOOKS) <= set(get_benchmark("moca").method_names())


@pytest.mark.parametrize("name", get_benchmark("moca").method_names())
def test_each_method_class_has_the_hooks_params_loading_uses(name):
    cls, declared = get_benchmark("moca").method_class(name), HOOKS.get(name, MethodHooks())
    assert cls.reads == declared.reads
    settings = {"answer": {}, "retrieval": {"retriever": "none"}} if "retrieval" in cls.reads else {"answer": {}}
    expected = None if declared.check is None else declared.check(name, settings)
    assert cls.check_settings(name, settings) == expected


def test_no_retrieval_block_means_core_retrievals_none():
    from socialbench.core.retrieval import NONE
    from socialbench.moca.schema.methods import RetrievalSettings

    assert RetrievalSettings.parse(None).retriever == NONE


# ---- a stage's system template held to the run's stages (issue 38) ----------------------------------------
def test_the_decoders_answer_line_must_ask_for_the_keys_the_run_reads():
    from socialbench.moca.schema.methods import CODAR, Variant, answer_line_problem

    six = (
        '[Output] ...\n{"counterfactual_cost": "<i>", "conflict_utility": "<ii>", "subject": "<s>", "target": "<t>",'
        ' "mechanism": "<m>", "label": "<l>"}\n'
    )
    without_conflict = Variant.of(("observer", "query", "context", "decoder", "checker"))
    assert answer_line_problem(CODAR, "decoder", six) is None
    assert answer_line_problem(without_conflict, "decoder", six) == (
        "asks for counterfactual_cost, conflict_utility, which the run's decoder does not give"
    )
    four = '{"mechanism": "<m>", "label": "<l>", "subject": "<s>", "target": "<t>"}'
    assert "does not ask for counterfactual_cost, conflict_utility" in answer_line_problem(CODAR, "decoder", four)


def test_the_checker_may_not_offer_a_breakpoint_of_a_stage_the_run_leaves_out():
    from socialbench.moca.schema.methods import Variant, answer_line_problem

    line = '{"status": "ACCEPTED" | "REJECTED", "breakpoint": null | 1 | 2 | 3 | 4, "refine": "<r>"}'
    without_step2 = Variant.of(("observer", "conflict", "decoder", "checker"))
    assert answer_line_problem(without_step2, "checker", line) == (
        "offers breakpoint 2 (query/context), a stage the run leaves out"
    )
    assert answer_line_problem(without_step2, "checker", line.replace(" | 2", "")) is None


def test_only_the_outermost_keys_of_an_answer_line_count_and_a_template_without_one_is_not_checked():
    from socialbench.moca.schema.methods import CODAR, answer_line_problem

    query = '{"entities": [{"name": "<e>", "route": "model_prior"}], "questions": ["<q>"]}'
    assert answer_line_problem(CODAR, "query", query) is None
    assert answer_line_problem(CODAR, "decoder", "Answer in JSON.") is None


def test_every_shipped_ablation_and_the_chain_fit_their_templates(repo_root):
    from socialbench.core.benchmarks import get_benchmark
    from socialbench.core.config import load_params
    from socialbench.moca.methods.codar import parse_settings

    bench, section = get_benchmark("moca"), load_params(repo_root / "params.yaml")["moca"]
    for run in ["codar", *(f"codar__{a}" for a in section["ablations"])]:
        checked = parse_settings(run, bench.method_settings(section, run), create_retriever=False)
        assert bench.run_template_problems(run, checked) == [], run


# ---- settings of issue 40 (points 4 and 5) ---------------------------------------------------------
def test_codars_context_has_d2s_three_fields_and_its_own_template_by_default():
    from socialbench.moca.schema.methods import CODAR, stage_variant

    v = stage_variant("codar", {})
    assert v == CODAR and v.keys("context") == ("fact", "connection", "social_norm") and not v.uncertainty
    assert v.system_file("context") == "context.system.txt"


def test_context_uncertainty_adds_the_fourth_field_and_switches_the_context_template():
    from socialbench.moca.schema.methods import stage_variant

    v = stage_variant(
        "codar__wo_step5", {"context_uncertainty": True, "stages": ["observer", "query", "context", "decoder"]}
    )
    assert v.keys("context") == ("fact", "connection", "social_norm", "uncertainty")
    assert "context_uncertainty.system.txt" in v.templates() and "context.system.txt" not in v.templates()
    assert v.stages == ("observer", "query", "context", "decoder")


def test_context_uncertainty_must_be_a_boolean():

    from socialbench.core.errors import ConfigError
    from socialbench.moca.schema.methods import stage_variant

    with pytest.raises(ConfigError, match=r"moca\.method_options\.codar\.context_uncertainty: expected true or false"):
        stage_variant("codar", {"context_uncertainty": "yes"})


def test_direct_settings_take_prompt_additions_and_refuse_other_keys():

    from socialbench.core.errors import ConfigError
    from socialbench.moca.schema.methods import direct_settings

    assert direct_settings("direct", {})["prompt_additions"] == frozenset()
    got = direct_settings("direct__order1", {"prompt_additions": ["scenario_boundary"], "order": 1})
    assert got["prompt_additions"] == {"scenario_boundary"}
    with pytest.raises(ConfigError, match=r"moca\.method_options\.direct_constrained\.prompt_additions"):
        direct_settings("direct_constrained", {"prompt_additions": ["scenario_question", "scenario_question"]})
    with pytest.raises(ConfigError, match=r"moca\.method_options\.direct: unknown key\(s\) \['rounds'\]"):
        direct_settings("direct", {"rounds": 1})
