"""Pruning the outputs and dvc.lock stages of runs params no longer name (src/socialbench/results/prune.py)."""

import pytest

from socialbench.core.errors import ConfigError
from socialbench.results.prune import prune_outputs, stale_lock_stages, stale_reason, stale_runs

PARAMS = {"models": {"prior": {}, "human": {}}, "moca": {"methods": ["direct", "codar"]}}


def make_results(root, runs):
    for kind, ext in (("predictions", ".jsonl"), ("scores", ".json"), ("runs", ".stats.json")):
        for model, method in runs:
            path = root / kind / "moca" / model / f"{method}{ext}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{model}/{method}")


def test_stale_reason_names_a_removed_model():
    assert (
        stale_reason("random", "direct", {"models": {"prior": {}}}, ["direct"], "moca")
        == "model random is not in params.yaml models"
    )


def test_stale_reason_names_a_removed_method():
    assert (
        stale_reason("prior", "codar", {"models": {"prior": {}}}, ["direct"], "moca")
        == "method codar is not in params.yaml moca.methods"
    )


def test_a_run_params_name_is_not_stale():
    assert stale_reason("prior", "direct", {"models": {"prior": {}}}, ["direct"], "moca") is None


def test_stale_runs_reads_the_method_from_a_multi_dot_file_name():
    files = [
        ("runs/moca/prior/codar.stats.json", "prior", "codar.stats.json"),
        ("runs/moca/prior/direct.stats.json", "prior", "direct.stats.json"),
    ]
    assert stale_runs(files, {"models": {"prior": {}}}, ["direct"], "moca") == [
        ("runs/moca/prior/codar.stats.json", "method codar is not in params.yaml moca.methods")
    ]


def test_a_run_params_now_exclude_is_stale_with_the_reason():
    params = {"models": {"prior": {"exclude_methods": {"codar": "no stages to run"}}}}
    assert (
        stale_reason("prior", "codar", params, ["direct", "codar"], "moca")
        == "params exclude prior/codar (models.prior): no stages to run"
    )


def test_a_run_of_a_model_params_keep_off_the_benchmark_is_stale():
    params = {"models": {"human": {"benchmarks": ["meetingtom"]}}}
    reason = stale_reason("human", "direct", params, ["direct"], "moca")
    assert reason == "params exclude human/direct (models.human): runs on meetingtom only (benchmarks in params)"


def test_stale_lock_stages_are_the_locked_names_dvc_yaml_no_longer_defines():
    assert stale_lock_stages(["moca_infer@random-direct", "moca_tables"], ["moca_tables"]) == [
        "moca_infer@random-direct"
    ]


def test_prune_outputs_archives_a_removed_models_files_and_keeps_the_others(tmp_path):
    results = tmp_path / "results"
    make_results(results, [("prior", "direct"), ("random", "direct")])
    report = prune_outputs(results, "moca", PARAMS, tmp_path / "archive")
    assert sorted(r["path"] for r in report) == sorted(
        f"{results.as_posix()}/{k}/moca/random/direct{e}"
        for k, e in (("predictions", ".jsonl"), ("scores", ".json"), ("runs", ".stats.json"))
    )
    assert not (results / "scores/moca/random").exists()  # the emptied model folder goes too
    assert (tmp_path / "archive/scores/moca/random/direct.json").read_text() == "random/direct"
    assert (results / "scores/moca/prior/direct.json").is_file()


def test_prune_outputs_without_archive_deletes_a_removed_methods_files(tmp_path):
    results = tmp_path / "results"
    make_results(results, [("prior", "direct"), ("prior", "codar_wo_step2")])
    report = prune_outputs(results, "moca", PARAMS, None)
    assert {r["action"] for r in report} == {"deleted"} and len(report) == 3
    assert sorted(p.name for p in (results / "scores/moca/prior").iterdir()) == ["direct.json"]


def test_prune_outputs_archives_the_files_of_a_run_params_now_exclude(tmp_path):
    results = tmp_path / "results"
    make_results(results, [("prior", "direct"), ("prior", "codar")])
    params = {**PARAMS, "models": {"prior": {"exclude_methods": {"codar": "no stages to run"}}, "human": {}}}
    report = prune_outputs(results, "moca", params, tmp_path / "archive")
    assert {r["reason"] for r in report} == {"params exclude prior/codar (models.prior): no stages to run"}
    assert len(report) == 3 and (tmp_path / "archive/predictions/moca/prior/codar.jsonl").is_file()
    assert sorted(p.name for p in (results / "scores/moca/prior").iterdir()) == ["direct.json"]


def test_prune_outputs_refuses_params_without_the_benchmark_section(tmp_path):
    with pytest.raises(ConfigError, match="no meetingtom.methods"):
        prune_outputs(tmp_path, "meetingtom", PARAMS, None)


def test_prune_outputs_of_some_kinds_leaves_the_other_folders_alone(tmp_path):
    # The pipeline prunes the infer jobs' folders only: the score, viewer and metrics folders are jobs'
    # folder outputs that Snakemake empties itself, possibly while the tables job prunes.
    results = tmp_path / "results"
    make_results(results, [("prior", "direct"), ("gone", "direct")])
    report = prune_outputs(results, "moca", PARAMS, tmp_path / "archive", kinds=("predictions", "runs"))
    assert sorted(r["path"] for r in report) == [
        f"{results.as_posix()}/predictions/moca/gone/direct.jsonl",
        f"{results.as_posix()}/runs/moca/gone/direct.stats.json",
    ]
    assert (results / "scores/moca/gone/direct.json").is_file()


def test_an_order_run_robustness_asks_for_is_not_stale_and_one_it_no_longer_asks_for_is():
    params = {
        "models": {"prior": {}},
        "moca": {"methods": ["direct"], "robustness": {"orders": 2, "models": ["prior"], "methods": ["direct"]}},
    }
    assert stale_reason("prior", "direct__order1", params, ["direct"], "moca") is None
    assert (
        stale_reason("prior", "direct__order2", params, ["direct"], "moca")
        == "params moca.robustness no longer asks for prior/direct__order2"
    )
    without = {"models": {"prior": {}}, "moca": {"methods": ["direct"]}}
    assert stale_reason("prior", "direct__order1", without, ["direct"], "moca") is not None


def test_a_run_the_declarations_now_rule_out_is_stale_with_the_derived_reason():
    params = {"models": {"prior": {"backend": "prior"}}, "moca": {"methods": ["direct", "codar"]}}
    assert stale_reason("prior", "codar", params, ["direct", "codar"], "moca") == (
        "params exclude prior/codar (models.prior): answers multiple choice only, not CoDAR's free-text stages"
    )
