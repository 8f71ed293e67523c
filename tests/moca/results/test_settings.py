"""moca.tables of params (socialbench.moca.results.settings)."""

import pytest

from socialbench.core.errors import ConfigError
from tests.moca.results.paper_runs import (
    MODELS,
    answers,
    make_instances,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def test_a_human_model_that_is_not_in_params_is_a_config_error_naming_the_entry():
    inst = make_instances(4)
    with pytest.raises(
        ConfigError, match=r"moca\.tables\.human: 'people' is not a model under models: \(known: a, b\)"
    ):
        run_tables(
            inst, {("a", "direct"): answers(inst, "a", "direct", lambda k, f: True)}, MODELS, tables={"human": "people"}
        )


def test_table5s_backbone_must_be_a_model_under_models():
    from socialbench.moca.results.settings import TableSettings

    params = {"models": {"a": {}}, "moca": {"tables": {"ablation_backbone": "qwen"}}}
    with pytest.raises(ConfigError, match=r"moca\.tables\.ablation_backbone: 'qwen' is not a model under models"):
        TableSettings.from_params(params)
    params["moca"]["tables"]["ablation_backbone"] = "a"
    assert TableSettings.from_params(params).ablation_backbone == "a"
