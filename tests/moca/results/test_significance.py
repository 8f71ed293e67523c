"""Paired tests (socialbench.moca.results.significance): exact McNemar, the paired bootstrap for Faith,
Holm's families, the marks in the tables."""

import math

import pytest

from socialbench.moca.eval.scoring import STATS
from tests.helpers.outcomes import run_summary
from tests.moca.results.paper_runs import (
    MODELS,
    SCENARIOS,
    bench,
    codar_runs,
    make_instances,
    md_row,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


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


def test_the_faith_test_is_the_paired_bootstrap_of_the_pair_on_its_own_seed():
    from socialbench.results import stats

    inst = make_instances()
    runs = codar_runs(inst)
    files, _ = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    a, b = (run_summary(bench(), inst, runs[k]).cells["stance"] for k in (("b", "codar"), ("b", "direct")))
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
