"""MeetingToM result tables in the style of the paper's Tables 1-6 (docs/meetingtom.md), Figure 4 and the
headline; pure. Cells carry 95% bootstrap intervals (:mod:`.intervals`); built in the shared model
(``socialbench.results.tables``) with rows keyed by category, model, method and setting, so the CSV is long."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

from socialbench.core.benchmarks import pair_excluded
from socialbench.core.run_name import RunName
from socialbench.meetingtom.eval.scoring import F1_TASKS, Group, keyed_by_group, macro_f1
from socialbench.meetingtom.results.figures import label_distribution
from socialbench.meetingtom.results.intervals import accuracy_ci, conditional_ci, instance_values, macro_f1_ci
from socialbench.meetingtom.schema.questions import TASKS, TITLES
from socialbench.meetingtom.schema.settings import SOURCES
from socialbench.results import numbers
from socialbench.results import tables as rt
from socialbench.results.layout import exclusions
from socialbench.results.scores import row_category
from socialbench.results.tables import Num, NumStyle, json_mode_note, temperature_note

SOURCE_TITLES = {"demo": "demo meetings", "ami": "AMI meetings"}
#: Numbers as the paper writes them: "-" when missing, ↑2.30 / ↓0.50 for a change; the CSV as they print.
STYLE = NumStyle(missing="-", tex_missing=None, change="arrow", csv_bare=True)
BASE = "no_prompt"
METHOD_LABELS = {"no_prompt": "No Prompt", "naive_cot": "Naive-CoT", "task_cot": "Task-CoT", "ecot": "ECoT"}
PROMPTING = ("no_prompt", "naive_cot", "task_cot", "ecot")
#: (task, metric, header) of every column, in the paper's order.
COLUMNS = (
    ("task1", "accuracy", "T1 Acc"),
    ("task1", "macro_f1", "T1 Macro-F1"),
    ("task2_1", "accuracy", "T2.1 Acc"),
    ("task2_2", "accuracy", "T2.2 Acc"),
    ("task3_1", "accuracy", "T3.1 Acc"),
    ("task3_1", "macro_f1", "T3.1 Macro-F1"),
    ("task3_2", "accuracy", "T3.2 Acc"),
)
#: Tables 3 and 6's last column: the run's share of invalid answers over all its instances of the source.
INVALID_COLUMN = ("all", "invalid_rate", "Invalid %")
#: "Task 1", "Task 2.1"...: each task's title up to its colon.
TASK_NAMES = {t: TITLES[t].split(":", 1)[0] for t in TASKS}
#: name, title, ablation table key (None: not an ablation table), whether rows show a change from the base run
ABLATION_TABLES = (
    ("table2_modality", "Table 2: ablation of input modalities", "modality", False),
    ("table4_priors", "Table 4: contextual priors", "priors", True),
    ("table5_markers", "Table 5: discourse-marker ablation", "markers", True),
    ("table_view", "Views: camera view ablation", "view", False),
    ("table_ingestion", "Video ingestion: native video or sampled frames", "ingestion", False),
)
TABLE_NAMES = (
    "table1_overall",
    "table2_modality",
    "table3_prompting",
    "table4_priors",
    "table5_markers",
    "table6_prompting_additional",
    "table_view",
    "table_ingestion",
    "all_runs",
)
FIGURE_FILES = (
    "figures/figure4_label_distribution.png",
    "figures/figure4_label_distribution.pdf",
    "figures/figure4.csv",
)
#: The note under an ablation table of that kind.
ABLATION_NOTES = {
    "modality": "A run with the source's own modality is its base row, shown once; a run with video on a source"
    " without media makes no call and reads 'not evaluated: no video in this source'.",
    "priors": "As in the paper's Table 4, Task 1 is not evaluated with contextual priors (n=0): its cells of the"
    " prior rows are not filled, whatever the run answered.",
}
NOT_EVALUATED = "n=0, not evaluated"
F1_NOTE = (
    "Macro-F1 intervals need each instance's answer: run `socialbench tables` with --instances and"
    " --outcomes-dir (Macro-F1 cells show no interval here)."
)
T32_NOTE = "T3.2 Acc counts only the instances whose paired Task 3.1 answer is correct (n per cell; MeetingToM 4.1)."
NO_VIDEO = "not evaluated: no video in this source"
#: Where each source's gold comes from, as its rows say (the real corpus: AMI's own addressee layer).
GOLD = {"ami": "gold: AMI addressee annotations, not the paper's human annotation"}


def output_files(with_figures: bool = True) -> list[str]:
    """Every file ``tables`` writes (the figure's only when it is given the instances)."""
    figures = list(FIGURE_FILES) if with_figures else []
    return [f"{t}.{ext}" for t in TABLE_NAMES for ext in ("md", "csv", "tex")] + figures


# ---- changes ---------------------------------------------------------------------------------------
def difference(a: Num, b: Num) -> float | None:
    """``a - b`` from the unrounded (``exact``) values where both have them, else from the printed ones."""
    if a.value is None or b.value is None:
        return None
    exact = a.exact is not None and b.exact is not None
    return numbers.difference(a.exact, b.exact) if exact else numbers.difference(a.value, b.value)


# ---- the table model: rows show category, model and setting; their key adds the method (CSV only) ----
CHANCE = "chance"
#: No cell at all (a run without that group): "-" ("--" in LaTeX), no CSV line.
MISSING = rt.Text("-", tex="--")
KEY_HEADS = tuple(rt.Text(h.lower(), md=h.lower(), tex=h) for h in ("Category", "Model", "Setting"))
INTRO = "Cells: value [95% bootstrap interval]; invalid answers count as wrong."


def table_row(category: str, model: str, method: str, setting: str, cells: list[rt.Cell]) -> rt.Row:
    """A row: its keys shown, then its cells; the chance row under a rule."""
    return rt.Row(
        [category, model, setting, *cells], rule_before=category == CHANCE, key=(category, model, method, setting)
    )


class Context:
    """What every table is built from: the runs kept, params, and per-instance values for Macro-F1 intervals."""

    def __init__(self, scores: Mapping[tuple[str, str], Mapping[str, Any]], params: Mapping[str, Any]):
        self.models = params.get("models") or {}
        # a model declared text-only (modalities: []) shows "(text-only)" after its category
        self.categories = {m: row_category(e) for m, e in self.models.items()}
        self.section = params.get("meetingtom") or {}
        self.methods = list(self.section.get("methods") or [])
        self.ablations = self.section.get("ablations") or {}
        self.prompting_models = list((self.section.get("tables") or {}).get("prompting_models") or [])
        self.seed = int(params.get("seed", 0))
        # by group (score files key them by the groups' string forms)
        by_group = {k: keyed_by_group(sc) for k, sc in scores.items()}
        self.scores = {k: sc for k, sc in by_group.items() if pair_excluded(params, "meetingtom", k[0], k[1]) is None}
        self.all_scores = by_group
        # (model, method, group) -> (gold, predicted) values, when the tables are given the outcomes
        self.values: Mapping[tuple[str, str, Group], tuple[list[Any], list[Any]]] | None = None
        self.groups = sorted({g for sc in by_group.values() for g in sc})
        self.excluded_notes = excluded_notes(params, self.methods)

    def order(self, model: str) -> tuple[int, int, str]:
        """Human rows first, then the categories in the order params' models introduce them."""
        cats = list(dict.fromkeys(self.categories.values()))
        cat = self.categories.get(model, "")
        return (0 if cat.startswith("human") else 1, cats.index(cat) if cat in cats else len(cats), model)

    def source_modality(self, source: str) -> str | None:
        """What the source's instances give the model (params ``meetingtom.<source>.modality``)."""
        return (self.section.get(source) or {}).get("modality")

    def run_modality(self, method: str, source: str) -> str | None:
        """The modality a run shows: its ablation's (or method options'), else the source's own."""
        rn = RunName.parse(method)
        own = (self.section.get("method_options") or {}).get(rn.method) or {}
        ablation = (self.ablations.get(rn.ablation) or {}) if rn.ablation else {}
        return ablation.get("modality") or own.get("modality") or self.source_modality(source)

    def source_setting(self, source: str) -> str:
        """What a source's base rows use, for the real corpus (``""`` for the demo)."""
        if source not in GOLD:
            return ""
        return f" ({self.source_modality(source) or 'the source modality'}; {GOLD[source]})"

    def cell(self, model: str, method: str, task: str, metric: str, source: str) -> Num | None:
        if metric == "invalid_rate":  # the run's invalid answers over all its instances of the source
            groups = [m for g, m in (self.scores.get((model, method)) or {}).items() if g.source == source]
            total = sum(m["n_total"] for m in groups)
            exact = 100 * Fraction(sum(m["invalid"] for m in groups), total) if total else None
            return Num(numbers.half_up(exact), exact=exact) if total else None
        g = Group(task, source)
        m = (self.scores.get((model, method)) or {}).get(g)
        if m is None:
            return None
        video = self.run_modality(method, "") in ("video", "both")
        if m["n"] == 0 and video and self.source_modality(source) == "utterances":
            return Num(text=NO_VIDEO)  # a video run on a source without media: no call was made
        if m["n"] == 0 and task != "task3_2":  # the run evaluates none (recorded answers that miss them)
            return Num(text=NOT_EVALUATED)
        # a row on fewer instances than the column's (the rest not evaluated: a human row answered on a
        # subset) prints its own n; Task 3.2 prints its conditional n always
        own_n = m["n"] if m["n"] < m["n_total"] else None
        if metric == "macro_f1":
            low = high = exact = None
            if self.values is not None and (model, method, g) in self.values and m["macro_f1"] is not None:
                gold, pred = self.values[(model, method, g)]
                low, high = macro_f1_ci(gold, pred, self.seed, (model, method, g, "macro_f1"))
                exact = 100 * macro_f1(gold, pred)
            return Num(m["macro_f1"], low=low, high=high, has_ci=low is not None, exact=exact, n=own_n)
        exact = 100 * Fraction(m["correct"], m["n"]) if m["n"] else None
        if task == "task3_2":
            low, high = conditional_ci(m["correct"], m["n"], m["n_total"], self.seed, (model, method, g))
            return Num(m["accuracy"], low=low, high=high, has_ci=low is not None, n=m["n"], exact=exact)
        low, high = accuracy_ci(m["correct"], m["n"], self.seed, (model, method, g))
        return Num(m["accuracy"], low=low, high=high, has_ci=low is not None, exact=exact, n=own_n)

    def row(
        self,
        model: str,
        method: str,
        setting: str,
        source: str,
        columns,
        base: str | None = None,
        not_evaluated: Sequence[str] = (),
    ) -> rt.Row:
        """A run's row; ``base``: the run whose score each cell shows its change from; ``not_evaluated``:
        tasks whose cells read "n=0, not evaluated", whatever the run answered (Table 4's Task 1)."""
        cells: list[rt.Cell] = []
        for task, metric, _ in columns:
            if task in not_evaluated:
                cells.append(Num(text=NOT_EVALUATED))
                continue
            c = self.cell(model, method, task, metric, source)
            if c is not None and base is not None and metric != "invalid_rate":  # a change only for scores
                b = self.cell(model, base, task, metric, source) if (model, base) in self.scores else None
                c = replace(c, has_delta=b is not None, delta=difference(c, b) if b is not None else None)
            cells.append(MISSING if c is None else c)
        return table_row(self.categories.get(model, ""), model, method, setting, cells)

    def chance_row(self, source: str, columns) -> rt.Row:
        any_sc = next(iter(self.all_scores.values()), {})
        cells: list[rt.Cell] = []
        for task, metric, _ in columns:
            m = any_sc.get(Group(task, source))
            cells.append(MISSING if m is None else Num(m["chance"]) if metric == "accuracy" else Num(text="-"))
        return table_row(CHANCE, "uniform guess", "", "", cells)

    def sections(self, make_rows, extra: Sequence[tuple[str, str, str]] = ()) -> tuple[list[rt.Block], list[str]]:
        """A block per source with instances (its notes under it); notes for absent sources and tasks.
        ``extra``: columns after the tasks' (the invalid rate: its n is all the source's instances)."""
        out, notes = [], []
        for src in SOURCES:
            tasks: dict[str, int] = {}
            for g in self.groups:
                if g.source == src:
                    tasks[g.task] = next(sc[g]["n_total"] for sc in self.all_scores.values() if g in sc)
            if not tasks:
                where = (self.section.get("ami") or {}).get("mirror") if src == "ami" else "the demo release"
                notes.append(
                    f"No instances from the {SOURCE_TITLES[src]}: the source ({where}) was absent or gave none when"
                    f" the data stages ran (see data/processed/meetingtom/{src}/source.json)."
                )
                continue
            cols = [c for c in COLUMNS if c[0] in tasks]
            missing = [TASK_NAMES[t] for t in TASK_NAMES if t not in tasks]
            snotes = [missing_note(src, missing, self.section)] if missing else []
            if "task3_2" in tasks:
                snotes.append(T32_NOTE)
            if extra:
                cols = cols + list(extra)
                tasks = {**tasks, INVALID_COLUMN[0]: sum(tasks.values())}
            rows = make_rows(src, cols)
            out.append(
                rt.Block(
                    [*KEY_HEADS, *(f"{head} (n={tasks[task]})" for task, _, head in cols)],
                    rows,
                    keys=len(KEY_HEADS),
                    title=SOURCE_TITLES[src],
                    notes=snotes,
                    empty=None if [r for r in rows if r.key[0] != CHANCE] else "(no runs)",
                    align="lll" + "c" * len(cols),
                    key=(src,),
                    column_keys=[(task, metric, tasks[task]) for task, metric, _ in cols],
                )
            )
        return out, notes

    def f1_note(self) -> list[str]:
        return [F1_NOTE] if self.values is None else []


def missing_note(src: str, missing: Sequence[str], section: Mapping[str, Any]) -> str:
    """The note on the tasks a source has no instances of (on the real corpus without sheets, why)."""
    head = f"No {', '.join(missing)} instances from the {SOURCE_TITLES[src]}"
    if src == "ami" and not (section.get("annotation") or {}).get("ami"):
        return (
            f"{head}: on the real corpus only Task 2.1 has gold (AMI's addressee annotations); the other tasks"
            " need human annotation sheets, and params meetingtom.annotation.ami names none, so those columns"
            " are left out."
        )
    return f"{head}: those columns are left out."


def method_label(method: str, ablations: Mapping[str, Any]) -> str:
    rn = RunName.parse(method)
    label = METHOD_LABELS.get(rn.method, rn.method)
    if rn.ablation is None:
        return label
    alabel = (ablations.get(rn.ablation) or {}).get("label", rn.ablation)
    return alabel if rn.method == BASE else f"{label}, {alabel}"


def excluded_notes(params: Mapping[str, Any], methods: Sequence[str]) -> list[str]:
    """One note per model and reason that skips runs (a model kept off MeetingToM by ``benchmarks:`` is not named)."""
    by_model: dict[str, dict[str, list[str]]] = {}
    for m, meth, reason in exclusions(params, "meetingtom", sorted(methods)):
        by_model.setdefault(m, {}).setdefault(reason, []).append(meth)
    out = []
    for m, reasons in by_model.items():
        for reason, skipped in reasons.items():
            what = "on MeetingToM" if len(skipped) == len(methods) else f"with {', '.join(skipped)}"
            out.append(f"{m} is not run {what}: {reason}")
    return out


# ---- the tables -----------------------------------------------------------------------------------
def table1(ctx: Context) -> rt.Table:
    models = sorted({m for m, meth in ctx.scores if meth == BASE}, key=ctx.order)

    def rows(src, cols):
        label = METHOD_LABELS[BASE] + ctx.source_setting(src)
        return [ctx.row(m, BASE, label, src, cols) for m in models] + [ctx.chance_row(src, cols)]

    sections, notes = ctx.sections(rows)
    if not models:
        notes.insert(
            0, f"No `{BASE}` run scored: add `{BASE}` to meetingtom.methods in params.yaml for this table's rows."
        )
    notes.append(
        "Chance: expected accuracy of uniform guessing over each instance's options (Task 3.2: over the non-empty"
        " subsets of its participants); no Macro-F1 is given for it."
    )
    return table("Table 1: overall performance (accuracy and Macro-F1, %)", sections, notes + ctx.f1_note())


def prompting_table(ctx: Context, title: str, models: list[str], missing_note: str) -> rt.Table:
    def rows(src, cols):
        out = []
        for m in models:
            for meth in PROMPTING:
                if (m, meth) in ctx.scores:
                    out.append(ctx.row(m, meth, METHOD_LABELS[meth], src, cols, base=None if meth == BASE else BASE))
        return out

    sections, notes = ctx.sections(rows, extra=[INVALID_COLUMN])
    if not models:
        notes.insert(0, missing_note)
    notes.append("CoT rows: the score and its change from the same model's No Prompt (↑ improvement, ↓ degradation).")
    notes.append(
        "Invalid %: answers that could not be read (one answer rule for every method, scored wrong), over all"
        " the run's instances of the source."
    )
    return table(title, sections, notes + ctx.f1_note())


def ablation_table(ctx: Context, title: str, kind: str, with_delta: bool) -> rt.Table:
    names = [a for a, e in ctx.ablations.items() if (e or {}).get("table") == kind]
    runs = sorted(
        {(m, meth) for m, meth in ctx.scores if RunName.parse(meth).ablation in names},
        key=lambda k: (ctx.order(k[0]), RunName.parse(k[1]).method, names.index(RunName.parse(k[1]).ablation)),
    )

    def rows(src, cols):
        out, seen = [], set()
        for m, meth in runs:
            base = RunName.parse(meth).method
            if (m, base) not in seen and (m, base) in ctx.scores:
                seen.add((m, base))
                label = method_label(base, ctx.ablations)
                if kind == "priors" and base == BASE:
                    label = "none"
                elif kind == "modality" and base == BASE:  # the base run shows the source's own modality
                    label = f"{label} ({(ctx.section.get(src) or {}).get('modality', 'the source modality')})"
                out.append(ctx.row(m, base, label, src, cols))
            if kind == "modality" and ctx.run_modality(meth, src) == ctx.run_modality(base, src):
                continue  # the same input as the base row above (e.g. utterances only on the real corpus)
            skip = ("task1",) if kind == "priors" else ()  # as Table 4: Task 1 not evaluated with priors
            delta = base if with_delta else None
            out.append(ctx.row(m, meth, method_label(meth, ctx.ablations), src, cols, base=delta, not_evaluated=skip))
        return out

    sections, notes = ctx.sections(rows)
    if not runs:
        add = f"{', '.join(f'`{BASE}__{a}`' for a in names)} to meetingtom.methods in params.yaml"
        if not names:
            add = f"an ablation with `table: {kind}` under meetingtom.ablations and its run `{BASE}__<ablation>`"
            add += " to meetingtom.methods in params.yaml"
        notes.insert(0, f"No runs for this table: add {add}.")
    notes += [ABLATION_NOTES[kind]] if kind in ABLATION_NOTES else []
    if with_delta:
        notes.append(
            "Ablation rows: the score and its change from the run without the ablation (↑ improvement, ↓ degradation)."
        )
    return table(title, sections, notes + ctx.f1_note())


def all_runs_table(ctx: Context) -> rt.Table:
    runs = sorted(ctx.scores, key=lambda k: (ctx.order(k[0]), k[1]))

    def rows(src, cols):
        return [ctx.row(m, meth, method_label(meth, ctx.ablations), src, cols) for m, meth in runs] + [
            ctx.chance_row(src, cols)
        ]

    sections, notes = ctx.sections(rows)
    run_models = {m for m, _ in runs}
    decoding = [n for n in (temperature_note(ctx.models, run_models), json_mode_note(ctx.models, run_models)) if n]
    # the pairs params exclude, listed once for the benchmark: here, not under every table
    return table("Every run scored", sections, notes + ctx.f1_note() + decoding + ctx.excluded_notes)


def build_tables(ctx: Context) -> dict[str, rt.Table]:
    """{name: table} of ``TABLE_NAMES``, in that order."""
    prompting = list(ctx.prompting_models)
    others = sorted({m for m, meth in ctx.scores if meth in PROMPTING[1:] and m not in prompting}, key=ctx.order)
    out = {name: ablation_table(ctx, title, kind, delta) for name, title, kind, delta in ABLATION_TABLES}
    out["table1_overall"] = table1(ctx)
    no_models = "No models for this table: list them under meetingtom.tables.prompting_models in params.yaml."
    out["table3_prompting"] = prompting_table(ctx, "Table 3: prompting strategies", prompting, no_models)
    no_others = "No other model has a prompting run (naive_cot, task_cot, ecot in meetingtom.methods)."
    title = "Table 6: prompting strategies, additional models"
    out["table6_prompting_additional"] = prompting_table(ctx, title, others, no_others)
    out["all_runs"] = all_runs_table(ctx)
    return {name: out[name] for name in TABLE_NAMES}


# ---- the table and its CSV ----------------------------------------------------------------------
CSV_COLUMNS = (
    "source",
    "category",
    "model",
    "method",
    "setting",
    "task",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "n_total",
    "delta",
    "note",
)


def csv_lines(t: rt.Table) -> list[list[Any]]:
    """The long format: one line per cell, from the keys of its block, row and column (``rt.keyed_cells``)."""
    out = []
    for source, row, (task, metric, n_total), c in rt.keyed_cells(t):
        n = c.n if c.n is not None else ("" if c.text else n_total)
        interval = [Num(c.value), Num(c.low), Num(c.high)]
        out.append([*source, *row, task, metric, *interval, n, n_total, Num(c.delta), c.text or ""])
    return out


def table(title: str, blocks: list[rt.Block], notes: list[str]) -> rt.Table:
    """A table of per-source blocks: title as heading and caption, notes as paragraphs, long format as CSV."""
    t = rt.Table(title, blocks, level=1, caption=title, intro=[INTRO], notes=notes, layout="sections", style=STYLE)
    return replace(t, csv=(CSV_COLUMNS, csv_lines(t)))


def tables(
    scores: Mapping[tuple[str, str], Mapping[str, Any]],
    params: Mapping[str, Any],
    instances: list[dict[str, Any]] | None = None,
    summaries: Mapping[tuple[str, str], Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``({file name: table or bytes}, headline)``: the tables in three formats, Figure 4 with ``instances``,
    and the headline ``{"<model>.<method>": {group: {"accuracy", "macro_f1" (F1 tasks)}}}`` of every run kept."""
    ctx = Context(scores, params)
    if instances is not None and summaries is not None:
        ctx.values = instance_values(summaries, ctx.scores)
    files: dict[str, Any] = {}
    for name, t in build_tables(ctx).items():
        files.update(rt.formats(name, t))
    if instances is not None:
        files.update(label_distribution(instances))
    headline = {
        f"{m}.{meth}": {
            str(g): {"accuracy": sc[g]["accuracy"], **({"macro_f1": sc[g]["macro_f1"]} if g.task in F1_TASKS else {})}
            for g in sorted(sc)
        }
        for (m, meth), sc in sorted(ctx.scores.items())
    }
    return files, headline
