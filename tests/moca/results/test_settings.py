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
