"""The results layout: ``<root>/<kind>/<benchmark>/<model>/<run><ext>``, and which runs params make."""

import pytest

from socialbench.core.config import load_params
from socialbench.results.layout import (
    exclusions,
    kind_dir,
    model_runs,
    run_files,
    run_of,
    run_path,
    runs,
)

MODELS = {
    "a": {"backend": "scripted"},
    "b": {"backend": "scripted", "only_methods": {"moca": ["direct"]}},
    "c": {"backend": "scripted", "benchmarks": ["meetingtom"]},
}


def test_a_run_file_sits_under_kind_benchmark_and_model_with_its_kinds_extension():
    assert run_path("runs", "moca", "m", "codar") == "results/runs/moca/m/codar.stats.json"
    assert run_path("scores", "moca", "m", "direct", root="out") == "out/scores/moca/m/direct.json"
    assert kind_dir("viewer", "meetingtom") == "results/viewer/meetingtom"


def test_an_unknown_kind_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown result kind 'logs'; one of predictions, traces"):
        run_path("logs", "moca", "m", "direct")


def test_the_run_of_a_per_run_file_is_its_name_up_to_the_first_dot():
    assert run_of("codar.stats.json") == "codar"


def test_the_runs_of_a_model_are_its_methods_less_the_pairs_params_exclude():
    assert model_runs({"models": MODELS}, "moca", ["direct", "codar"]) == {"a": ["direct", "codar"], "b": ["direct"]}
    assert run_files("predictions", "moca", [("b", "direct")]) == ["results/predictions/moca/b/direct.jsonl"]


def test_exclusions_name_the_reason_and_skip_models_kept_off_the_benchmark():
    assert exclusions({"models": MODELS}, "moca", ["direct", "codar"]) == [
        ("b", "codar", "runs direct only on moca (only_methods in params)")
    ]


CODAR_RUNS = ["codar", "codar__wo_step2", "codar__wo_steps34", "codar__wo_step5"]
CHOICES_ONLY = "answers multiple choice only, not CoDAR's free-text stages"


def test_the_demos_excluded_pairs_and_their_reasons_are_those_the_tables_printed_when_params_listed_them(
    repo_root,
):
    p = load_params(repo_root / "params.yaml")
    expected = [(m, r, CHOICES_ONLY) for m in ("random", "prior", "minilm") for r in CODAR_RUNS]
    expected += [("human", r, "human answers are final answers only") for r in CODAR_RUNS]
    assert exclusions(p, "moca", p["moca"]["methods"]) == expected


def test_a_pair_the_declarations_rule_out_has_no_run():
    p = {
        "models": {"r": {"backend": "random"}, "s": {"backend": "codar_script"}},
        "moca": {"methods": ["direct", "codar"], "ablations": {}},
    }
    assert model_runs(p, "moca", ["direct", "codar"]) == {"r": ["direct"], "s": ["direct", "codar"]}


def test_a_model_params_keep_off_the_benchmark_is_no_exclusion_of_its():
    p = {"models": {"h": {"backend": "file", "benchmarks": ["meetingtom"]}}, "moca": {"methods": ["codar"]}}
    assert exclusions(p, "moca", ["codar"]) == [] and model_runs(p, "moca", ["codar"]) == {}


def test_a_run_path_is_kind_benchmark_model_run():
    assert run_path("scores", "moca", "m", "codar__wo_step2") == "results/scores/moca/m/codar__wo_step2.json"


def test_robustness_adds_the_order_runs_of_the_named_models_after_their_runs():
    robustness = {"orders": 3, "models": ["a", "b"], "methods": ["codar"]}
    params = {"models": MODELS, "moca": {"methods": ["direct", "codar"], "robustness": robustness}}
    got = model_runs(params, "moca", ["direct", "codar"])
    assert got["a"] == ["direct", "codar", "codar__order1", "codar__order2"]
    assert got["b"] == ["direct"]  # b does not make codar, so it makes no order of it
    assert ("a", "codar__order2") in runs(params, "moca", ["direct", "codar"])


def test_without_robustness_a_model_makes_no_order_runs():
    params = {"models": MODELS, "moca": {"methods": ["direct", "codar"]}}
    assert model_runs(params, "moca", ["direct", "codar"]) == {"a": ["direct", "codar"], "b": ["direct"]}
