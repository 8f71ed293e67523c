"""Score files read back and checked together (socialbench.results.scores)."""

import pytest

from socialbench.core.errors import DataError
from socialbench.results.scores import collect_scores

SC = {
    "label": 10.0,
    "subject": 20.0,
    "target": 30.0,
    "mechanism": 40.0,
    "dyad": 5.0,
    "faith": None,
    "holis": 1.25,
    "n": 4,
}

# ---- a set of score files that makes no coherent table ----------------------------------------
CATS = {"a": "baseline", "b": "baseline"}


def test_collect_scores_keys_the_files_by_model_and_method():
    out = collect_scores(
        [("a.json", "a", "direct", {"intent": SC}), ("b.json", "b", "direct", {"intent": SC})], CATS, "params.yaml"
    )
    assert out == {("a", "direct"): {"intent": SC}, ("b", "direct"): {"intent": SC}}


def test_score_file_of_a_model_not_in_params_is_an_error_naming_it():
    with pytest.raises(DataError) as exc:
        collect_scores([("s/ghost/direct.json", "ghost", "direct", {"intent": SC})], CATS, "params.yaml")
    assert exc.value.path == "s/ghost/direct.json" and "'ghost'" in str(exc.value) and "params.yaml" in str(exc.value)


def test_two_score_files_for_one_model_and_method_are_an_error():
    with pytest.raises(DataError, match="second score file for a/direct .*first is x/a/direct.json"):
        collect_scores(
            [("x/a/direct.json", "a", "direct", {"intent": SC}), ("y/a/direct.json", "a", "direct", {"intent": SC})],
            CATS,
            "params.yaml",
        )


def test_score_files_with_different_groups_are_an_error():
    with pytest.raises(DataError, match="groups"):
        collect_scores(
            [("a.json", "a", "direct", {"intent": SC}), ("b.json", "b", "direct", {"intent": SC, "stance": SC})],
            CATS,
            "params.yaml",
        )


def test_score_files_with_different_n_for_a_group_are_an_error():
    with pytest.raises(DataError) as exc:
        collect_scores(
            [("a.json", "a", "direct", {"intent": SC}), ("b.json", "b", "direct", {"intent": {**SC, "n": 5}})],
            CATS,
            "params.yaml",
        )
    assert (exc.value.path, exc.value.record, exc.value.field) == ("b.json", "group 'intent'", "n")


# ---- one metrics file per run (dvc metrics show rows); added with issue 13 ----------------------------


def test_run_metrics_files_give_each_model_and_method_a_file():
    from socialbench.results.scores import run_metrics_files

    head = {"qwen2.5-vl.direct": {"intent": {"dyad": 1.0}}, "prior.codar": {"intent": {"dyad": 2.0}}}
    assert run_metrics_files(head) == {
        "qwen2.5-vl/direct.json": {"intent": {"dyad": 1.0}},
        "prior/codar.json": {"intent": {"dyad": 2.0}},
    }


def test_write_run_metrics_leaves_no_file_of_a_run_gone_from_the_headline(tmp_path):
    from socialbench.results.scores import write_run_metrics

    write_run_metrics(tmp_path / "moca", {"random.direct": {"a": 1}, "prior.direct": {"a": 2}})
    write_run_metrics(tmp_path / "moca", {"prior.direct": {"a": 3}})
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")) == ["moca/prior/direct.json"]


def test_a_model_declared_text_only_is_marked_so_in_its_category():
    from socialbench.results.scores import row_category

    assert row_category({"category": "small LLM", "modalities": []}) == "small LLM (text-only)"
    assert row_category({"category": "MLLM", "modalities": None}) == "MLLM"
    assert row_category({"category": "MLLM", "modalities": ["image"]}) == "MLLM"
