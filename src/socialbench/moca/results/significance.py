"""Paired tests between two rows of a table: exact McNemar (a paired bootstrap for Faith), the paired bootstrap interval
of each difference, Holm's correction within one family per compared pair of rows, and tests.csv with every p-value."""

from __future__ import annotations

from dataclasses import dataclass

from socialbench.moca.eval.scoring import STATS
from socialbench.moca.results.settings import TableSettings
from socialbench.moca.results.tables import LEVEL, row_name
from socialbench.results.stats import (
    cell_seed,
    holm,
    mcnemar_exact,
    paired_bootstrap_test,
    per_instance,
    percentile_interval,
    resample_metrics,
)
from socialbench.results.tables import SIGNED, csv_text

#: The paired test of two systems on the same instances, per metric (Faith is a ratio: no per-instance correctness).
PAIRED_TESTS = {
    **dict.fromkeys(("label", "subject", "target", "mechanism", "dyad"), "mcnemar_exact"),
    "faith": "paired_bootstrap",
    "holis": "mcnemar_exact",
}
TABLES_2_4 = "2-4"
#: Holm's family in each table (``with_holm``): one per compared pair of rows.
FAMILY = {
    TABLES_2_4: "a row against the same model's direct row",
    "5": "an ablation run against full CoDAR with the same backbone",
    "6": "the larger model against the smaller",
}


@dataclass(frozen=True)
class Comparison:
    """A paired test of row ``a`` against row ``b`` on one metric of one scenario."""

    table: str
    scenario: str
    a: tuple[str, str]
    b: tuple[str, str]
    metric: str
    delta: float | None
    low: float | None
    high: float | None
    test: str
    a_only: int | None
    b_only: int | None
    p: float | None
    resamples: int
    p_holm: float | None = None
    significant: bool = False


def paired_comparisons(
    table: str,
    scenario: str,
    a: tuple[str, str],
    b: tuple[str, str],
    metrics,
    ca,
    cb,
    deltas: dict[str, float | None],
    settings: TableSettings,
) -> list[Comparison]:
    """Row ``a`` against row ``b`` on each metric of one scenario, both resampled with the same draws."""
    seed = cell_seed(settings.seed, *a, "vs", *b, scenario, "paired")
    r = resample_metrics([ca, cb], defs=STATS, n_resamples=settings.resamples, seed=seed)
    out = []
    for metric in metrics:
        delta = deltas.get(metric)
        low = high = p = a_only = b_only = None
        if delta is not None:
            low, high, _ = percentile_interval(r[metric][0] - r[metric][1], LEVEL)  # NaN (left out): a ratio undefined
            if PAIRED_TESTS[metric] == "mcnemar_exact":
                p, a_only, b_only = mcnemar_exact(
                    per_instance(ca, metric, defs=STATS), per_instance(cb, metric, defs=STATS)
                )
            else:
                p = paired_bootstrap_test(
                    ca, cb, metric, defs=STATS, n_resamples=settings.resamples, seed=seed, level=LEVEL
                ).pvalue
        test, n = PAIRED_TESTS[metric], settings.resamples
        out.append(Comparison(table, scenario, a, b, metric, delta, low, high, test, a_only, b_only, p, n))
    return out


def with_holm(comparisons: list[Comparison], alpha: float) -> list[Comparison]:
    """Holm-Bonferroni within each family (one compared pair of rows in one table); no p-value: no family."""
    from dataclasses import replace

    out = list(comparisons)
    families: dict[tuple[str, tuple[str, str], tuple[str, str]], list[int]] = {}
    for i, c in enumerate(out):
        if c.p is not None:
            families.setdefault((c.table, c.a, c.b), []).append(i)
    for idx in families.values():
        h = holm([out[i].p for i in idx], alpha)
        for i, adj, rej in zip(idx, h.adjusted, h.reject):
            out[i] = replace(out[i], p_holm=float(adj), significant=bool(rej))
    return out


def holm_family(c: Comparison) -> str:
    """The name of a comparison's Holm family (tests.csv): table, then the pair of rows."""
    return f"table {c.table}: {row_name(*c.a)} vs {row_name(*c.b)}"


def tests_csv(comparisons: list[Comparison]) -> str:
    """tests.csv: every paired test of every table, its p-value, Holm-adjusted p-value and family."""
    columns = ["table", "scenario", "model", "method", "versus_model", "versus_method", "metric", "delta"]
    columns += ["delta_low", "delta_high", "test", "a_only", "b_only", "p", "p_holm", "significant", "resamples"]
    columns += ["holm_family", "holm_family_size"]
    sizes: dict[str, int] = {}
    for c in comparisons:
        if c.p is not None:
            sizes[holm_family(c)] = sizes.get(holm_family(c), 0) + 1

    def blank(v, fmt=lambda x: x):
        return "" if v is None else fmt(v)

    rows = []
    for c in sorted(comparisons, key=lambda c: (c.table, c.metric, c.scenario, c.a, c.b)):
        rows.append([c.table, c.scenario, *c.a, *c.b, c.metric, *(SIGNED.csv(v) for v in (c.delta, c.low, c.high))])
        rows[-1] += [c.test, blank(c.a_only), blank(c.b_only), *(blank(p, "{:.6g}".format) for p in (c.p, c.p_holm))]
        family = (holm_family(c), sizes.get(holm_family(c), 0)) if c.p is not None else ("", "")
        rows[-1] += [int(c.significant), c.resamples, *family]
    return csv_text(columns, rows)
