import pytest

from socialbench.errors import DataError
from socialbench.moca.tables import build_rows, collect_scores, to_csv, to_latex, to_markdown

SC = {"label": 10.0, "subject": 20.0, "target": 30.0, "mechanism": 40.0, "dyad": 5.0, "faith": None, "holis": 1.25, "n": 4}


def test_rows_grouped_by_category_in_params_order():
    scores = {("b", "direct"): {"intent": SC}, ("a", "direct"): {"intent": SC}, ("c", "direct"): {"intent": SC}}
    cats = {"a": "open-weight", "b": "baseline", "c": "open-weight"}
    rows = build_rows(scores, cats, "intent")
    assert [(cat, name) for cat, name, _ in rows] == [("open-weight", "a"), ("open-weight", "c"), ("baseline", "b")]


def test_method_other_than_direct_is_suffixed():
    rows = build_rows({("a", "codar"): {"intent": SC}}, {"a": "x"}, "intent")
    assert rows[0][1] == "a + codar"


def test_formats_carry_the_paper_columns_and_null_faith():
    rows = build_rows({("a", "direct"): {"intent": SC}}, {"a": "baseline"}, "intent")
    md = to_markdown("intent", rows, 4)
    assert "| Lab | Subj | Tgt | Mech | Dyad | Faith | Holis |" in md and "| 10.00 | 20.00 | 30.00 | 40.00 | 5.00 | – | 1.25 |" in md
    assert to_csv(rows).splitlines()[1] == "baseline,a,10.00,20.00,30.00,40.00,5.00,,1.25"
    tex = to_latex("intent", rows)
    assert r"\toprule" in tex and r"\bottomrule" in tex and "-- & 1.25" in tex


# ---- a set of score files that makes no coherent table ----------------------------------------
CATS = {"a": "baseline", "b": "baseline"}


def test_collect_scores_keys_the_files_by_model_and_method():
    out = collect_scores([("a.json", "a", "direct", {"intent": SC}), ("b.json", "b", "direct", {"intent": SC})], CATS, "params.yaml")
    assert out == {("a", "direct"): {"intent": SC}, ("b", "direct"): {"intent": SC}}


def test_score_file_of_a_model_not_in_params_is_an_error_naming_it():
    with pytest.raises(DataError) as exc:
        collect_scores([("s/ghost/direct.json", "ghost", "direct", {"intent": SC})], CATS, "params.yaml")
    assert exc.value.path == "s/ghost/direct.json" and "'ghost'" in str(exc.value) and "params.yaml" in str(exc.value)


def test_two_score_files_for_one_model_and_method_are_an_error():
    with pytest.raises(DataError, match="second score file for a/direct .*first is x/a/direct.json"):
        collect_scores([("x/a/direct.json", "a", "direct", {"intent": SC}), ("y/a/direct.json", "a", "direct", {"intent": SC})],
                       CATS, "params.yaml")  # fmt: skip


def test_score_files_with_different_scenarios_are_an_error():
    with pytest.raises(DataError, match="scenarios"):
        collect_scores([("a.json", "a", "direct", {"intent": SC}), ("b.json", "b", "direct", {"intent": SC, "stance": SC})],
                       CATS, "params.yaml")  # fmt: skip


def test_score_files_with_different_n_for_a_scenario_are_an_error():
    with pytest.raises(DataError) as exc:
        collect_scores([("a.json", "a", "direct", {"intent": SC}), ("b.json", "b", "direct", {"intent": {**SC, "n": 5}})],
                       CATS, "params.yaml")  # fmt: skip
    assert (exc.value.path, exc.value.record, exc.value.field) == ("b.json", "scenario 'intent'", "n")


def test_a_pipe_in_a_category_does_not_add_a_markdown_column():
    from socialbench.moca.tables import COLUMNS, to_markdown

    md = to_markdown("intent", [("R&D | lab", "m", [1.0] * len(COLUMNS))])
    row = md.strip().splitlines()[-1]
    assert "R&D \\| lab" in row and row.replace("\\|", "").count("|") == len(COLUMNS) + 3
