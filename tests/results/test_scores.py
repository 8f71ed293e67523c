"""Score files read back and checked together (socialbench.results.scores); and a run's outcomes file
checked for the tables: its ids are the instances', in order, and its groups hold as many outcomes as
the score file counts, each failure a DataError naming the file, record and field; a row's value read
by path, or an error naming it."""

import pytest

from socialbench.core.errors import DataError
from socialbench.results.scores import check_outcomes, collect_scores, is_flag, value

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


# ---- outcomes files: checked against the instances and the score file, values read by path ----------------
ROWS = [{"id": "a", "group": "g1"}, {"id": "b", "group": "g1"}, {"id": "c", "group": "g2"}]


def check(rows, ids=("a", "b", "c"), sizes=None):
    check_outcomes(rows, [k + 1 for k in range(len(rows))], "o.jsonl", list(ids), sizes or {"g1": 2, "g2": 1}, "s.json")


def test_outcomes_of_the_instances_in_order_with_the_score_files_group_sizes_pass():
    check(ROWS)


def test_outcomes_in_another_order_than_the_instances_are_an_error_naming_the_line():
    with pytest.raises(DataError, match=r"o\.jsonl, record line 1, field 'id': the outcome of 'b' where the instances"):
        check([ROWS[1], ROWS[0], ROWS[2]])


def test_more_or_fewer_outcomes_than_instances_are_an_error_naming_both_counts():
    with pytest.raises(DataError, match=r"o\.jsonl: 2 outcome\(s\) for 3 instances: written for other instances"):
        check(ROWS[:2])


def test_a_row_without_a_group_is_an_error_naming_its_line():
    with pytest.raises(DataError, match=r"record line 3, field 'group': must be the instance's group"):
        check([*ROWS[:2], {"id": "c"}])


def test_a_group_size_other_than_the_score_files_is_an_error_naming_the_group_and_the_score_file():
    with pytest.raises(
        DataError, match=r"record group 'g1', field 'group': 2 outcome\(s\) .* but 3 in the score file s\.json"
    ):
        check(ROWS, sizes={"g1": 3, "g2": 1})


def test_a_score_file_group_without_outcomes_is_an_error_naming_it():
    with pytest.raises(DataError, match=r"record group 'g3'.*0 outcome\(s\) in the group but 1"):
        check(ROWS, sizes={"g1": 2, "g2": 1, "g3": 1})


def test_a_rows_value_is_read_by_its_dotted_path():
    assert value({"id": "a", "c": {"x": True}}, "c.x", is_flag, "true or false", "o.jsonl") is True


def test_a_missing_value_is_an_error_naming_the_instance_and_path():
    with pytest.raises(
        DataError, match=r"o\.jsonl, record instance 'a', field 'c\.x': missing \(must be true or false\)"
    ):
        value({"id": "a", "c": {}}, "c.x", is_flag, "true or false", "o.jsonl")


def test_a_value_the_check_refuses_is_an_error_quoting_it():
    with pytest.raises(DataError, match=r"field 'c': must be true or false, got 1"):
        value({"id": "a", "c": 1}, "c", is_flag, "true or false", "o.jsonl")
