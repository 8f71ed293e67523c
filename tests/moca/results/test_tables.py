import math

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.eval.scoring import STATS
from socialbench.moca.results.tables import build_rows, exclusions_markdown, to_csv, to_latex, to_markdown

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")

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
    assert (
        "| Lab | Subj | Tgt | Mech | Dyad | Faith | Holis |" in md
        and "| 10.00 | 20.00 | 30.00 | 40.00 | 5.00 | – | 1.25 |" in md
    )
    assert to_csv(rows).splitlines()[1] == "baseline,a,10.00,20.00,30.00,40.00,5.00,,1.25"
    tex = to_latex("intent", rows)
    assert r"\toprule" in tex and r"\bottomrule" in tex and "-- & 1.25" in tex


def test_a_pipe_in_a_category_does_not_add_a_markdown_column():
    from socialbench.moca.results.tables import COLUMNS, to_markdown

    md = to_markdown("intent", [("R&D | lab", "m", [1.0] * len(COLUMNS))])
    row = md.strip().splitlines()[-1]
    assert "R&D \\| lab" in row and row.replace("\\|", "").count("|") == len(COLUMNS) + 3


def test_excluded_methods_are_named_with_their_reason_once():
    models = {"random": {"exclude_methods": {"codar": "a chance row cannot follow a chain"}}, "m": {}}
    md = exclusions_markdown(models, ["direct", "codar"])
    assert "random + codar: not run (a chance row cannot follow a chain)" in md
    assert exclusions_markdown(models, ["direct"]) == ""


def test_a_model_kept_off_the_benchmark_is_not_listed_as_excluded():
    models = {"t": {"benchmarks": ["meetingtom"]}, "m": {}}
    assert exclusions_markdown(models, ["direct"]) == ""


def test_a_pair_excluded_in_params_has_no_row_and_no_headline_and_its_reason_once_in_all_md():
    from socialbench.core.benchmarks import get_benchmark

    params = {
        "models": {
            "a": {"category": "baseline"},
            "r": {"category": "baseline", "exclude_methods": {"direct": "chance only"}},
        },
        "moca": {"methods": ["direct"]},
    }
    files, headline = get_benchmark("moca").tables({("a", "direct"): {"intent": SC}}, params)
    assert "| r |" not in files["intent.md"] and "not run" not in files["intent.md"]
    assert files["all.md"].count("r: not run (chance only)") == 1
    assert set(headline) == {"a.direct"}


# ---- N and the instances whose media failed at evaluation time, under each table -------------
def _two_rows():
    return build_rows(
        {("a", "direct"): {"intent": SC}, ("b", "direct"): {"intent": SC}}, {"a": "x", "b": "x"}, "intent"
    )


def test_the_table_states_n_and_that_no_media_failed():
    md = to_markdown("intent", _two_rows(), 4, {"a": 0, "b": 0})
    assert md.rstrip().endswith("N = 4 per row; no instance had media that failed at evaluation time.")


def test_the_table_states_how_many_instances_had_media_that_failed():
    md = to_markdown("intent", _two_rows(), 4, {"a": 1, "b": 1})
    assert "N = 4 per row; 1 of them had media that failed at evaluation time (kept, scored invalid)." in md
    tex = to_latex("intent", _two_rows(), 4, {"a": 1, "b": 1})
    assert r"\footnotesize N = 4 per row; 1 of them had media" in tex and tex.index("footnotesize") < tex.index(
        r"\end{table}"
    )


def test_rows_with_different_media_failures_are_listed_one_by_one():
    md = to_markdown("intent", _two_rows(), 4, {"a": 1, "b": 0})
    assert "(kept, scored invalid): a 1, b 0." in md


# ---- the paper's tables from predictions (issue 9: Tables 2-7, intervals, paired tests, human row) ----
import csv  # noqa: E402
import functools  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402

import numpy as np  # noqa: E402

from socialbench.core.errors import ConfigError  # noqa: E402
from tests.conftest import make_instance  # noqa: E402
from tests.moca.conftest import ABLATIONS  # noqa: E402

SCENARIOS = ("intent", "stance")


@functools.lru_cache(maxsize=1)
def bench():
    from socialbench.core.benchmarks import get_benchmark

    return get_benchmark("moca")  # one taxonomy load for the module


def make_instances(n: int = 30, scenarios=SCENARIOS) -> list[dict]:
    return [make_instance(f"{s}-{i:03d}", scenario=s) for s in scenarios for i in range(n)]


def wrong(instance: dict, field: str) -> str:
    """A valid value of the field that is not the gold one."""
    labels, mechanisms = bench().taxonomy.as_sets()
    s = instance["scenario"]
    pool = {
        "label": labels[s],
        "mechanism": mechanisms[s],
        "subject": instance["subject_options"],
        "target": instance["target_options"],
    }[field]
    return next(v for v in pool if v != instance[field])


def answers(instances: list[dict], model: str, method: str, right) -> list[dict]:
    """Prediction records: field f of instance k is gold when right(k, f) (k counts within the scenario)."""
    out, seen = [], {}
    for inst in instances:
        k = seen[inst["scenario"]] = seen.get(inst["scenario"], -1) + 1
        rec = {"id": inst["id"], "model": model, "method": method, "scenario": inst["scenario"]}
        rec.update({f: inst[f] if right(k, f) else wrong(inst, f) for f in ("label", "subject", "target", "mechanism")})
        out.append(rec)
    return out


def run_tables(
    instances,
    runs: dict[tuple[str, str], list[dict]],
    models: dict,
    tables: dict | None = None,
    methods=("direct",),
    per_instance: bool = True,
    ablations=ABLATIONS,
):
    b = bench()
    scores = {k: b.score(instances, recs, source=f"{k[0]}/{k[1]}.jsonl") for k, recs in runs.items()}
    params = {
        "seed": 7,
        "models": models,
        "moca": {"methods": list(methods), "ablations": ablations, "tables": {"resamples": 1000, **(tables or {})}},
    }
    preds = {k: (f"{k[0]}/{k[1]}.jsonl", recs) for k, recs in runs.items()} if per_instance else None
    files, _ = b.tables(scores, params, instances if per_instance else None, preds)
    return files, scores


def read_csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def md_row(md: str, name: str) -> list[str]:
    line = next(x for x in md.splitlines() if x.startswith("| ") and x.split(" | ")[1] == name)
    return [c.strip() for c in line.strip("| ").split(" | ")]


# Two backbones: "a" improves a lot with codar, "b" not at all; everything else fixed.
def codar_runs(instances):
    return {
        ("a", "direct"): answers(instances, "a", "direct", lambda k, f: f in ("subject", "target") and k < 12),
        ("a", "codar"): answers(instances, "a", "codar", lambda k, f: k < 24),
        ("b", "direct"): answers(instances, "b", "direct", lambda k, f: k % 2 == 0),
        ("b", "codar"): answers(instances, "b", "codar", lambda k, f: k % 2 == 0),
    }


MODELS = {"a": {"category": "open-weight"}, "b": {"category": "proprietary"}}


def test_a_codar_row_shows_its_signed_change_over_its_backbone_with_the_test_mark():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    row = md_row(files["intent.md"], "a + codar")
    # Lab: 80.00 against 0.00 on 30 instances, 24 discordant pairs: McNemar p ~ 1e-7, significant after Holm
    assert row[2] == "**80.00** (+80.00\\*)"  # bold: the best Lab of its category
    assert md_row(files["intent.md"], "b + codar")[2] == "**50.00** (±0.00)"  # tied with b: both marked
    assert md_row(files["intent.md"], "a")[2] == "0.00"  # the backbone row itself has no change
    assert r"\textbf{80.00} (+80.00$^{*}$)" in files["intent.tex"]


def test_direct_rows_come_before_their_methods_and_the_csv_keeps_plain_numbers():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    names = [r["model"] for r in read_csv(files["intent.csv"])]
    assert names == ["a", "a + codar", "b", "b + codar"]
    assert read_csv(files["intent.csv"])[1]["Lab"] == "80.00"


# Written here from the definitions, independently of socialbench.results.stats.
def exact_mcnemar(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar: the binomial test of a_only among the discordant pairs at 1/2."""
    n, k = a_only + b_only, min(a_only, b_only)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def holm_adjusted(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def test_each_mcnemar_p_value_is_the_exact_test_of_its_discordant_counts():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    tests = [r for r in read_csv(files["tests.csv"]) if r["test"] == "mcnemar_exact" and r["p"]]
    assert tests and all(
        float(r["p"]) == pytest.approx(exact_mcnemar(int(r["a_only"]), int(r["b_only"])), rel=1e-5) for r in tests
    )


def test_holm_runs_over_one_family_per_compared_pair_of_rows_all_its_scenarios_and_metrics():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    tests = [r for r in read_csv(files["tests.csv"]) if r["table"] == "2-4" and r["p"]]
    for model in ("a", "b"):
        family = [r for r in tests if r["model"] == model]
        # both scenarios and every metric with a p-value (Faith has none where it is undefined): one family
        assert {r["scenario"] for r in family} == {"intent", "stance"} and len(family) >= 2 * 6
        assert {r["holm_family"] for r in family} == {f"table 2-4: {model} + codar vs {model}"}
        assert {r["holm_family_size"] for r in family} == {str(len(family))}
        expected = holm_adjusted([float(r["p"]) for r in family])
        assert [float(r["p_holm"]) for r in family] == pytest.approx(expected, rel=1e-5)


def test_a_rows_stars_do_not_depend_on_which_other_rows_were_run():
    inst = make_instances()
    runs = codar_runs(inst)
    both, _ = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    only_a, _ = run_tables(
        inst, {k: v for k, v in runs.items() if k[0] == "a"}, {"a": MODELS["a"]}, methods=("direct", "codar")
    )

    def of_a(files):
        keep = ("scenario", "metric", "p", "p_holm", "significant")
        return [{k: r[k] for k in keep} for r in read_csv(files["tests.csv"]) if r["model"] == "a"]

    assert of_a(both) == of_a(only_a)


def test_the_paired_tests_equal_statsmodels():
    from statsmodels.stats.contingency_tables import mcnemar

    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    tests = [r for r in read_csv(files["tests.csv"]) if r["table"] == "2-4"]
    a = next(r for r in tests if (r["model"], r["scenario"], r["metric"]) == ("a", "intent", "label"))
    # a+codar right on 24, a wrong on all 30: 24 instances right in a+codar only
    assert (a["a_only"], a["b_only"]) == ("24", "0")
    assert float(a["p"]) == pytest.approx(mcnemar([[0, 24], [0, 6]], exact=True).pvalue, rel=1e-6)
    assert {r["test"] for r in tests if r["metric"] == "faith"} == {"paired_bootstrap"}


def test_the_tables_notes_name_the_holm_family():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    assert "one family per compared pair of rows (a row against the same model's direct row)" in files["intent.md"]


def test_a_mark_appears_exactly_where_the_holm_adjusted_test_is_significant():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    tests = {
        (r["model"], r["scenario"], r["metric"]): r["significant"] == "1"
        for r in read_csv(files["tests.csv"])
        if r["table"] == "2-4"
    }
    for s in SCENARIOS:
        for model in ("a", "b"):
            row = md_row(files[f"{s}.md"], f"{model} + codar")
            for (head, key), cell in zip(COLUMNS_, row[2:]):
                assert cell.endswith("\\*)") == tests[(model, s, key)], (s, model, head, cell)


COLUMNS_ = [
    ("Lab", "label"),
    ("Subj", "subject"),
    ("Tgt", "target"),
    ("Mech", "mechanism"),
    ("Dyad", "dyad"),
    ("Faith", "faith"),
    ("Holis", "holis"),
]


def test_every_interval_point_equals_its_table_value_exactly():
    inst = make_instances()
    files, scores = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    for s in SCENARIOS:
        rows = read_csv(files[f"{s}.ci.csv"])
        assert len(rows) == 4 * 9
        for r in rows:
            want = scores[(r["model"], r["method"])][s][r["metric"]]
            assert (r["value"] == "" and want is None) or float(r["value"]) == want, r
            assert r["resamples"] == "1000" and r["n"] == "30"
            if want is not None and r["low"]:
                assert float(r["low"]) <= want <= float(r["high"])


def test_intervals_come_from_the_cells_own_seeded_bootstrap():
    from socialbench.moca.results.correctness import correctness
    from socialbench.results import stats

    inst = make_instances()
    runs = codar_runs(inst)
    files, _ = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    labels, mechanisms = bench().taxonomy.as_sets()
    cell = correctness(inst, runs[("b", "direct")], labels, mechanisms)["stance"]
    ci = stats.bootstrap_ci(cell, n_resamples=1000, seed=stats.cell_seed(7, "b", "direct", "stance"), defs=STATS)
    row = next(
        r
        for r in read_csv(files["stance.ci.csv"])
        if r["model"] == "b" and r["method"] == "direct" and r["metric"] == "holis"
    )
    assert (float(row["low"]), float(row["high"])) == (ci["holis"].low, ci["holis"].high)


def test_predictions_that_no_longer_give_the_score_file_are_an_error_naming_it():
    inst = make_instances()
    runs = codar_runs(inst)
    b = bench()
    scores = {k: b.score(inst, recs, source="x") for k, recs in runs.items()}
    stale = dict(runs)
    stale[("a", "direct")] = answers(inst, "a", "direct", lambda k, f: True)
    params = {"seed": 7, "models": MODELS, "moca": {"methods": ["direct", "codar"], "tables": {"resamples": 1000}}}
    with pytest.raises(
        DataError,
        match=r"p\.jsonl, record scenario 'intent', field 'label': gives label = 100\.0 but the score"
        r" file of a/direct says 0\.0",
    ):
        b.tables(scores, params, inst, {k: ("p.jsonl", recs) for k, recs in stale.items()})


def test_without_per_instance_data_the_tables_come_out_and_say_there_are_no_intervals_or_tests():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"), per_instance=False)
    assert md_row(files["intent.md"], "a + codar")[2] == "**80.00** (+80.00)"
    assert "No paired tests: the tables stage ran without --instances and --predictions-dir" in files["intent.md"]
    assert "No intervals" in files["intent.ci.md"] and len(read_csv(files["intent.ci.csv"])) == 0


def test_tables_2_to_4_change_only_by_the_notes_added_under_them():
    # The demo's tables (no human model, no codar): the table itself and its N line are as before.
    inst = make_instances()
    runs = {
        ("r", "direct"): answers(inst, "r", "direct", lambda k, f: k % 3 == 0),
        ("p", "direct"): answers(inst, "p", "direct", lambda k, f: k % 4 == 0),
    }
    models = {"r": {"category": "baseline"}, "p": {"category": "baseline"}}
    files, scores = run_tables(inst, runs, models)
    rows = build_rows(scores, {m: e["category"] for m, e in models.items()}, "intent")
    before = to_markdown("intent", rows, 30, {"r": 0, "p": 0})
    assert files["intent.md"].startswith(before)
    assert files["intent.csv"] == to_csv(rows) and files["intent.tex"] == to_latex("intent", rows, 30, {"r": 0, "p": 0})
    assert files["all.md"].startswith(files["affection.md"] if "affection.md" in files else files["intent.md"])


def test_no_human_model_is_said_under_each_table_with_the_params_entry_to_set():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    assert (
        "Human row: none; name the model that holds human answers (backend file) in moca.tables.human."
        in files["intent.md"]
    )
    assert "No human rate: name the model that holds human answers in moca.tables.human." in files["table7.md"]


def test_the_human_row_comes_from_a_human_answers_file_through_the_file_backend_and_the_same_scorer(tmp_path):
    from PIL import Image

    from socialbench.core.backend import ModelSpec
    from socialbench.core.cache import RequestCache
    from socialbench.core.runner import run_method

    img = tmp_path / "img.png"
    Image.new("RGB", (8, 8), (10, 20, 30)).save(img)
    inst = [{**i, "media": [str(img)]} for i in make_instances(10)]
    # the annotators: right on everything but the label of every other instance; one instance left blank
    human = answers(inst, "human", "direct", lambda k, f: f != "label" or k % 2 == 0)
    human[3] = {"id": human[3]["id"], "label": None, "mechanism": None, "subject": None, "target": None}
    (tmp_path / "human.jsonl").write_text("".join(json.dumps(r) + "\n" for r in human))
    spec = ModelSpec.from_params(
        "human", {"backend": "file", "category": "human", "options": {"path": str(tmp_path / "human.jsonl")}}
    )
    b = bench()
    records, _, _ = run_method(
        b,
        b.method("direct", spec, 7),
        inst,
        spec=spec,
        cache=RequestCache(tmp_path / "c.sqlite"),
        seed=7,
        progress=False,
    )
    runs = {("human", "direct"): records, **{k: v for k, v in codar_runs(inst).items() if k[1] == "direct"}}
    models = {**MODELS, "human": {"category": "human"}}
    files, scores = run_tables(inst, runs, models, tables={"human": "human"})
    # intent: 10 instances, the 4th (k = 3) blank; labels right on k = 0, 2, 4, 6, 8
    assert (
        scores[("human", "direct")]["intent"]["label"] == 50.0
        and scores[("human", "direct")]["intent"]["subject"] == 90.0
    )
    table = [r["model"] for r in read_csv(files["intent.csv"])]
    assert table[0] == "human"  # the human row leads the table
    assert md_row(files["intent.md"], "human")[2:5] == ["50.00", "90.00", "90.00"]
    assert "Human row" not in files["intent.md"]
    bars = read_csv(files["figures/fig6.csv"])
    assert {r["model"] for r in bars} == {"a", "b", "human"}


def test_a_human_model_that_is_not_in_params_is_a_config_error_naming_the_entry():
    inst = make_instances(4)
    with pytest.raises(
        ConfigError, match=r"moca\.tables\.human: 'people' is not a model under models: \(known: a, b\)"
    ):
        run_tables(
            inst, {("a", "direct"): answers(inst, "a", "direct", lambda k, f: True)}, MODELS, tables={"human": "people"}
        )


def test_table5_gives_atomic_average_and_changes_against_full_codar():
    inst = make_instances()
    runs = {
        ("a", "codar"): answers(inst, "a", "codar", lambda k, f: k < 20),
        ("a", "codar__wo_step5"): answers(
            inst, "a", "codar__wo_step5", lambda k, f: k < 10 or (f == "subject" and k < 30)
        ),
    }
    files, scores = run_tables(inst, runs, {"a": {"category": "x"}}, methods=("codar", "codar__wo_step5"))
    rows = read_csv(files["table5.csv"])
    full = next(r for r in rows if r["Scenario"] == "intent" and r["Variant"] == "CoDAR")
    ablated = next(r for r in rows if r["Scenario"] == "intent" and r["Variant"] == "w/o Step 5")
    s = scores[("a", "codar__wo_step5")]["intent"]
    atomic = round((s["label"] + s["subject"] + s["target"] + s["mechanism"]) / 4, 2)
    assert float(ablated["Atomic Avg."]) == atomic and float(full["Holis"]) == scores[("a", "codar")]["intent"]["holis"]
    assert "| intent | a | w/o Step 5 | 50.00 (-16.67) |" in files["table5.md"]
    assert "Not run: codar__wo_step2, codar__wo_steps34 (add to moca.methods)." in files["table5.md"]


def test_table5_takes_its_rows_and_labels_from_the_ablations_in_params():
    inst = make_instances(4)
    runs = {(m, meth): answers(inst, m, meth, lambda k, f: True) for m in ("a",) for meth in ("codar", "codar__x")}
    ablations = {"x": {"table": "table5", "label": "no checker", "stages": ["observer", "decoder"]}}
    files, _ = run_tables(inst, runs, {"a": {"category": "x"}}, methods=("codar", "codar__x"), ablations=ablations)
    assert [r["Variant"] for r in read_csv(files["table5.csv"]) if r["Scenario"] == "intent"] == ["CoDAR", "no checker"]


def test_table5_without_ablation_runs_says_which_methods_to_add():
    inst = make_instances(4)
    files, _ = run_tables(inst, {("a", "direct"): answers(inst, "a", "direct", lambda k, f: True)}, MODELS)
    assert (
        "add codar and its ablations (codar__wo_step2, codar__wo_steps34, codar__wo_step5) to moca.methods"
        in files["table5.md"]
    )
    assert read_csv(files["table5.csv"]) == [] and files["table5.csv"].startswith(
        "Scenario,Backbone,Variant,Atomic Avg."
    )


def test_table6_gives_the_changes_from_the_smaller_to_the_larger_model_and_each_completion_rate():
    inst = make_instances()
    runs = {
        ("s", "direct"): answers(inst, "s", "direct", lambda k, f: k < 5 or (f in ("subject", "target") and k < 10)),
        ("l", "direct"): answers(inst, "l", "direct", lambda k, f: k < 12 or (f in ("subject", "target") and k < 25)),
    }
    files, scores = run_tables(
        inst, runs, {"s": {"category": "x"}, "l": {"category": "x"}}, tables={"scaling": ["s", "l"]}
    )
    row = next(r for r in read_csv(files["table6.csv"]) if r["Scenario"] == "intent")
    small, large = scores[("s", "direct")]["intent"], scores[("l", "direct")]["intent"]
    assert float(row["ΔDyad"]) == round(large["dyad"] - small["dyad"], 2) == 50.0
    assert float(row["ΔHolis"]) == round(large["holis"] - small["holis"], 2)
    assert (
        (float(row["C_sem|dyad s"]), float(row["C_sem|dyad l"]))
        == (small["c_sem_dyad"], large["c_sem_dyad"])
        == (50.0, 48.0)
    )
    assert "| intent | +50.00\\* |" in files["table6.md"]  # 15 discordant pairs, all one way


def test_table6_without_scaling_models_says_what_to_set():
    inst = make_instances(4)
    files, _ = run_tables(inst, {("a", "direct"): answers(inst, "a", "direct", lambda k, f: True)}, MODELS)
    assert (
        "No rows: name the smaller and the larger model of one family in moca.tables.scaling: [smaller, larger]."
        in files["table6.md"]
    )


def test_table7_macro_averages_completion_over_the_backbones_with_the_human_rate():
    inst = make_instances()
    runs = {**codar_runs(inst), ("h", "direct"): answers(inst, "h", "direct", lambda k, f: k < 27)}
    models = {**MODELS, "h": {"category": "human"}}
    files, scores = run_tables(
        inst, runs, models, tables={"human": "h", "backbones": ["a", "b"]}, methods=("direct", "codar")
    )
    row = next(r for r in read_csv(files["table7.csv"]) if r["Scenario"] == "stance")
    c = {k: scores[k]["stance"]["c_sem_dyad"] for k in runs}
    assert float(row["Baseline"]) == round((c[("a", "direct")] + c[("b", "direct")]) / 2, 2) == 50.0
    assert float(row["CoDAR"]) == round((c[("a", "codar")] + c[("b", "codar")]) / 2, 2) == 100.0
    assert float(row["ΔCoDAR"]) == 50.0 and float(row["Human"]) == 100.0
    assert "Macro-averaged over: a, b (moca.tables.backbones)." in files["table7.md"]
    ci = read_csv(files["table7.ci.csv"])
    delta = next(r for r in ci if r["Scenario"] == "stance" and r["column"] == "ΔCoDAR")
    assert float(delta["value"]) == 50.0 and float(delta["low"]) <= 50.0 <= float(delta["high"])


def test_table7_without_codar_runs_says_to_add_codar():
    inst = make_instances(4)
    files, _ = run_tables(inst, {("a", "direct"): answers(inst, "a", "direct", lambda k, f: True)}, MODELS)
    assert "No rows: no backbone has both a direct and a codar row; add codar to moca.methods." in files["table7.md"]


def test_all_tables_are_in_all_md_and_every_declared_output_is_written():
    from socialbench.moca.results.tables import output_files

    inst = make_instances(6)
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    assert set(files) == set(output_files(SCENARIOS))
    assert all(f"### Table {t}" in files["all.md"] for t in (5, 6, 7))


def test_the_same_inputs_give_the_same_bytes_in_every_file():
    inst = make_instances(8)
    first, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    again, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    assert first == again


def test_figure9_data_holds_each_backbones_gain_with_its_paired_interval():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    gains = {(r["scenario"], r["metric"], r["backbone"]): r for r in read_csv(files["figures/fig9.csv"])}
    tests = {(r["scenario"], r["metric"], r["model"]): r for r in read_csv(files["tests.csv"]) if r["table"] == "2-4"}
    g = gains[("intent", "Dyad", "a")]
    t = tests[("intent", "dyad", "a")]
    assert (g["gain"], g["low"], g["high"]) == (t["delta"], t["delta_low"], t["delta_high"])
    assert np.isclose(float(g["gain"]), 40.0)


def test_the_tables_command_reads_instances_and_predictions_and_writes_tables_intervals_and_figures(
    tmp_path, rasterized_figures
):
    from typer.testing import CliRunner

    from socialbench.cli import app

    inst = make_instances(6)
    runs = codar_runs(inst)
    (tmp_path / "i.jsonl").write_text("".join(json.dumps(i) + "\n" for i in inst))
    scores = []
    for (m, meth), recs in runs.items():
        pred = tmp_path / "pred" / m / f"{meth}.jsonl"
        pred.parent.mkdir(parents=True, exist_ok=True)
        pred.write_text("".join(json.dumps(r) + "\n" for r in recs))
        scores.append(tmp_path / "scores" / m / f"{meth}.json")
        scores[-1].parent.mkdir(parents=True, exist_ok=True)
        scores[-1].write_text(json.dumps(bench().score(inst, recs, source=str(pred))))
    (tmp_path / "params.yaml").write_text(
        "seed: 3\nmodels:\n  a: {backend: random, category: x}\n  b: {backend: random, category: y}\n"
        "moca: {methods: [direct, codar], tables: {resamples: 1000}}\n"
    )
    args = [
        "tables",
        "--benchmark",
        "moca",
        "--params",
        str(tmp_path / "params.yaml"),
        "--out-dir",
        str(tmp_path / "t"),
        "--headline",
        str(tmp_path / "h.json"),
        *map(str, scores),
    ]
    alone = CliRunner().invoke(app, [*args, "--instances", str(tmp_path / "i.jsonl")])
    assert isinstance(alone.exception, ConfigError) and "--instances and --predictions-dir go together" in str(
        alone.exception
    )
    res = CliRunner().invoke(
        app, [*args, "--instances", str(tmp_path / "i.jsonl"), "--predictions-dir", str(tmp_path / "pred")]
    )
    assert res.exit_code == 0, res.output
    out = tmp_path / "t"
    assert (out / "figures" / "fig9_gains.png").read_bytes().startswith(b"\x89PNG")
    assert len(read_csv((out / "intent.ci.csv").read_text())) == 4 * 9 and read_csv((out / "tests.csv").read_text())


def test_the_faith_test_is_the_paired_bootstrap_of_the_pair_on_its_own_seed():
    from socialbench.moca.results.correctness import correctness
    from socialbench.results import stats

    inst = make_instances()
    runs = codar_runs(inst)
    files, _ = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    labels, mechanisms = bench().taxonomy.as_sets()
    a, b = (correctness(inst, runs[k], labels, mechanisms)["stance"] for k in (("b", "codar"), ("b", "direct")))
    want = stats.paired_bootstrap_test(
        a,
        b,
        "faith",
        n_resamples=1000,
        seed=stats.cell_seed(7, "b", "codar", "vs", "b", "direct", "stance", "paired"),
        defs=STATS,
    )
    got = next(
        r for r in read_csv(files["tests.csv"]) if (r["model"], r["scenario"], r["metric"]) == ("b", "stance", "faith")
    )
    assert float(got["p"]) == pytest.approx(want.pvalue) and (float(got["delta_low"]), float(got["delta_high"])) == (
        want.low,
        want.high,
    )


def test_a_failed_record_counts_as_no_answer_in_the_intervals_as_in_the_scores():
    inst = make_instances(10)
    recs = answers(inst, "a", "direct", lambda k, f: True)
    recs[0] = {**recs[0], "error": "answer truncated at max_tokens"}  # its fields are gold, but it failed
    files, scores = run_tables(inst, {("a", "direct"): recs}, MODELS)
    row = next(r for r in read_csv(files["intent.ci.csv"]) if r["metric"] == "label")
    assert float(row["value"]) == scores[("a", "direct")]["intent"]["label"] == 90.0


def test_answers_csv_counts_invalid_output_and_repairs_per_run_and_scenario():
    inst = make_instances()
    runs = codar_runs(inst)
    for k, rec in enumerate(runs[("a", "codar")]):
        rec["format"] = {
            "retries": 1,
            "repairs": ["retry"] if k < 3 else [],
            "ignored_keys": [],
            "last_tuple_kept": None,
        }
    files, _ = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    rows = {(r["model"], r["method"], r["scenario"]): r for r in read_csv(files["answers.csv"])}
    a = rows[("a", "codar", "intent")]
    assert (a["repaired"], a["retry"], a["code_fence"], a["invalid_tuple"]) == ("3", "3", "0", "0")
    assert rows[("a", "direct", "intent")]["repaired"] == "0" and set(rows) == {
        (m, meth, s) for m in ("a", "b") for meth in ("direct", "codar") for s in ("intent", "stance")
    }


def test_the_scenario_notes_give_each_rows_invalid_rate_and_repaired_answers():
    inst = make_instances()
    runs = codar_runs(inst)
    for rec in runs[("a", "codar")][:2]:
        rec["format"] = {"retries": 0, "repairs": ["invalid_tuple"], "ignored_keys": [], "last_tuple_kept": None}
    files, scores = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    inv = scores[("a", "codar")]["intent"]["invalid_rate"]
    assert f"a + codar {inv:.2f} / 2 (invalid tuple 2)" in files["intent.md"]
