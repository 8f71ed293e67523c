"""The figures' data (socialbench.moca.results.paper_figures)."""

import numpy as np
import pytest

from tests.moca.results.paper_runs import (
    MODELS,
    codar_runs,
    make_instances,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def test_figure9_data_holds_each_backbones_gain_with_its_paired_interval():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    gains = {(r["scenario"], r["metric"], r["backbone"]): r for r in read_csv(files["figures/fig9.csv"])}
    tests = {(r["scenario"], r["metric"], r["model"]): r for r in read_csv(files["tests.csv"]) if r["table"] == "2-4"}
    g = gains[("intent", "Dyad", "a")]
    t = tests[("intent", "dyad", "a")]
    assert (g["gain"], g["low"], g["high"]) == (t["delta"], t["delta_low"], t["delta_high"])
    assert np.isclose(float(g["gain"]), 40.0)
