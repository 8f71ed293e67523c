"""Tables (socialbench.meetingtom.tables): rows per model and method, a chance row, a column per
source with a bootstrap interval, notes for an absent source and excluded methods."""

from socialbench.meetingtom.tables import accuracy_ci, tables
from tests.meetingtom.conftest import mt_params

SCORES = {
    ("random", "direct"): {"task2_1/demo": {"accuracy": 25.0, "chance": 33.33, "correct": 1, "invalid": 0, "invalid_rate": 0.0, "n": 4},
                           "task2_1/ami": {"accuracy": 30.0, "chance": 33.33, "correct": 18, "invalid": 0, "invalid_rate": 0.0, "n": 60}},
    ("prior", "direct"): {"task2_1/demo": {"accuracy": 50.0, "chance": 33.33, "correct": 2, "invalid": 1, "invalid_rate": 25.0, "n": 4},
                          "task2_1/ami": {"accuracy": 20.0, "chance": 33.33, "correct": 12, "invalid": 0, "invalid_rate": 0.0, "n": 60}},
}  # fmt: skip


def test_one_table_per_task_in_three_formats_and_headline_accuracies():
    files, head = tables(SCORES, mt_params())
    assert set(files) == {"task2_1.md", "task2_1.csv", "task2_1.tex"}
    assert head == {"prior.direct": {"task2_1/ami": 20.0, "task2_1/demo": 50.0}, "random.direct": {"task2_1/ami": 30.0, "task2_1/demo": 25.0}}


def test_the_markdown_has_a_column_per_source_and_a_chance_row():
    md = tables(SCORES, mt_params())[0]["task2_1.md"]
    assert "| category | model | method | demo meetings (n=4) | AMI meetings (n=60) |" in md
    assert "| chance | uniform guess | - | 33.33 | 33.33 |" in md
    lo, hi = accuracy_ci(18, 60, 7, ("random", "direct", "task2_1/ami"))
    assert f"| baseline | random | direct | 25.00 [" in md and f"30.00 [{lo:.2f}, {hi:.2f}] |" in md


def test_an_interval_contains_its_point_and_is_the_same_every_time():
    lo, hi = accuracy_ci(18, 60, 7, ("m", "direct", "g"))
    assert lo < 30.0 < hi and (lo, hi) == accuracy_ci(18, 60, 7, ("m", "direct", "g"))


def test_a_source_without_instances_gets_a_note_instead_of_a_column():
    demo_only = {k: {"task2_1/demo": v["task2_1/demo"]} for k, v in SCORES.items()}
    md = tables(demo_only, mt_params())[0]["task2_1.md"]
    assert "AMI meetings (n=" not in md
    assert "Note: No instances from the AMI meetings: the source (../shared/data/ami) was absent or gave none" in md


def test_an_excluded_method_is_a_note_not_a_row():
    p = mt_params()
    p["models"]["prior"]["exclude_methods"] = {"direct": "answers by majority only"}
    md = tables(SCORES, p)[0]["task2_1.md"]
    assert "| baseline | prior |" not in md and "Note: prior is not run with direct: answers by majority only" in md


def test_the_csv_has_a_row_per_cell_and_the_latex_uses_booktabs():
    files, _ = tables(SCORES, mt_params())
    lines = files["task2_1.csv"].splitlines()
    assert lines[0] == "category,model,method,group,n,accuracy,ci_low,ci_high,invalid_rate" and len(lines) == 1 + 4 + 2
    assert "\\toprule" in files["task2_1.tex"] and "Chance & uniform guess" in files["task2_1.tex"]


def test_a_model_that_runs_on_other_benchmarks_only_gets_a_note_not_a_row():
    p = mt_params()
    p["models"]["prior"]["benchmarks"] = ["moca"]
    files, head = tables(SCORES, p)
    assert "| baseline | prior |" not in files["task2_1.md"]
    assert "Note: prior is not run with direct: runs on moca only" in files["task2_1.md"]
    assert set(head) == {"random.direct"}
