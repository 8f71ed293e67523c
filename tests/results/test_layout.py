"""The results layout (src/socialbench/results/layout.py): which runs a model makes, order runs included."""

from socialbench.results.layout import model_runs, runs

MODELS = {"a": {}, "b": {"exclude_methods": {"direct": "answers no JSON"}}, "c": {}}


def test_without_robustness_a_model_makes_the_runs_params_name():
    assert model_runs(MODELS, "moca", ["direct", "codar"]) == {
        "a": ["direct", "codar"],
        "b": ["codar"],
        "c": ["direct", "codar"],
    }


def test_robustness_adds_the_order_runs_of_the_named_models_after_their_runs():
    robustness = {"orders": 3, "models": ["a", "b"], "methods": ["direct"]}
    got = model_runs(MODELS, "moca", ["direct", "codar"], robustness)
    assert got["a"] == ["direct", "codar", "direct__order1", "direct__order2"]
    assert got["b"] == ["codar"]  # b does not make direct, so it makes no order of it
    assert got["c"] == ["direct", "codar"]  # c is not named
    assert ("a", "direct__order2") in runs(MODELS, "moca", ["direct", "codar"], robustness)
