"""Tables (socialbench.meetingtom.results.tables): the paper's Tables 1-6 from a small synthetic score set,
with intervals, signed changes, notes for absent runs and sources, and the headline metrics."""

import pytest

from socialbench.core.benchmarks import get_benchmark
from socialbench.core.errors import DataError
from socialbench.meetingtom.eval.scoring import score
from socialbench.meetingtom.results import tables as mt_tables
from socialbench.meetingtom.results.intervals import accuracy_ci, conditional_ci
from socialbench.meetingtom.results.tables import output_files
from socialbench.results.tables import rendered
from tests.helpers.outcomes import run_summary
from tests.meetingtom.conftest import mt_params


def tables(*args):
    """``tables`` with its files as the tables stage writes them (``results.tables.rendered``)."""
    files, headline = mt_tables.tables(*args)
    return rendered(files), headline


F1 = ("task1", "task3_1")


def m(task, correct, n, chance=33.33, n_total=None, f1=None):
    """A score-file group: ``correct`` of ``n`` (Task 3.2: of ``n`` counted of ``n_total``)."""
    n_total = n if n_total is None else n_total
    return {
        "accuracy": round(100 * correct / n, 2) if n else None,
        "chance": chance,
        "correct": correct,
        "invalid": 0,
        "invalid_rate": 0.0,
        "n": n,
        "n_total": n_total,
        "macro_f1": (f1 if f1 is not None else 10.0) if task in F1 else None,
    }


def run(t1=5, t21=10, t22=4, t31=6, t32=(2, 3), ami=None):
    sc = {
        "task1/demo": m("task1", t1, 10, 14.29),
        "task2_1/demo": m("task2_1", t21, 20),
        "task2_2/demo": m("task2_2", t22, 8, 25.0),
        "task3_1/demo": m("task3_1", t31, 12),
        "task3_2/demo": m("task3_2", t32[0], t32[1], 6.67, n_total=5),
    }
    if ami is not None:
        sc["task2_1/ami"] = m("task2_1", ami, 60)
    return sc


def params(**meetingtom):
    p = mt_params()
    p["models"]["people"] = {"backend": "file", "category": "human"}
    p["models"]["gem"] = {"backend": "random", "category": "proprietary"}
    p["meetingtom"].update(
        {
            "methods": ["no_prompt", "naive_cot", "task_cot", "no_prompt__modality_video", "no_prompt__prior_role"],
            "ablations": {
                "modality_video": {"table": "modality", "label": "video only", "modality": "video"},
                "modality_utterances": {"table": "modality", "label": "utterances only", "modality": "utterances"},
                "no_markers": {"table": "markers", "label": "discourse markers removed", "remove_markers": True},
                "prior_role": {"table": "priors", "label": "+ role", "priors": ["role"]},
            },
            "tables": {"prompting_models": ["gem"]},
            **meetingtom,
        }
    )
    return p


SCORES = {
    ("people", "no_prompt"): run(9, 18, 7, 11, (4, 5), ami=50),
    ("random", "no_prompt"): run(1, 6, 2, 4, (0, 0), ami=18),
    ("gem", "no_prompt"): run(5, 10, 4, 6, (2, 3), ami=30),
    ("gem", "naive_cot"): run(6, 9, 4, 6, (2, 3), ami=31),
    ("random", "task_cot"): run(2, 6, 2, 4, (1, 2), ami=18),
    ("gem", "no_prompt__modality_video"): run(4, 10, 4, 6, (2, 3), ami=30),
    ("gem", "no_prompt__prior_role"): run(3, 12, 4, 6, (2, 3), ami=30),
}


@pytest.fixture(scope="module")
def out():
    return tables(SCORES, params())


def section(md, title):
    """The lines of one source's section of a Markdown table."""
    body = md.split(f"## {title}\n", 1)[1]
    return body.split("\n## ", 1)[0]


def test_every_table_is_written_in_three_formats(out):
    assert sorted(out[0]) == sorted(output_files(with_figures=False))


def test_table1_has_human_rows_first_a_chance_row_and_the_paper_columns(out):
    demo = section(out[0]["table1_overall.md"], "demo meetings")
    assert (
        "| category | model | setting | T1 Acc (n=10) | T1 Macro-F1"
        " (n=10) | T2.1 Acc (n=20) | T2.2 Acc (n=8) | T3.1 Acc (n=12)"
        " | T3.1 Macro-F1 (n=12) | T3.2 Acc (n=5) |"
    ) in demo
    rows = [line.split(" | ")[1] for line in demo.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows == ["people", "random", "gem", "uniform guess"]
    assert "| chance | uniform guess |  | 14.29 | - | 33.33 | 25.00 | 33.33 | - | 6.67 |" in demo


def test_an_accuracy_cell_carries_its_bootstrap_interval(out):
    lo, hi = accuracy_ci(10, 20, 7, ("gem", "no_prompt", "task2_1/demo"))
    assert f"| 50.00 [{lo:.2f}, {hi:.2f}] |" in section(out[0]["table1_overall.md"], "demo meetings")


def test_task3_2_cells_show_the_conditional_denominator(out):
    lo, hi = conditional_ci(2, 3, 5, 7, ("gem", "no_prompt", "task3_2/demo"))
    assert f"66.67 [{lo:.2f}, {hi:.2f}] (n=3) |" in out[0]["table1_overall.md"]
    assert "| - (n=0) |" in out[0]["table1_overall.md"]  # random: no 3.1 right, accuracy undefined


def test_a_source_with_one_task_has_those_columns_and_a_note(out):
    ami = section(out[0]["table1_overall.md"], "AMI meetings")
    assert "| category | model | setting | T2.1 Acc (n=60) |" in ami
    assert "Note: No Task 1, Task 2.2, Task 3.1, Task 3.2 instances from the AMI meetings: " in ami


def test_the_real_corpus_note_says_only_task2_1_has_gold_there_without_annotation_sheets(out):
    ami = section(out[0]["table1_overall.md"], "AMI meetings")
    assert "on the real corpus only Task 2.1 has gold (AMI's addressee annotations)" in ami
    assert "params meetingtom.annotation.ami names none" in ami


def test_with_annotation_sheets_the_real_corpus_note_only_says_the_columns_are_left_out():
    p = params()
    p["meetingtom"] = {**p["meetingtom"], "annotation": {"ami": {"sheets": "somewhere"}}}
    ami = section(tables(SCORES, p)[0]["table1_overall.md"], "AMI meetings")
    assert "Task 3.2 instances from the AMI meetings: those columns are left out." in ami


def test_an_absent_source_gets_a_note_not_a_section():
    demo_only = {k: {g: v for g, v in sc.items() if g.endswith("/demo")} for k, sc in SCORES.items()}
    md = tables(demo_only, params())[0]["table1_overall.md"]
    assert "## AMI meetings" not in md
    assert "Note: No instances from the AMI meetings: the source (../shared/data/ami) was absent or gave none" in md


def test_prompting_rows_show_signed_changes_from_no_prompt(out):
    files = out[0]
    lo, hi = accuracy_ci(6, 10, 7, ("gem", "naive_cot", "task1/demo"))
    assert f"| Naive-CoT | 60.00 (↑10.00) [{lo:.2f}, {hi:.2f}] |" in files["table3_prompting.md"]
    assert "45.00 (↓5.00)" in files["table3_prompting.md"]  # T2.1: 9/20 against 10/20
    assert "60.00 ($\\uparrow$10.00)" in files["table3_prompting.tex"]
    row = next(
        r for r in files["table3_prompting.csv"].splitlines() if ",gem,naive_cot," in r and ",task1,accuracy," in r
    )
    assert row.split(",")[-2] == "10.0"


def test_no_change_prints_plus_minus_zero(out):
    assert "50.00 (±0.00)" in out[0]["table3_prompting.md"]  # gem T2.2: 4/8 both


def test_other_models_prompting_runs_go_to_table6(out):
    t6 = out[0]["table6_prompting_additional.md"]
    assert "| baseline | random | Task-CoT |" in t6 and "| gem |" not in t6


def test_table4_reads_none_for_no_prompt_and_not_evaluated_for_task1_of_prior_rows(out):
    demo = section(out[0]["table4_priors.md"], "demo meetings")
    assert "| proprietary | gem | none | 50.00 [" in demo
    assert "| proprietary | gem | + role | n=0, not evaluated | n=0, not evaluated | 60.00 (↑10.00) [" in demo


def test_a_cell_a_run_has_no_group_for_reads_a_dash_and_has_no_csv_line():
    scores = {
        **SCORES,
        ("gem", "naive_cot"): {g: v for g, v in SCORES[("gem", "naive_cot")].items() if g != "task2_2/demo"},
    }
    files = tables(scores, params())[0]
    assert "| proprietary | gem | Naive-CoT | 60.00 (↑10.00) [" in files["table3_prompting.md"]
    row = next(
        line for line in files["table3_prompting.tex"].splitlines() if line.startswith("proprietary & gem & Naive-CoT")
    )
    assert row.split(" & ")[6] == "--"  # T2.2 Acc, after the three key columns and T1, T1 F1, T2.1
    lines = [
        line
        for line in files["table3_prompting.csv"].splitlines()
        if line.startswith("demo,proprietary,gem,naive_cot,")
    ]
    assert lines and not [line for line in lines if ",task2_2," in line]


def test_the_csv_names_each_cell_by_its_run_task_and_metric_and_a_prior_rows_task1_by_its_note(out):
    lines = out[0]["table4_priors.csv"].splitlines()
    assert lines[0] == "source,category,model,method,setting,task,metric,value,ci_low,ci_high,n,n_total,delta,note"
    assert 'demo,proprietary,gem,no_prompt__prior_role,+ role,task1,accuracy,,,,,10,,"n=0, not evaluated"' in lines


def test_table2_lists_the_modality_ablation_under_its_base_run(out):
    demo = section(out[0]["table2_modality.md"], "demo meetings")
    # the base row names the source's own modality (params meetingtom.demo.modality)
    assert "| proprietary | gem | No Prompt (both) |" in demo and "| proprietary | gem | video only | 40.00 [" in demo
    assert "↓" not in demo  # alternative inputs: no changes


def test_a_table_without_runs_is_written_with_a_note_naming_the_params_entry(out):
    assert (
        "Note: No runs for this table: add `no_prompt__no_markers` to meetingtom.methods in params.yaml."
        in out[0]["table5_markers.md"]
    )
    assert "add an ablation with `table: view` under meetingtom.ablations" in out[0]["table_view.md"]


def test_without_prompting_models_table3_says_which_entry_fills_it():
    md = tables(SCORES, params(tables={"prompting_models": []}))[0]["table3_prompting.md"]
    assert "list them under meetingtom.tables.prompting_models" in md


def test_every_run_is_in_all_runs(out):
    md = out[0]["all_runs.md"]
    assert all(f"| {model} |" in md for model, _ in SCORES) and "| + role |" in md and "| video only |" in md


def test_the_latex_uses_booktabs_and_escapes(out):
    tex = out[0]["table1_overall.tex"]
    assert "\\toprule" in tex and "T2.1 Acc (n=20)" in tex and "demo meetings" in tex and "no\\_prompt" not in tex
    assert "↑" not in out[0]["table3_prompting.tex"] and "($\\uparrow$ improvement" in out[0]["table3_prompting.tex"]


def test_headline_has_accuracy_per_group_and_macro_f1_where_reported(out):
    head = out[1]
    assert set(head) == {f"{m}.{meth}" for m, meth in SCORES}
    assert head["gem.no_prompt"]["task1/demo"] == {"accuracy": 50.0, "macro_f1": 10.0}
    assert head["gem.no_prompt"]["task2_1/ami"] == {"accuracy": 50.0}
    assert head["random.no_prompt"]["task3_2/demo"] == {"accuracy": None}


def test_an_excluded_pair_is_a_note_not_a_row():
    p = params()
    p["models"]["gem"]["exclude_methods"] = {"naive_cot": "no reasoning budget"}
    files, head = tables(SCORES, p)
    assert "Naive-CoT" not in files["table3_prompting.md"].split("Note:")[0]
    assert "not run" not in files["table3_prompting.md"]
    assert "Note: gem is not run with naive_cot: no reasoning budget" in files["all_runs.md"]
    assert "gem.naive_cot" not in head


def test_a_pair_the_declarations_rule_out_is_a_note_with_the_derived_reason():
    p = params()
    p["models"]["gem"] = {"backend": "hf", "category": "proprietary"}
    p["meetingtom"]["ablations"]["ingest_native"] = {
        "table": "ingestion",
        "label": "native video",
        "ingestion": "native",
    }
    p["meetingtom"]["methods"].append("no_prompt__ingest_native")
    files, head = tables(SCORES, p)
    assert (
        "Note: gem is not run with no_prompt__ingest_native: takes image, frames (the default of backend hf),"
        " not native video (ingestion: native)"
    ) in files["all_runs.md"]
    assert "gem.no_prompt__ingest_native" not in head


def test_all_runs_notes_the_models_whose_runs_sent_no_temperature():
    p = params()
    p["models"]["gem"] = {"backend": "anthropic", "category": "proprietary"}
    files, _ = tables(SCORES, p)
    assert "Note: No temperature sent: gem (the anthropic API takes none)." in files["all_runs.md"]
    assert "temperature" not in tables(SCORES, params())[0]["all_runs.md"]


def test_a_model_kept_off_meetingtom_is_not_named_as_excluded():
    p = params()
    p["models"]["gem"]["benchmarks"] = ["moca"]
    files, _ = tables({k: v for k, v in SCORES.items() if k[0] != "gem"}, p)
    assert not any("gem is not run" in text for text in files.values() if isinstance(text, str))


def test_without_per_instance_data_macro_f1_has_no_interval_and_a_note(out):
    md = out[0]["table1_overall.md"]
    assert "| 10.00 |" in md and "Macro-F1 intervals need each instance's answer" in md


# ---- with per-instance data ---------------------------------------------------------------------------
VALUES = ["active_engagement", "focused_listening", "hesitation"]


def instances():
    out = []
    for k in range(12):
        out.append(
            {
                "id": f"t1-{k}",
                "task": "task1",
                "source": "demo",
                "clip_id": f"c{k}",
                "answer": "ABC"[k % 3],
                "options": [{"label": "ABC"[j], "value": VALUES[(j + k) % 3]} for j in range(3)],
            }
        )
        out.append(
            {
                "id": f"t21-{k}",
                "task": "task2_1",
                "source": "demo",
                "clip_id": f"y{k}",
                "answer": "A",
                "options": [{"label": L, "value": L} for L in "ABC"],
            }
        )
    return out


def predictions():
    return {
        ("gem", "no_prompt"): (
            "gem.jsonl",
            [{"id": f"t1-{k}", "answer": "ABC"[k % 2], "error": None} for k in range(12)]
            + [{"id": f"t21-{k}", "answer": "AB"[k % 2], "error": None} for k in range(12)],
        )
    }


def summaries(insts, preds):
    """Each run's summary (``run_summary``), as the tables stage gives them to ``tables``."""
    bench = get_benchmark("meetingtom")
    return {key: run_summary(bench, insts, records, source) for key, (source, records) in preds.items()}


def test_with_per_instance_data_macro_f1_cells_get_intervals_and_figure4_is_written():
    insts, preds = instances(), predictions()
    scores = {("gem", "no_prompt"): score(insts, preds[("gem", "no_prompt")][1], source="gem.jsonl")}
    files, _ = tables(scores, params(), insts, summaries(insts, preds))
    f1 = scores[("gem", "no_prompt")]["task1/demo"]["macro_f1"]
    assert f"| {f1:.2f} [" in files["table1_overall.md"] and "Macro-F1 intervals need" not in files["table1_overall.md"]
    assert files["figures/figure4_label_distribution.png"].startswith(b"\x89PNG")
    assert sorted(files) == sorted(output_files())


def test_missing_outcomes_for_a_score_file_are_named():
    insts, preds = instances(), predictions()
    sc = score(insts, preds[("gem", "no_prompt")][1], source="gem.jsonl")
    with pytest.raises(DataError, match="random/no_prompt.*no outcomes given"):
        tables({("gem", "no_prompt"): sc, ("random", "no_prompt"): sc}, params(), insts, summaries(insts, preds))


def test_a_human_category_with_a_qualifier_still_comes_first_and_uncovered_cells_say_not_evaluated():
    p = params()
    p["models"]["people"]["category"] = "human (simulated demo annotator)"
    scores = dict(SCORES)
    uncovered = run(9, 18, 7, 11, (4, 5), ami=0)
    uncovered["task2_1/ami"] = dict(uncovered["task2_1/ami"], n=0, accuracy=None)  # the recorded answers skip AMI
    scores[("people", "no_prompt")] = uncovered
    md = tables(scores, p)[0]["table1_overall.md"]
    demo, ami = section(md, "demo meetings"), section(md, "AMI meetings")
    rows = [line for line in demo.splitlines() if line.startswith("| ") and "uniform guess" not in line][1:]
    assert rows[0].startswith("| human (simulated demo annotator) | people |")
    assert "| people | No Prompt (utterances; gold: AMI addressee annotations," in ami
    assert "| n=0, not evaluated |" in ami


def test_a_change_is_computed_from_the_unrounded_accuracies():
    # 2/3 - 1/3 = 33.333...: 33.33, where the printed 66.67 - 33.33 would give 33.34.
    base = run(t21=1)
    base["task2_1/demo"] = m("task2_1", 1, 3)
    cot = run(t21=2)
    cot["task2_1/demo"] = m("task2_1", 2, 3)
    files, _ = tables({("gem", "no_prompt"): base, ("gem", "naive_cot"): cot}, params())
    assert "66.67 (↑33.33)" in files["table3_prompting.md"]


@pytest.mark.parametrize("name", ["table3_prompting", "table6_prompting_additional"])
def test_prompting_tables_end_with_the_invalid_rate_over_all_the_sources_instances(name):
    scores = {k: {g: dict(m) for g, m in v.items()} for k, v in SCORES.items()}
    model = "gem" if name == "table3_prompting" else "random"
    method = "naive_cot" if model == "gem" else "task_cot"
    scores[(model, method)]["task2_1/demo"]["invalid"] = 3  # 3 of the 55 demo instances
    md = tables(scores, params())[0][f"{name}.md"]
    assert "Invalid % (n=55) |" in md
    row = next(line for line in md.splitlines() if f"| {model} |" in line and "No Prompt" not in line)
    assert row.endswith("| 5.45 |")


def test_a_video_run_on_the_real_corpus_reads_not_evaluated_and_its_utterances_run_is_not_shown_twice():
    p = params(methods=["no_prompt", "no_prompt__modality_video", "no_prompt__modality_utterances"])
    p["meetingtom"]["ami"] = {**p["meetingtom"].get("ami", {}), "modality": "utterances"}
    no_video = run(ami=0)
    no_video["task2_1/ami"] = dict(no_video["task2_1/ami"], n=0, correct=0, accuracy=None)
    scores = {
        ("gem", "no_prompt"): run(ami=30),
        ("gem", "no_prompt__modality_video"): no_video,
        ("gem", "no_prompt__modality_utterances"): run(ami=30),
    }
    ami = section(tables(scores, p)[0]["table2_modality.md"], "AMI meetings")
    assert "| video only | not evaluated: no video in this source |" in ami
    assert "utterances only" not in ami and ami.count("| gem |") == 2


def test_table1s_real_corpus_rows_name_their_modality_and_gold():
    p = params()
    p["meetingtom"]["ami"] = {**p["meetingtom"].get("ami", {}), "modality": "utterances"}
    md = tables(SCORES, p)[0]["table1_overall.md"]
    assert "| gem | No Prompt (utterances; gold: AMI addressee annotations" in section(md, "AMI meetings")
    assert "| gem | No Prompt |" in section(md, "demo meetings")


def test_a_row_answered_on_a_subset_prints_its_own_n_and_the_csv_gives_it():
    scores = {k: {g: dict(v) for g, v in sc.items()} for k, sc in SCORES.items()}
    scores[("people", "no_prompt")]["task2_1/demo"].update(n=15, correct=12, accuracy=80.0)  # 5 not evaluated
    files = tables(scores, params())[0]
    demo = section(files["table1_overall.md"], "demo meetings")
    people = next(line for line in demo.splitlines() if "| people |" in line)
    assert "| 80.00 [" in people and "] (n=15) |" in people and people.count("(n=15)") == 1
    gem = next(line for line in demo.splitlines() if "| gem |" in line)
    assert "(n=20)" not in gem  # a row on the column's n prints none
    row = next(
        r for r in files["table1_overall.csv"].splitlines() if ",people,no_prompt," in r and ",task2_1,accuracy," in r
    )
    assert row.split(",")[10:12] == ["15", "20"]


def test_all_runs_notes_the_models_whose_server_ignored_json_mode():
    p = params()
    p["models"]["gem"] = {"backend": "transformers_serve", "category": "open-weight", "model_id": "m"}
    files, _ = tables(SCORES, p)
    assert "Note: JSON mode not enforced: gem (transformers serve ignores response_format)." in files["all_runs.md"]
    assert "JSON mode" not in tables(SCORES, params())[0]["all_runs.md"]


def test_a_model_declared_text_only_has_its_category_marked_in_every_table_it_is_in():
    p = params(method_options={m: {"modality": "utterances"} for m in ("no_prompt", "naive_cot")})
    p["models"]["gem"]["modalities"] = []  # a text-only model: it runs on the transcript
    files, _ = tables(SCORES, p)
    assert "| proprietary (text-only) | gem |" in files["all_runs.md"]
    assert "| proprietary (text-only) | gem |" in files["table1_overall.md"]
    assert "proprietary (text-only),gem," in files["all_runs.csv"]


def test_a_model_that_declares_no_modalities_keeps_its_plain_category(out):
    assert "| proprietary | gem |" in out[0]["all_runs.md"] and "text-only" not in out[0]["all_runs.md"]
