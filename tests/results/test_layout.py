"""Which runs exist and which pairs params exclude, with their reasons (src/socialbench/results/layout.py)."""

from socialbench.core.config import load_params
from socialbench.results.layout import exclusions, model_runs, run_path

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
