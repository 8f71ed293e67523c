"""spec.methods: the method settings checked when params load, without method or evaluation code."""

from __future__ import annotations

import subprocess
import sys

from socialbench.core.benchmarks import get_benchmark
from socialbench.moca.schema.methods import READS_RETRIEVAL, SETTINGS_CHECKS


def test_loading_params_imports_no_moca_method_or_evaluation_module():
    # every stage command loads params: MeetingToM's too, whose code deps hold no MoCA eval/ or methods/
    code = (
        "import sys; from socialbench.core.config import load_params; load_params('params.yaml');"
        "print(sorted(m for m in sys.modules if m.startswith(('socialbench.moca.eval.', 'socialbench.moca.methods'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_settings_checks_name_methods_of_moca():
    assert set(SETTINGS_CHECKS) | READS_RETRIEVAL <= set(get_benchmark("moca").method_names())


def test_no_retrieval_block_means_core_retrievals_none():
    from socialbench.core.retrieval import NONE
    from socialbench.moca.schema.methods import RetrievalSettings

    assert RetrievalSettings.parse(None).retriever == NONE


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
    import pytest

    from socialbench.core.errors import ConfigError
    from socialbench.moca.schema.methods import stage_variant

    with pytest.raises(ConfigError, match=r"moca\.method_options\.codar\.context_uncertainty: expected true or false"):
        stage_variant("codar", {"context_uncertainty": "yes"})


def test_direct_settings_take_prompt_additions_and_refuse_other_keys():
    import pytest

    from socialbench.core.errors import ConfigError
    from socialbench.moca.schema.methods import direct_settings

    assert direct_settings("direct", {})["prompt_additions"] == frozenset()
    got = direct_settings("direct__order1", {"prompt_additions": ["scenario_boundary"], "order": 1})
    assert got["prompt_additions"] == {"scenario_boundary"}
    with pytest.raises(ConfigError, match=r"moca\.method_options\.direct_constrained\.prompt_additions"):
        direct_settings("direct_constrained", {"prompt_additions": ["scenario_question", "scenario_question"]})
    with pytest.raises(ConfigError, match=r"moca\.method_options\.direct: unknown key\(s\) \['rounds'\]"):
        direct_settings("direct", {"rounds": 1})
