"""Everything the tables stage adds to the scores: the paper's Tables 2-7, their 95% intervals and
paired tests, from the pipeline's own predictions (:class:`PaperTables`). Pure: numbers in, text out."""

from __future__ import annotations

from typing import Any

from socialbench.moca.eval.scoring import STATS
from socialbench.moca.results.answers import answers_note
from socialbench.moca.results.grids import ci_grid, moca_text
from socialbench.moca.results.settings import TableSettings
from socialbench.moca.results.significance import (
    FAMILY,
    PAIRED_TESTS,
    TABLES_2_4,
    Comparison,
    paired_comparisons,
    with_holm,
)
from socialbench.moca.results.tables import CI_METRICS, CODAR, COLUMNS, DIRECT, HEADER, LEVEL, row_name
from socialbench.results.numbers import difference
from socialbench.results.stats import bootstrap_cells, cell_seed, percentile_interval, resample_metrics
from socialbench.results.tables import Num, Table, Text


class PaperTables:
    """The paper's tables, figures and statistics of one set of scores (and per-instance correctness)."""

    def __init__(
        self,
        scores: dict[tuple[str, str], dict[str, Any]],
        categories: dict[str, str],
        methods: list[str],
        settings: TableSettings,
        cells: dict[tuple[str, str, str], Any] | None = None,
        answers: dict[tuple[str, str, str], dict[str, int]] | None = None,
    ):
        self.scores = scores
        self.answers = answers
        self.categories = categories
        self.models = list(categories)
        self.methods = [DIRECT, *(m for m in methods if m != DIRECT)]
        self.settings = settings
        self.cells = cells
        self.scenarios = sorted({s for sc in scores.values() for s in sc})
        self.cis = self._cell_intervals()
        self.comparisons = with_holm(self._comparisons(), settings.alpha)

    @property
    def human(self) -> str | None:
        """The human model, when it has a direct row."""
        h = self.settings.human
        return h if h is not None and self.has(h, DIRECT) else None

    def value(self, model: str, method: str, scenario: str, metric: str) -> float | None:
        return self.scores.get((model, method), {}).get(scenario, {}).get(metric)

    @property
    def ablation_runs(self) -> set[str]:
        """The runs of ``moca.ablations`` (``codar__<ablation>``): Table 5's rows only."""
        return {run for run, _ in self.settings.ablations}

    def has(self, model: str, method: str) -> bool:
        return (model, method) in self.scores

    def _method_rank(self, method: str) -> tuple[int, str]:
        return (self.methods.index(method), "") if method in self.methods else (len(self.methods), method)

    def rows(self, scenario: str) -> list[tuple[str, str, str]]:
        """(category, model, method) of a scenario table: the human's first, then params order (direct first)."""
        h = self.settings.human
        shown = [k for k, sc in self.scores.items() if scenario in sc and k[0] in self.categories]
        keys = sorted(
            (k for k in shown if k[1] not in self.ablation_runs),
            key=lambda k: (self.models.index(k[0]), self._method_rank(k[1])),
        )
        cats = list(dict.fromkeys(self.categories[m] for m in self.models if m != h))
        return [(self.categories[m], m, meth) for m, meth in keys if m == h] + [
            (cat, m, meth) for cat in cats for m, meth in keys if m != h and self.categories[m] == cat
        ]

    def named_rows(self, scenario: str) -> list[tuple[str, str, list[float | None]]]:
        """The rows in the renderers' form: (category, row name, values of COLUMNS)."""
        return [
            (cat, row_name(m, meth), [self.value(m, meth, scenario, key) for _, key in COLUMNS])
            for cat, m, meth in self.rows(scenario)
        ]

    def backbone_pairs(self) -> list[tuple[str, str]]:
        """(model, method) rows compared with the same model's direct row (not the human's, no ablations)."""
        return [
            (m, meth)
            for m in self.models
            if m != self.settings.human and self.has(m, DIRECT)
            for meth in sorted(
                (k[1] for k in self.scores if k[0] == m and k[1] != DIRECT and k[1] not in self.ablation_runs),
                key=self._method_rank,
            )
        ]

    def codar_backbones(self) -> list[str]:
        """Table 7 and Figure 9: params' backbones, or every model with a direct and a codar row."""
        names = self.settings.backbones or [m for m in self.models if m != self.settings.human]
        return [b for b in names if self.has(b, DIRECT) and self.has(b, CODAR)]

    def ablation_backbones(self) -> list[str]:
        """Table 5: every model with a codar row and at least one ablation row."""
        ablated = [m for m in self.models if any(self.has(m, a) for a, _ in self.settings.ablations)]
        return [m for m in ablated if m != self.settings.human and self.has(m, CODAR)]

    def table5_backbone(self) -> str | None:
        """Table 5's one backbone: params' ``ablation_backbone`` if it has the rows, else the first that has."""
        rows = self.ablation_backbones()
        named = self.settings.ablation_backbone
        if named is not None:
            return named if named in rows else None
        return rows[0] if rows else None

    def scaling_ready(self) -> bool:
        sc = self.settings.scaling
        return sc is not None and self.has(sc[0], DIRECT) and self.has(sc[1], DIRECT)

    def _cell_intervals(self) -> dict[tuple[str, str, str], Any]:
        if self.cells is None:
            return {}
        return bootstrap_cells(
            self.cells, defs=STATS, n_resamples=self.settings.resamples, seed=self.settings.seed, level=LEVEL
        )

    def _compare(self, table: str, a: tuple[str, str], b: tuple[str, str], metrics) -> list[Comparison]:
        out = []
        for s in self.scenarios:
            ca, cb = self.cells.get((*a, s)), self.cells.get((*b, s))
            if ca is None or cb is None:
                continue
            deltas = {metric: difference(self.value(*a, s, metric), self.value(*b, s, metric)) for metric in metrics}
            out += paired_comparisons(table, s, a, b, metrics, ca, cb, deltas, self.settings)
        return out

    def _comparisons(self) -> list[Comparison]:
        if self.cells is None:
            return []
        out = []
        for m, meth in self.backbone_pairs():
            out += self._compare(TABLES_2_4, (m, meth), (m, DIRECT), PAIRED_TESTS)
        for m in self.ablation_backbones():
            for meth, _ in self.settings.ablations:
                if self.has(m, meth):
                    out += self._compare("5", (m, meth), (m, CODAR), ("dyad", "faith", "holis"))
        if self.scaling_ready():
            small, large = self.settings.scaling
            out += self._compare("6", (large, DIRECT), (small, DIRECT), ("dyad", "holis"))
        return out

    def comparison(self, table: str, a: tuple[str, str], scenario: str, metric: str) -> Comparison | None:
        key = (table, a, scenario, metric)
        return next((c for c in self.comparisons if (c.table, c.a, c.scenario, c.metric) == key), None)

    def significant(self, table: str, a: tuple[str, str], scenario: str, metric: str) -> bool:
        c = self.comparison(table, a, scenario, metric)
        return c is not None and c.significant

    def cell(self, model: str, method: str, scenario: str, metric: str, **kw: Any) -> Num:
        """A cell of a (model, method) row with its interval when there is one."""
        v = self.value(model, method, scenario, metric)
        ci = self.cis.get((model, method, scenario))
        if ci is None:
            return Num(v, **kw)
        iv = ci[metric]
        return Num(v, **kw, low=iv.low, high=iv.high, undefined=ci.undefined[metric], has_ci=iv.point is not None)

    def resampled(self, systems, *parts):
        return resample_metrics(
            systems, defs=STATS, n_resamples=self.settings.resamples, seed=cell_seed(self.settings.seed, *parts)
        )

    def interval(self, value: float | None, values, **kw: Any) -> Num:
        if value is None:
            return Num(None, **kw)
        low, high, undefined = percentile_interval(values, LEVEL)
        return Num(value, **kw, low=low, high=high, undefined=undefined, has_ci=True)

    def ci_notes(self) -> list[str]:
        if self.cells is None:
            return ["No intervals: the tables stage ran without --instances and --outcomes-dir (per-instance data)."]
        return [
            f"value [low, high]: 95% instance-level percentile bootstrap, {self.settings.resamples} resamples seeded"
            f" from seed {self.settings.seed} and the cell; a ratio (Faith, C_sem|dyad, their averages) is recomputed"
            " per resample, and resamples where it is undefined (denominator 0) are left out and counted (undef.)."
        ]

    def tests_note(self, table: str, what: str) -> str:
        if self.cells is None:
            return "No paired tests: the tables stage ran without --instances and --outcomes-dir."
        where = "Tables 2-4" if table == TABLES_2_4 else f"Table {table}"
        return (
            f"*: {what} significant at {self.settings.alpha:g} after Holm's correction within one family per"
            f" compared pair of rows ({FAMILY[table]}): all of that pair's scenario x metric tests in {where},"
            " whatever other rows were run; tests.csv has every p-value and its family."
        )

    def changes(self, scenario: str) -> dict[str, list[tuple[float, bool] | None]]:
        """Row name -> per column, the change over the backbone and whether its test is significant (+3.12*)."""
        out = {}
        for m, meth in self.backbone_pairs():
            if scenario not in self.scores[(m, meth)]:
                continue
            row = []
            for _, key in COLUMNS:
                d = difference(self.value(m, meth, scenario, key), self.value(m, DIRECT, scenario, key))
                row.append(None if d is None else (d, self.significant(TABLES_2_4, (m, meth), scenario, key)))
            out[row_name(m, meth)] = row
        return out

    def scenario_notes(self, scenario: str) -> list[Text]:
        """Lines under a scenario table: the human row, the changes and their tests, the intervals."""
        lines = []
        if self.settings.human is None:
            lines.append(
                "Human row: none; name the model that holds human answers (backend file) in moca.tables.human."
            )
        elif self.human is None:
            lines.append(f"Human row: none; {self.settings.human} (moca.tables.human) has no direct row.")
        if self.backbone_pairs():
            lines.append(
                "(+x / -x): change over the same model's direct row (its backbone), in points. "
                + self.tests_note(TABLES_2_4, "paired test (exact McNemar; paired bootstrap for Faith)")
            )
        rows = [(row_name(m, meth), m, meth, scenario) for _, m, meth in self.rows(scenario)]
        lines.append(answers_note(rows, self.scores, self.answers))
        lines.append(
            f"95% bootstrap intervals of every cell: {scenario}.ci.md."
            if self.cells is not None
            else "No bootstrap intervals: the tables stage ran without --instances and --outcomes-dir."
        )
        return [moca_text(x) for x in lines]

    def scenario_ci(self, scenario: str) -> Table:
        """``<scenario>.ci.md`` and ``.ci.csv``: every cell of the scenario table with its 95% interval."""
        n = next((sc[scenario]["n"] for sc in self.scores.values() if scenario in sc), None)
        columns = ["Category", "Model", *(HEADER[k] for k in CI_METRICS)]
        rows = [
            [cat, row_name(m, meth), *(self.cell(m, meth, scenario, k) for k in CI_METRICS)]
            for cat, m, meth in self.rows(scenario)
        ]
        title = f"{scenario.capitalize()}: 95% bootstrap intervals" + (f" (N = {n})" if n else "")
        t = ci_grid(f"{scenario}.ci", title, columns, 2, rows, self.ci_notes())
        heads = ["category", "model", "method", "metric", "value", "low", "high", "undefined_resamples", "n"]
        lines = []
        for cat, m, meth in self.rows(scenario) if self.cells is not None else []:
            ci = self.cis[(m, meth, scenario)]
            for k in CI_METRICS:
                values = (Num(v) for v in ci[k])
                lines.append([cat, m, meth, k, *values, ci.undefined[k], ci.n, ci.n_resamples, ci.level])
        t.csv = ([*heads, "resamples", "level"], lines)
        return t
