import pytest

from socialbench.errors import DataError
from socialbench.moca.tables import build_rows, excluded_note, to_csv, to_latex, to_markdown

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


def test_a_pipe_in_a_category_does_not_add_a_markdown_column():
    from socialbench.moca.tables import COLUMNS, to_markdown

    md = to_markdown("intent", [("R&D | lab", "m", [1.0] * len(COLUMNS))])
    row = md.strip().splitlines()[-1]
    assert "R&D \\| lab" in row and row.replace("\\|", "").count("|") == len(COLUMNS) + 3


def test_excluded_methods_are_named_with_their_reason_under_the_tables():
    models = {"random": {"exclude_methods": {"codar": "a chance row cannot follow a chain"}}, "m": {}}
    assert "random + codar: not run (a chance row cannot follow a chain)" in excluded_note(models, ["direct", "codar"])
    assert excluded_note(models, ["direct"]) == ""


def test_a_pair_excluded_in_params_has_no_row_and_no_headline_but_its_reason_under_the_table():
    from socialbench.benchmark import get_benchmark

    params = {"models": {"a": {"category": "baseline"}, "r": {"category": "baseline", "exclude_methods": {"direct": "chance only"}}},
              "moca": {"methods": ["direct"]}}  # fmt: skip
    files, headline = get_benchmark("moca").tables({("a", "direct"): {"intent": SC}, ("r", "direct"): {"intent": SC}}, params)
    assert "| r |" not in files["intent.md"] and "r: not run (chance only)" in files["intent.md"]
    assert set(headline) == {"a.direct"}
