"""MoCA's results hooks (src/socialbench/moca/results/hooks.py): the overall table's macro, and the viewer's
rows with the taxonomy's labels."""

from socialbench.core.benchmarks import get_benchmark
from socialbench.moca.results.hooks import macro
from tests.conftest import make_instance


def test_the_macro_is_the_unweighted_mean_over_scenarios_and_none_when_one_is_undefined():
    assert macro({"intent": {"dyad": 10.0}, "stance": {"dyad": 30.0}}, "dyad") == 20.0
    assert macro({"intent": {"faith": None}, "stance": {"faith": 30.0}}, "faith") is None


def test_the_viewer_has_one_row_per_instance_in_instance_order():
    insts = [make_instance("b"), make_instance("a", scenario="affection")]
    preds = {"a": {"id": "a", "label": "angry"}, "b": {"id": "b", "label": "mock"}}
    rows = get_benchmark("moca").results.viewer_rows(insts, preds, {})
    assert [r["id"] for r in rows] == ["b", "a"]
