"""MoCA's tables as stage hooks (core ``ResultsHooks``): Tables 2-7, Figures 6, 7 and 9, the overall table,
answer stability and the trace viewer's rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from socialbench.core.benchmarks import Records, ResultsHooks, RunScores, pair_excluded
from socialbench.moca.results import viewer
from socialbench.moca.results.ablations import table5, table5_other_backbones
from socialbench.moca.results.answers import answers_csv
from socialbench.moca.results.completion import table7
from socialbench.moca.results.correctness import correctness_cells, run_summary
from socialbench.moca.results.paper import PaperTables
from socialbench.moca.results.paper_figures import paper_figures
from socialbench.moca.results.scaling import table6
from socialbench.moca.results.settings import TableSettings
from socialbench.moca.results.significance import tests_csv
from socialbench.moca.results.stability import stability_files
from socialbench.moca.results.tables import COLUMNS, exclusions_table, row_name, scenario_table
from socialbench.results.numbers import mean
from socialbench.results.scores import row_category
from socialbench.results.tables import Block, Document, Num, Row, Table, formats, json_mode_note, temperature_note

if TYPE_CHECKING:
    from socialbench.moca.benchmark import MocaBenchmark


def macro(scores: dict[str, dict[str, Any]], metric: str) -> float | None:
    """The unweighted mean of a metric over the scenarios; None when a scenario's value is undefined."""
    return mean(sc.get(metric) for sc in scores.values())


def tables_5_to_7(paper: Any) -> tuple[dict[str, Any], list[Any]]:
    """Tables 5-7's files, tests.csv and answers.csv of a ``PaperTables``, and the tables for all.md."""
    out, shown = {}, []
    for name, (t, ci) in zip(
        ("table5", "table5_other_backbones", "table6", "table7"),
        (table5(paper), table5_other_backbones(paper), table6(paper), table7(paper)),
    ):
        out.update(formats(name, t))
        out.update(formats(f"{name}.ci", ci, ("md", "csv")))
        shown.append(t)
    out["tests.csv"] = tests_csv(paper.comparisons)
    out["answers.csv"] = answers_csv(paper.answers or {})
    return out, shown


def overall_table(scores: dict[tuple[str, str], dict[str, Any]], categories: dict[str, str]) -> Any:
    """all.md's overall table: each run's metrics as the macro over the scenarios, rows in params order."""
    scenarios = sorted({s for sc in scores.values() for s in sc})
    ns = "/".join(str(n) for n in sorted({sc[s]["n"] for sc in scores.values() for s in sc}))
    order = list(categories)
    rows = []
    for (m, meth), sc in sorted(
        scores.items(), key=lambda kv: (order.index(kv[0][0]) if kv[0][0] in order else len(order), kv[0])
    ):
        values = [macro(sc, key) for _, key in COLUMNS]
        rows.append(Row([categories.get(m, ""), row_name(m, meth), *(Num(v) for v in values)]))
    title = f"Overall: macro over scenarios ({', '.join(scenarios)}; N = {ns} each)"
    return Table(title, [Block(["Category", "Model", *(h for h, _ in COLUMNS)], rows, keys=2)])


class MocaResults(ResultsHooks):
    benchmark: MocaBenchmark

    def run_summary(self, rows: Records, *, source: str) -> Any:
        """Per scenario the correctness matrix and answer counts; per instance the resolved answer's code."""
        return run_summary(rows, source)

    def tables(
        self, scores: RunScores, params: dict[str, Any], instances: Records | None = None, summaries: dict | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Tables 2-4 per scenario, Tables 5-7 and Figures 6, 7 and 9, with intervals and tests given the summaries."""
        categories = {m: row_category(e) for m, e in params["models"].items()}  # "(text-only)" where declared
        # pairs params exclude have no score files; one given anyway gets no row
        scores = {
            (m, meth): sc
            for (m, meth), sc in scores.items()
            if pair_excluded(params, self.benchmark.name, m, meth) is None
        }
        section = params.get(self.benchmark.name) or {}
        settings = TableSettings.from_params(params, self.benchmark.name)
        cells = answers = None
        if instances is not None and summaries is not None:
            cells = correctness_cells(summaries, scores)
            answers = {(m, meth, s): c for (m, meth) in scores for s, c in summaries[(m, meth)].answers.items()}
        paper = PaperTables(scores, categories, section.get("methods", []), settings, cells, answers)
        files: dict[str, Any] = {}
        shown_tables = []
        for s in paper.scenarios:
            rows = paper.named_rows(s)
            row_n = {row_name(m, meth): sc[s]["n"] for (m, meth), sc in scores.items() if s in sc}
            n = max(row_n.values(), default=None)  # the table's N; a row on fewer instances prints its own
            media = {row_name(m, meth): sc[s].get("media_errors", 0) for (m, meth), sc in scores.items() if s in sc}
            shown = {m for (m, _), sc in scores.items() if s in sc}
            # the notes, and rows whose runs sent no temperature or whose JSON constraint the server ignored
            decoding = [temperature_note(params["models"], shown), json_mode_note(params["models"], shown)]
            t = scenario_table(s, rows, n, media, paper.changes(s), row_n)
            t.md_notes = [*paper.scenario_notes(s), *(x for x in decoding if x)]
            shown_tables.append(t)
            files.update(formats(s, t))
            files.update(formats(f"{s}.ci", paper.scenario_ci(s), ("md", "csv")))
        grids, grid_tables = tables_5_to_7(paper)
        files.update(grids)
        files.update(paper_figures(paper))
        # the overall table after Tables 2-4 (which it summarises); the pairs params exclude at the end
        excluded = exclusions_table(params, section.get("methods", []))
        tail = [files["figures/fig9_means.md"], *([excluded] if excluded else [])]
        files["all.md"] = Document([*shown_tables, overall_table(scores, categories), *grid_tables, *tail])
        headline = {
            f"{m}.{meth}": {
                **{s: {k: sc[s][k] for k in ("dyad", "faith", "holis")} for s in sc},
                "overall": {k: macro(sc, k) for k in ("dyad", "faith", "holis")},
            }
            for (m, meth), sc in sorted(scores.items())
        }
        return files, headline

    def stability_tables(
        self, scores: RunScores, params: dict[str, Any], instances: Records | None = None, summaries: dict | None = None
    ) -> dict[str, str | bytes]:
        """stability.md/.csv/.tex: answer stability under option order, from the order runs' summaries."""
        return dict(stability_files(instances, summaries, params, self.benchmark.taxonomy))

    def viewer_rows(self, instances: Records, predictions: dict[str, dict], traces: dict[str, dict]) -> Records:
        labels, mechanisms = self.benchmark.taxonomy.as_sets()
        return viewer.rows(instances, predictions, traces, labels, mechanisms)


HOOKS = MocaResults
