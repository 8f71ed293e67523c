"""Result tables per scenario, as the paper's Tables 2-4: rows are models grouped by category;
columns Lab, Subj, Tgt, Mech, Dyad, Faith, Holis. Rendered as Markdown, CSV and LaTeX (booktabs).
Pure functions: they take scores and return strings (``socialbench.results.scores.collect_scores`` checks
that a set of score files makes one coherent table)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from socialbench.core.errors import ConfigError, DataError
from socialbench.moca.eval.scoring import STATS
from socialbench.results.tables import Block, Table, Text, csv_text, grouped, md_escape, tex_escape
from socialbench.results.tables import to_csv as render_csv
from socialbench.results.tables import to_latex as render_latex
from socialbench.results.tables import to_markdown as render_markdown

COLUMNS = (
    ("Lab", "label"),
    ("Subj", "subject"),
    ("Tgt", "target"),
    ("Mech", "mechanism"),
    ("Dyad", "dyad"),
    ("Faith", "faith"),
    ("Holis", "holis"),
)
METHOD_SUFFIX = {"direct": ""}


def row_name(model: str, method: str) -> str:
    suffix = METHOD_SUFFIX.get(method, f" + {method}")
    return f"{model}{suffix}"


def build_rows(
    scores: dict[tuple[str, str], dict[str, Any]], categories: dict[str, str], scenario: str
) -> list[tuple[str, str, list[float | None]]]:
    """(category, row name, values) in category order of first appearance, then params order."""
    model_order = list(categories)
    cat_order: list[str] = []
    for m in model_order:
        if categories[m] not in cat_order:
            cat_order.append(categories[m])
    rows = []
    for cat in cat_order:
        for (model, method), sc in sorted(scores.items(), key=lambda kv: (model_order.index(kv[0][0]), kv[0][1])):
            if categories.get(model) != cat or scenario not in sc:
                continue
            rows.append((cat, row_name(model, method), [sc[scenario].get(key) for _, key in COLUMNS]))
    return rows


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"


_md_cell = md_escape


def n_note(n: int | None, rows, media_errors: dict[str, int] | None) -> str:
    """The sentence under a table: N, and how many of the N instances had media that failed at
    evaluation time (kept and scored invalid, never dropped); per row when the rows differ.
    ``media_errors``: row name -> count (the score files' ``media_errors``)."""
    if n is None or media_errors is None:
        return ""
    counts = {name: media_errors.get(name, 0) for _, name, _ in rows}
    if len(set(counts.values())) > 1:
        per_row = ", ".join(f"{name} {k}" for name, k in counts.items())
        return f"N = {n} per row; instances whose media failed at evaluation time (kept, scored invalid): {per_row}."
    k = next(iter(counts.values()), 0)
    if k == 0:
        return f"N = {n} per row; no instance had media that failed at evaluation time."
    return f"N = {n} per row; {k} of them had media that failed at evaluation time (kept, scored invalid)."


def _tex_note(note: str) -> str:
    """A change beside a value: +3.12, with $^{*}$ for a significant test (±0.00: no change)."""
    return tex_escape(note).replace("*", "$^{*}$")


def best_in_category(rows) -> set[tuple[str, int]]:
    """(row name, column index) of the best value of each column within each category, ties all
    marked, as the paper's Tables 2-4 mark them (green there, bold here); a category of one row is
    not marked (its values are best only trivially: the human row is such a one)."""
    by_cat: dict[str, list[tuple[str, list[float | None]]]] = {}
    for cat, name, vals in rows:
        by_cat.setdefault(cat, []).append((name, vals))
    best = set()
    for members in by_cat.values():
        if len(members) < 2:
            continue
        for j in range(len(members[0][1])):
            values = [vals[j] for _, vals in members if vals[j] is not None]
            if values:
                top = max(values)
                best |= {(name, j) for name, vals in members if vals[j] == top}
    return best


def _marked(text: str, best: bool, fmt: str) -> str:
    return text if not best else (f"**{text}**" if fmt == "md" else f"\\textbf{{{text}}}")


def scenario_table(
    scenario: str,
    rows,
    n: int | None = None,
    media_errors: dict[str, int] | None = None,
    annotations: dict[str, list[str | None]] | None = None,
) -> Table:
    """A scenario's table (the paper's Tables 2-4) in the shared model. ``annotations``: row name ->
    per column, a note printed beside the value (a change: "+3.12*"). The best value of each column
    within a category is bold in Markdown and LaTeX (``best_in_category``); the CSV keeps plain numbers."""
    cells = []
    best = best_in_category(rows)
    for cat, name, vals in rows:
        anns = (annotations or {}).get(name) or [None] * len(vals)
        cells.append(
            [cat, name]
            + [
                Text(
                    _fmt(v),
                    md=_marked(_fmt(v), (name, j) in best, "md")
                    + (f" ({_md_cell(a)})".replace("*", "\\*") if a and v is not None else ""),
                    tex="--"
                    if v is None
                    else _marked(f"{v:.2f}", (name, j) in best, "tex") + (f" ({_tex_note(a)})" if a else ""),
                    csv="" if v is None else f"{v:.2f}",
                )
                for j, (v, a) in enumerate(zip(vals, anns))
            ]
        )
    note = n_note(n, rows, media_errors)
    caption = rf"Performance (accuracy, \%) in the {scenario.capitalize()} scenario."
    block = Block(
        [Text("Category", csv="category"), Text("Model", csv="model"), *(h for h, _ in COLUMNS)],
        grouped(cells),
        keys=2,
        notes=["Bold: the best value of each column within its category."] * bool(best) + ([note] if note else []),
    )
    return Table(
        f"{scenario.capitalize()}" + (f" (N = {n})" if n is not None else ""),
        [block],
        caption=Text(caption, tex=caption),
        label=f"tab:moca-{scenario}",
    )


def to_markdown(scenario: str, rows, n=None, media_errors=None, annotations=None) -> str:
    return render_markdown(scenario_table(scenario, rows, n, media_errors, annotations))


def to_csv(rows) -> str:
    return render_csv(scenario_table("", rows))


def to_latex(scenario: str, rows, n=None, media_errors=None, annotations=None) -> str:
    return render_latex(scenario_table(scenario, rows, n, media_errors, annotations))


def exclusions_markdown(models: dict[str, dict[str, Any]], methods: list[str]) -> str:
    """all.md's one section naming the (model, method) pairs params exclude, with their reasons (empty
    when none is); a model params keep off MoCA (``benchmarks:``) is no exclusion and is not named."""
    from socialbench.results.layout import exclusions

    lines = [
        f"- {_md_cell(row_name(m, meth))}: not run ({_md_cell(reason)})"
        for m, meth, reason in exclusions(models, "moca", methods)
    ]
    return "### Excluded in params\n\n" + "\n".join(lines) + "\n" if lines else ""


# ==== the paper's Tables 2-7 from the pipeline's own predictions ====================================
# Tables 2-4 keep the renderers above (plus per-column annotations: a CoDAR row's signed change over
# its backbone and the paired test's mark); Tables 5-7 and every companion (95% bootstrap intervals,
# paired tests) are ``Grid``s rendered below. Everything here is pure: numbers in, text out (the
# figures' data: socialbench.moca.results.paper_figures). Decisions: docs/decisions.md, "Tables and figures".

DIRECT = "direct"
CODAR = "codar"
#: The ``table`` of the ablations (params ``moca.ablations``) that are Table 5's rows after full CoDAR.
TABLE5 = "table5"
#: The paired test of two systems on the same instances, per metric (Faith is a ratio: no per-instance correctness).
PAIRED_TESTS = {
    "label": "mcnemar_exact",
    "subject": "mcnemar_exact",
    "target": "mcnemar_exact",
    "mechanism": "mcnemar_exact",
    "dyad": "mcnemar_exact",
    "faith": "paired_bootstrap",
    "holis": "mcnemar_exact",
}
CI_METRICS = ("label", "subject", "target", "mechanism", "dyad", "faith", "holis", "c_sem_dyad", "invalid_rate")
HEADER = {
    **{key: head for head, key in COLUMNS},
    "c_sem_dyad": "C_sem|dyad",
    "invalid_rate": "Invalid",
    "atomic": "Atomic Avg.",
}
LEVEL = 0.95
TABLES_2_4 = "2-4"
#: Holm's family in each table (``with_holm``): one per compared pair of rows.
FAMILY = {
    TABLES_2_4: "a row against the same model's direct row",
    "5": "an ablation run against full CoDAR with the same backbone",
    "6": "the larger model against the smaller",
}


def output_files(scenarios) -> list[str]:
    """Every file ``MocaBenchmark.tables`` writes for these scenarios (the pipeline's outputs)."""
    from socialbench.moca.results.figures import output_files as figure_files

    per = [f"{s}.{ext}" for s in scenarios for ext in ("md", "csv", "tex", "ci.md", "ci.csv")]
    grids = [f"table{t}.{ext}" for t in (5, 6, 7) for ext in ("md", "csv", "tex", "ci.md", "ci.csv")]
    return [*per, *grids, "tests.csv", "answers.csv", "all.md", *figure_files(scenarios)]


# ---- settings ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableSettings:
    """``<benchmark>.tables`` of params, checked against ``models``."""

    human: str | None = None
    scaling: tuple[str, str] | None = None
    backbones: tuple[str, ...] = ()
    resamples: int = 2000
    alpha: float = 0.05
    seed: int = 0
    #: Table 5's variant runs after full CoDAR, in params order: (run ``codar__<ablation>``, row label).
    ablations: tuple[tuple[str, str], ...] = ()
    #: Figure 6's plotted baselines as (group, models), one panel per group (the paper: open-weight,
    #: proprietary); empty: every direct row but the human's, in one panel.
    figure6: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Figure 7's models (the paper: the affect-specialized ones and the strongest proprietary one) and scenario.
    figure7: tuple[str, ...] = ()
    figure7_scenario: str = "affection"

    @classmethod
    def from_params(cls, params: dict[str, Any], section: str = "moca") -> TableSettings:
        t = (params.get(section) or {}).get("tables") or {}
        models = params.get("models") or {}
        known = ", ".join(models) or "none"
        human, scaling, backbones = t.get("human"), t.get("scaling"), list(t.get("backbones") or [])
        groups = {g: list(ms) for g, ms in (t.get("figure6") or {}).items()}
        fig7 = t.get("figure7") or {}
        named = [("human", [human] if human else []), ("scaling", scaling or []), ("backbones", backbones)]
        named += [(f"figure6.{g}", ms) for g, ms in groups.items()] + [("figure7.models", fig7.get("models") or [])]
        plotted = [m for ms in groups.values() for m in ms]
        twice = sorted({m for m in plotted if plotted.count(m) > 1})
        if twice:
            raise ConfigError(f"{section}.tables.figure6: {', '.join(twice)} in more than one group (one panel each)")
        for key, names in named:
            for name in names:
                if name not in models:
                    raise ConfigError(f"{section}.tables.{key}: {name!r} is not a model under models: (known: {known})")
                if key != "human" and name == human:
                    raise ConfigError(
                        f"{section}.tables.{key}: {name!r} is the human model"
                        f" ({section}.tables.human), not a model to compare"
                    )
        if scaling and scaling[0] == scaling[1]:
            raise ConfigError(f"{section}.tables.scaling: two different models are needed, got {scaling[0]!r} twice")
        return cls(
            human=human,
            scaling=tuple(scaling) if scaling else None,
            backbones=tuple(backbones),
            resamples=int(t.get("resamples", 2000)),
            alpha=float(t.get("alpha", 0.05)),
            seed=int(params.get("seed", 0)),
            ablations=tuple(
                (f"{CODAR}__{name}", entry["label"])
                for name, entry in ((params.get(section) or {}).get("ablations") or {}).items()
                if entry.get("table") == TABLE5
            ),
            figure6=tuple((g, tuple(ms)) for g, ms in groups.items()),
            figure7=tuple(fig7.get("models") or ()),
            figure7_scenario=str(fig7.get("scenario", "affection")),
        )


# ---- exact arithmetic on the tables' two-decimal values -------------------------------------------
def _dec(v: float) -> Decimal:
    return Decimal(repr(float(v)))


def _q(d: Decimal) -> float:
    return float(d.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def difference(a: float | None, b: float | None) -> float | None:
    """a - b of two table values, exactly (what the reader computes from the printed numbers)."""
    return None if a is None or b is None else _q(_dec(a) - _dec(b))


def mean(values) -> float | None:
    """The mean of table values, rounded half-up to two decimals; None when one is None or none given."""
    values = list(values)
    if not values or any(v is None for v in values):
        return None
    return _q(sum((_dec(v) for v in values), Decimal(0)) / len(values))


def signed(d: float | None) -> str:
    """A change as the paper prints it: +3.12 / -0.50 (no change: ±0.00)."""
    return "–" if d is None else ("±0.00" if d == 0 else f"{d:+.2f}")


# ---- per-instance correctness (the input of the statistics) ---------------------------------------
def correctness(
    instances: list[dict[str, Any]],
    records: list[dict[str, Any]],
    labels: dict[str, list[str]],
    mechanisms: dict[str, list[str]],
    source: str = "predictions",
) -> dict[str, Any]:
    """{scenario: (N_s, 5) bool matrix}: c_{i,k} of label, subject, target, mechanism (the order of
    ``scoring.STATS``'s columns) and invalid, per instance in the instances' order, by the scorer's
    own functions and rules (``moca.scoring.score``); ``correctness_cells`` checks that their counts
    give the score file's numbers, so a scorer changed without this function is an error, not a
    silent difference."""
    import numpy as np

    from socialbench.moca.eval.scoring import FIELDS, check_predictions, field_matches, instance_valid_sets, is_invalid

    by_id = check_predictions(instances, records, source)
    rows: dict[str, list[list[bool]]] = {}
    for gold in instances:
        s = gold["scenario"]
        valid = instance_valid_sets(gold, labels.get(s, []), mechanisms.get(s, []))
        pred = by_id.get(gold["id"])
        answer = None if pred is not None and pred.get("error") else pred  # as score(): a failed record is no answer
        c = field_matches(gold, answer, valid)
        rows.setdefault(s, []).append([c[k] for k in FIELDS] + [is_invalid(answer, valid)])
    return {s: np.array(r, dtype=bool).reshape(len(r), len(FIELDS) + 1) for s, r in sorted(rows.items())}


def correctness_cells(
    instances,
    predictions: dict[tuple[str, str], tuple[str, list[dict[str, Any]]]],
    labels,
    mechanisms,
    scores: dict[tuple[str, str], dict[str, Any]],
) -> dict[tuple[str, str, str], Any]:
    """{(model, method, scenario): correctness matrix} for every pair of ``scores``, each checked
    against its score file: predictions that no longer give the file's numbers (scored before they
    changed, or on other instances) are a DataError naming the file, scenario and metric."""
    from socialbench.moca.eval.scoring import METRICS, score

    out = {}
    for (model, method), sc in sorted(scores.items()):
        if (model, method) not in predictions:
            raise DataError(f"{model}/{method}", "no predictions given for this score file (--predictions-dir)")
        source, records = predictions[(model, method)]
        now = score(instances, records, labels, mechanisms, source=source)
        for s in sorted(set(now) | set(sc)):
            for key in (*METRICS, "n"):
                was, got = (sc.get(s) or {}).get(key), (now.get(s) or {}).get(key)
                if was != got:
                    raise DataError(
                        source,
                        f"gives {key} = {got!r} but the score file of {model}/{method} says {was!r}:"
                        " the scores are stale or come from other instances (rerun socialbench score)",
                        record=f"scenario {s!r}",
                        field=key,
                    )
        for s, m in correctness(instances, records, labels, mechanisms, source).items():
            out[(model, method, s)] = m
    return out


# ---- paired comparisons ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparison:
    """A paired test of row ``a`` (model, method) against row ``b`` on one metric of one scenario.
    ``delta`` is the table's (a - b of the printed values); ``low``/``high`` the paired bootstrap
    interval of the difference; ``p`` exact McNemar (Faith: paired bootstrap), ``p_holm`` Holm-adjusted
    within its family (one table, one pair of rows: every scenario and metric of that pair)."""

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
    """Row ``a`` against row ``b`` on each metric of one scenario. Both are resampled with the same
    instance indices, one draw per pair and scenario for every metric (its seed comes from the pair
    and the scenario), which gives each difference's interval; the test is exact McNemar on the
    per-instance correctness, or the paired bootstrap (same draws) for Faith."""
    from socialbench.results.stats import (
        cell_seed,
        mcnemar_exact,
        paired_bootstrap_test,
        per_instance,
        percentile_interval,
        resample_metrics,
    )

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
        out.append(
            Comparison(
                table,
                scenario,
                a,
                b,
                metric,
                delta,
                low,
                high,
                PAIRED_TESTS[metric],
                a_only,
                b_only,
                p,
                settings.resamples,
            )
        )
    return out


def with_holm(comparisons: list[Comparison], alpha: float) -> list[Comparison]:
    """Holm-Bonferroni within each family: one compared pair of rows in one table (a CoDAR row
    against its backbone's direct row in Tables 2-4, an ablation against full CoDAR in Table 5, the
    larger model against the smaller in Table 6), over all of that pair's scenario x metric tests. A
    star then never depends on which other rows were run. A comparison without a p-value (an
    undefined ratio) is in no family."""
    from dataclasses import replace

    from socialbench.results.stats import holm

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


# ---- answer format: invalid output and repairs per run ------------------------------------------
ANSWER_COUNTS = ("n", "invalid", "answer_errors", "repaired", "retry", "code_fence", "invalid_tuple", "ignored_keys")
ANSWER_COUNTS += ("last_tuple_kept", "checker_unparsable")


def answer_counts(
    instances: list[dict[str, Any]], records: list[dict[str, Any]], labels, mechanisms
) -> dict[str, dict[str, int]]:
    """{scenario: counts} of one run: N, the instances scored invalid (any field missing, unparsable or
    invalid, as the scorer counts them), those with no usable answer (``error``), the answers a retry or
    repair changed (``repaired``, and per repair), those with keys dropped under ``extra_keys: ignore``,
    and those whose answer is the decoder's last tuple because a later stage failed (the checker's
    verdict unreadable: ``checker_unparsable``). Read from the records' ``format`` (params moca.answer)."""
    from socialbench.moca.eval.scoring import instance_valid_sets, is_invalid

    by_id = {r.get("id"): r for r in records}
    out: dict[str, dict[str, int]] = {}
    for gold in instances:
        s = gold["scenario"]
        c = out.setdefault(s, dict.fromkeys(ANSWER_COUNTS, 0))
        pred = by_id.get(gold["id"])
        valid = instance_valid_sets(gold, labels.get(s, []), mechanisms.get(s, []))
        answer = None if pred is not None and pred.get("error") else pred
        fmt = (pred or {}).get("format") or {}
        repairs = fmt.get("repairs") or []
        kept = fmt.get("last_tuple_kept")
        c["n"] += 1
        c["invalid"] += is_invalid(answer, valid)
        c["answer_errors"] += pred is None or bool(pred.get("error"))
        c["repaired"] += bool(repairs)
        for r in ("retry", "code_fence", "invalid_tuple"):
            c[r] += r in repairs
        c["ignored_keys"] += bool(fmt.get("ignored_keys"))
        c["last_tuple_kept"] += bool(kept)
        c["checker_unparsable"] += kept == "checker"
    return out


def answers_note(rows: list[tuple[str, str, str]], scores, answers, scenario: str) -> str:
    """The line under a scenario table: per row, the invalid rate (%) and how many answers a format
    retry or repair changed, so a gain that is format repair shows as such."""
    parts = []
    for _, m, meth in rows:
        inv = (scores.get((m, meth), {}).get(scenario) or {}).get("invalid_rate")
        text = f"{row_name(m, meth)} {_fmt(inv)}"
        c = (answers or {}).get((m, meth, scenario))
        if c is not None:
            kinds = [f"{k.replace('_', ' ')} {c[k]}" for k in ("retry", "code_fence", "invalid_tuple") if c[k]]
            text += f" / {c['repaired']}" + (f" ({', '.join(kinds)})" if kinds else "")
            if c["checker_unparsable"]:
                text += f", checker unreadable {c['checker_unparsable']}"
        parts.append(text)
    how = "invalid % / answers a format retry or repair changed" if answers is not None else "invalid %"
    tail = (
        "; answers.csv has every count (params moca.answer: the same policy for every method)."
        if answers is not None
        else "; repairs unknown without --instances and --predictions-dir."
    )
    return f"Answer format per row ({how}): " + "; ".join(parts) + tail


def answers_csv(answers: dict[tuple[str, str, str], dict[str, int]]) -> str:
    """answers.csv: one row per run and scenario with its invalid-output and repair counts."""
    return csv_text(
        ["model", "method", "scenario", *ANSWER_COUNTS],
        [[m, meth, s, *(c[k] for k in ANSWER_COUNTS)] for (m, meth, s), c in sorted(answers.items())],
    )


# ---- generic grids (Tables 5-7 and the companions) -------------------------------------------------
@dataclass(frozen=True)
class Num:
    """A number cell: its value (``signed``: the value is itself a change, printed +x / -x), the
    change shown beside it (``delta``) and whether a paired test on that change is significant
    (``mark``), and, when known, its 95% interval (``undefined``: resamples where it was undefined,
    left out of the percentiles)."""

    value: float | None
    delta: float | None = None
    mark: bool = False
    signed: bool = False
    low: float | None = None
    high: float | None = None
    undefined: int = 0
    has_ci: bool = False


def _num_text(c: Num, star: str) -> str:
    text = signed(c.value) if c.signed else _fmt(c.value)
    if c.value is None:
        return text
    if c.delta is not None:
        return f"{text} ({signed(c.delta)}{star if c.mark else ''})"
    return text + (star if c.mark else "")


def _ci_text(c: Num) -> str:
    text = signed(c.value) if c.signed else _fmt(c.value)
    if not c.has_ci or c.value is None:
        return text
    lo, hi = ("–" if c.low is None else f"{c.low:.2f}"), ("–" if c.high is None else f"{c.high:.2f}")
    return f"{text} [{lo}, {hi}]" + (f" ({c.undefined} undef.)" if c.undefined else "")


@dataclass
class Grid:
    """A table as the paper prints it: ``nkeys`` leading text columns (row keys; the first one
    groups rows), then number columns (``Num`` cells)."""

    name: str  # file stem: table5
    title: str  # Markdown heading
    caption: str  # LaTeX caption
    columns: list[str]
    nkeys: int
    rows: list[list[Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_TEX_STAR = "$^{*}$"


def _tex_text(s: str) -> str:
    """Escaped text with C_sem|dyad in math mode (the escaper sets Δ and ± in math mode already)."""
    return tex_escape(s).replace("C\\_sem|dyad", r"$C_{\mathrm{sem}\mid\mathrm{dyad}}$")


def _moca_text(s: str) -> Text:
    """Text with the tables' symbols: stars escaped in Markdown, C_sem|dyad in LaTeX math."""
    return Text(s, md=_md_cell(s).replace("*", "\\*"), tex=_tex_text(s))


def grid_table(g: Grid, ci: bool = False) -> Table:
    """A grid in the shared model: number cells as their text (with intervals when ``ci``)."""

    def num(c: Num) -> Text:
        return Text(
            _ci_text(c) if ci else _num_text(c, "*"),
            md=_ci_text(c) if ci else _num_text(c, "\\*"),
            tex="--" if c.value is None else _tex_text(_num_text(c, "*")).replace("*", _TEX_STAR),
            csv="" if c.value is None else f"{c.value:.2f}",
        )

    rows = grouped([*row[: g.nkeys], *(num(c) for c in row[g.nkeys :])] for row in g.rows)
    block = Block(
        [Text(c, tex=_tex_text(c)) for c in g.columns],
        rows,
        keys=g.nkeys,
        notes=[_moca_text(n) for n in g.notes],
        header_when_empty=False,
    )
    level = len(g.title) - len(g.title.lstrip("#"))
    title = g.title[level:].lstrip(" ")
    caption = Text(g.caption, tex=_tex_text(g.caption))
    return Table(title, [block], level=level, caption=caption, label=f"tab:moca-{g.name}")


def grid_markdown(g: Grid, ci: bool = False) -> str:
    return render_markdown(grid_table(g, ci))


def grid_csv(g: Grid) -> str:
    return render_csv(grid_table(g))


def grid_latex(g: Grid) -> str:
    return render_latex(grid_table(g))


def grid_ci_csv(g: Grid) -> str:
    """Long format: the row's keys, the column, the value and its 95% interval."""
    return csv_text(
        [*g.columns[: g.nkeys], "column", "value", "low", "high", "undefined_resamples"],
        (
            [
                *row[: g.nkeys],
                head,
                *("" if v is None else f"{v:.2f}" for v in (c.value, c.low, c.high)),
                c.undefined if c.has_ci else "",
            ]
            for row in g.rows
            for head, c in zip(g.columns[g.nkeys :], row[g.nkeys :])
        ),
    )


# ---- everything the tables stage adds -------------------------------------------------------------
class PaperTables:
    """The paper's tables, figures and their statistics from one set of scores (and, when given, the
    per-instance correctness of every cell, which the intervals and paired tests need)."""

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

    # -- lookups --
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
        """(category, model, method) of a scenario table: the human model's rows first, then by
        category (order of first appearance in params), model (params order), method (direct first,
        then params order). Ablation runs are Table 5's rows, not these tables'."""
        h = self.settings.human
        keys = sorted(
            (
                k
                for k, sc in self.scores.items()
                if scenario in sc and k[0] in self.categories and k[1] not in self.ablation_runs
            ),
            key=lambda k: (self.models.index(k[0]), self._method_rank(k[1])),
        )
        cats: list[str] = []
        for m in self.models:
            if m != h and self.categories[m] not in cats:
                cats.append(self.categories[m])
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
        """(model, method) rows compared with their backbone (model, direct): every non-direct row of
        a model that has a direct row, the human's and the ablation runs (Table 5's) excepted."""
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
        return [
            m
            for m in self.models
            if m != self.settings.human
            and self.has(m, CODAR)
            and any(self.has(m, a) for a, _ in self.settings.ablations)
        ]

    def scaling_ready(self) -> bool:
        sc = self.settings.scaling
        return sc is not None and self.has(sc[0], DIRECT) and self.has(sc[1], DIRECT)

    # -- statistics --
    def _cell_intervals(self) -> dict[tuple[str, str, str], Any]:
        if self.cells is None:
            return {}
        from socialbench.results.stats import bootstrap_cells

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
        return next(
            (
                c
                for c in self.comparisons
                if c.table == table and c.a == a and c.scenario == scenario and c.metric == metric
            ),
            None,
        )

    def significant(self, table: str, a: tuple[str, str], scenario: str, metric: str) -> bool:
        c = self.comparison(table, a, scenario, metric)
        return c is not None and c.significant

    def _num(self, model: str, method: str, scenario: str, metric: str, **kw: Any) -> Num:
        """A cell of a (model, method) row with its interval when there is one."""
        v = self.value(model, method, scenario, metric)
        ci = self.cis.get((model, method, scenario))
        if ci is None:
            return Num(v, **kw)
        iv = ci[metric]
        return Num(v, **kw, low=iv.low, high=iv.high, undefined=ci.undefined[metric], has_ci=iv.point is not None)

    def _resampled(self, systems, *parts):
        from socialbench.results.stats import cell_seed, resample_metrics

        return resample_metrics(
            systems, defs=STATS, n_resamples=self.settings.resamples, seed=cell_seed(self.settings.seed, *parts)
        )

    def _interval(self, value: float | None, values, **kw: Any) -> Num:
        from socialbench.results.stats import percentile_interval

        if value is None:
            return Num(None, **kw)
        low, high, undefined = percentile_interval(values, LEVEL)
        return Num(value, **kw, low=low, high=high, undefined=undefined, has_ci=True)

    def _ci_notes(self) -> list[str]:
        if self.cells is None:
            return ["No intervals: the tables stage ran without --instances and --predictions-dir (per-instance data)."]
        return [
            f"value [low, high]: 95% instance-level percentile bootstrap, {self.settings.resamples} resamples seeded"
            f" from seed {self.settings.seed} and the cell; a ratio (Faith, C_sem|dyad, their averages) is recomputed"
            " per resample, and resamples where it is undefined (denominator 0) are left out and counted (undef.)."
        ]

    def _tests_note(self, table: str, what: str) -> str:
        if self.cells is None:
            return "No paired tests: the tables stage ran without --instances and --predictions-dir."
        where = "Tables 2-4" if table == TABLES_2_4 else f"Table {table}"
        return (
            f"*: {what} significant at {self.settings.alpha:g} after Holm's correction within one family per"
            f" compared pair of rows ({FAMILY[table]}): all of that pair's scenario x metric tests in {where},"
            " whatever other rows were run; tests.csv has every p-value and its family."
        )

    # -- Tables 2-4 --
    def annotations(self, scenario: str) -> dict[str, list[str | None]]:
        """Row name -> per column, the row's signed change over its backbone (``+3.12``), with ``*``
        when the paired test is significant after Holm's correction."""
        out = {}
        for m, meth in self.backbone_pairs():
            if scenario not in self.scores[(m, meth)]:
                continue
            anns = []
            for _, key in COLUMNS:
                d = difference(self.value(m, meth, scenario, key), self.value(m, DIRECT, scenario, key))
                anns.append(
                    None
                    if d is None
                    else signed(d) + ("*" if self.significant(TABLES_2_4, (m, meth), scenario, key) else "")
                )
            out[row_name(m, meth)] = anns
        return out

    def scenario_notes(self, scenario: str) -> str:
        """Lines under a scenario table (Markdown): the human row, the changes and their tests, the intervals."""
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
                + self._tests_note(TABLES_2_4, "paired test (exact McNemar; paired bootstrap for Faith)")
            )
        lines.append(answers_note(self.rows(scenario), self.scores, self.answers, scenario))
        lines.append(
            f"95% bootstrap intervals of every cell: {scenario}.ci.md."
            if self.cells is not None
            else "No bootstrap intervals: the tables stage ran without --instances and --predictions-dir."
        )
        return "\n" + "\n".join(_md_cell(x).replace("*", "\\*") for x in lines) + "\n"

    def scenario_ci(self, scenario: str) -> tuple[str, str]:
        """``<scenario>.ci.md`` and ``.ci.csv``: every cell of the scenario table with its 95% interval."""
        n = next((sc[scenario]["n"] for sc in self.scores.values() if scenario in sc), None)
        g = Grid(
            f"{scenario}.ci",
            f"### {scenario.capitalize()}: 95% bootstrap intervals" + (f" (N = {n})" if n else ""),
            "",
            ["Category", "Model", *(HEADER[k] for k in CI_METRICS)],
            2,
        )
        for cat, m, meth in self.rows(scenario):
            g.rows.append([cat, row_name(m, meth), *(self._num(m, meth, scenario, k) for k in CI_METRICS)])
        g.notes = self._ci_notes()
        columns = ["category", "model", "method", "metric", "value", "low", "high", "undefined_resamples", "n"]
        columns += ["resamples", "level"]
        rows = []
        for cat, m, meth in self.rows(scenario) if self.cells is not None else []:
            ci = self.cis[(m, meth, scenario)]
            for k in CI_METRICS:
                values = ("" if v is None else f"{v:.2f}" for v in ci[k])
                rows.append([cat, m, meth, k, *values, ci.undefined[k], ci.n, ci.n_resamples, ci.level])
        return grid_markdown(g, ci=True), csv_text(columns, rows)

    # -- Table 5 --
    def table5(self) -> tuple[Grid, Grid]:
        cols = ["Scenario", "Backbone", "Variant", HEADER["atomic"], "Dyad", "Faith", "Holis"]
        g = Grid(
            "table5",
            "### Table 5: Ablation of CoDAR's steps",
            "Ablation of CoDAR's steps. Atomic Avg. is the mean of Lab, Subj, Tgt and Mech; (+x / -x): change"
            " over full CoDAR with the same backbone.",
            list(cols),
            3,
        )
        ci = Grid("table5.ci", "### Table 5: 95% bootstrap intervals", "", list(cols), 3)
        backbones = self.ablation_backbones()
        atomic_keys = ("label", "subject", "target", "mechanism")
        for s in self.scenarios:
            for m in backbones:
                full_atomic = mean(self.value(m, CODAR, s, k) for k in atomic_keys)
                for meth, label in [(CODAR, "CoDAR"), *self.settings.ablations]:
                    if not self.has(m, meth) or s not in self.scores[(m, meth)]:
                        continue
                    ablated = meth != CODAR
                    atomic = mean(self.value(m, meth, s, k) for k in atomic_keys)
                    row = [s, m, label, Num(atomic, difference(atomic, full_atomic) if ablated else None)]
                    crow = [s, m, label, self._atomic_ci(m, meth, s, atomic)]
                    for key in ("dyad", "faith", "holis"):
                        d = difference(self.value(m, meth, s, key), self.value(m, CODAR, s, key)) if ablated else None
                        row.append(
                            Num(self.value(m, meth, s, key), d, ablated and self.significant("5", (m, meth), s, key))
                        )
                        crow.append(self._num(m, meth, s, key))
                    g.rows.append(row)
                    ci.rows.append(crow)
        if not backbones:
            runs = ", ".join(a for a, _ in self.settings.ablations) or "none defined: see moca.ablations"
            g.notes.append(
                f"No rows: no model has codar and ablation runs; add codar and its ablations ({runs}) to moca.methods."
            )
        else:
            missing = [a for a, _ in self.settings.ablations if not any(self.has(m, a) for m in backbones)]
            if missing:
                g.notes.append(f"Not run: {', '.join(missing)} (add to moca.methods).")
            g.notes.append(
                self._tests_note(
                    "5",
                    "paired test against full CoDAR (exact McNemar; paired bootstrap for"
                    " Faith; Atomic Avg. is not tested)",
                )
            )
        ci.notes = self._ci_notes() if backbones else list(g.notes)
        return g, ci

    def _atomic_ci(self, model: str, method: str, scenario: str, atomic: float | None) -> Num:
        cell = None if self.cells is None else self.cells.get((model, method, scenario))
        if cell is None:
            return Num(atomic)
        r = self._resampled([cell], model, method, scenario)  # the cell's own seed: its intervals' resamples
        return self._interval(atomic, (r["label"][0] + r["subject"][0] + r["target"][0] + r["mechanism"][0]) / 4)

    # -- Table 6 --
    def table6(self) -> tuple[Grid, Grid]:
        sc = self.settings.scaling
        small, large = sc if sc else ("smaller", "larger")
        human = self.human
        cols = [
            "Scenario",
            "ΔDyad",
            "ΔHolis",
            f"C_sem|dyad {small}",
            f"C_sem|dyad {large}",
            *([f"C_sem|dyad {_human_label(human)}"] if human else []),
        ]
        title = (
            f"### Table 6: Within-family scaling from {small} to {large}"
            if sc
            else "### Table 6: Within-family scaling"
        )
        g = Grid(
            "table6",
            title,
            f"Within-family scaling from {small} to {large}. ΔDyad and ΔHolis: change in points;"
            " C_sem|dyad: percentage of dyad-correct predictions that are also holistically correct.",
            cols,
            1,
        )
        ci = Grid("table6.ci", title + ": 95% bootstrap intervals", "", list(cols), 1)
        if sc is None:
            g.notes.append(
                "No rows: name the smaller and the larger model of one family in moca.tables.scaling:"
                " [smaller, larger]."
            )
        elif not self.scaling_ready():
            g.notes.append(
                f"No rows: {', '.join(m for m in sc if not self.has(m, DIRECT))} (moca.tables.scaling) has no"
                " direct row."
            )
        else:
            for s in self.scenarios:
                row, crow = [s], [s]
                for key in ("dyad", "holis"):
                    d = difference(self.value(large, DIRECT, s, key), self.value(small, DIRECT, s, key))
                    c = self.comparison("6", (large, DIRECT), s, key)
                    row.append(Num(d, mark=c is not None and c.significant, signed=True))
                    crow.append(
                        Num(d, signed=True, low=c.low, high=c.high, has_ci=d is not None) if c else Num(d, signed=True)
                    )
                for m in (small, large, *([human] if human else [])):
                    row.append(Num(self.value(m, DIRECT, s, "c_sem_dyad")))
                    crow.append(self._num(m, DIRECT, s, "c_sem_dyad"))
                g.rows.append(row)
                ci.rows.append(crow)
            g.notes.append(self._tests_note("6", f"exact McNemar test of {large} against {small}"))
            if not human:
                g.notes.append("No human rate: name the model that holds human answers in moca.tables.human.")
        ci.notes = self._ci_notes() if self.scaling_ready() else list(g.notes)
        return g, ci

    # -- Table 7 --
    def table7(self) -> tuple[Grid, Grid]:
        human = self.human
        cols = ["Scenario", "Baseline", "CoDAR", "ΔCoDAR", *(["Human"] if human else [])]
        g = Grid(
            "table7",
            "### Table 7: Semantic completion after correct Subject-Target recovery (C_sem|dyad)",
            "Semantic completion after correct Subject-Target recovery (C_sem|dyad, %). Baseline and CoDAR are"
            " macro-averaged over the backbones named below; ΔCoDAR is the change in points.",
            cols,
            1,
        )
        ci = Grid("table7.ci", "### Table 7: 95% bootstrap intervals", "", list(cols), 1)
        backbones = self.codar_backbones()
        if not backbones:
            g.notes.append(
                "No rows: no backbone has both a direct and a codar row; add codar to moca.methods"
                + (" (the backbones are moca.tables.backbones)." if self.settings.backbones else ".")
            )
        else:
            left_out: list[str] = []
            for s in self.scenarios:
                used = [
                    b
                    for b in backbones
                    if self.value(b, DIRECT, s, "c_sem_dyad") is not None
                    and self.value(b, CODAR, s, "c_sem_dyad") is not None
                ]
                left_out += [f"{b} in {s}" for b in backbones if b not in used]
                base = mean(self.value(b, DIRECT, s, "c_sem_dyad") for b in used)
                cod = mean(self.value(b, CODAR, s, "c_sem_dyad") for b in used)
                delta = difference(cod, base)
                human_cells = (
                    ([Num(self.value(human, DIRECT, s, "c_sem_dyad"))], [self._num(human, DIRECT, s, "c_sem_dyad")])
                    if human
                    else ([], [])
                )
                g.rows.append([s, Num(base), Num(cod), Num(delta, signed=True), *human_cells[0]])
                ci.rows.append([s, *self._table7_ci(s, used, base, cod, delta), *human_cells[1]])
            how = (
                "moca.tables.backbones"
                if self.settings.backbones
                else "every model with a direct and a codar row; name them in moca.tables.backbones to choose"
            )
            g.notes.append(f"Macro-averaged over: {', '.join(backbones)} ({how}).")
            if left_out:
                g.notes.append(f"Left out where C_sem|dyad is undefined (no correct dyad): {', '.join(left_out)}.")
            if not human:
                g.notes.append("No human rate: name the model that holds human answers in moca.tables.human.")
        named = [b for b in self.settings.backbones if b not in backbones]
        if named:
            g.notes.append(f"Named in moca.tables.backbones without both a direct and a codar row: {', '.join(named)}.")
        ci.notes = self._ci_notes() if backbones else list(g.notes)
        return g, ci

    def _table7_ci(self, scenario: str, used: list[str], base, cod, delta) -> list[Num]:
        if self.cells is None or not used:
            return [Num(base), Num(cod), Num(delta, signed=True)]
        import numpy as np

        k = len(used)
        cells = [self.cells[(b, DIRECT, scenario)] for b in used] + [self.cells[(b, CODAR, scenario)] for b in used]
        c = self._resampled(cells, "table7", scenario, *used)["c_sem_dyad"]
        with np.errstate(invalid="ignore"):
            b_vals, c_vals = c[:k].mean(axis=0), c[k:].mean(axis=0)  # NaN when one backbone's ratio is undefined
        return [
            self._interval(base, b_vals),
            self._interval(cod, c_vals),
            self._interval(delta, c_vals - b_vals, signed=True),
        ]

    # -- files --
    def tests_csv(self) -> str:
        columns = ["table", "scenario", "model", "method", "versus_model", "versus_method", "metric", "delta"]
        columns += ["delta_low", "delta_high", "test", "a_only", "b_only", "p", "p_holm", "significant", "resamples"]
        columns += ["holm_family", "holm_family_size"]
        sizes: dict[str, int] = {}
        for c in self.comparisons:
            if c.p is not None:
                sizes[holm_family(c)] = sizes.get(holm_family(c), 0) + 1
        rows = [
            [
                c.table,
                c.scenario,
                *c.a,
                *c.b,
                c.metric,
                *("" if v is None else f"{v:.2f}" for v in (c.delta, c.low, c.high)),
                c.test,
                "" if c.a_only is None else c.a_only,
                "" if c.b_only is None else c.b_only,
                "" if c.p is None else f"{c.p:.6g}",
                "" if c.p_holm is None else f"{c.p_holm:.6g}",
                int(c.significant),
                c.resamples,
                holm_family(c) if c.p is not None else "",
                sizes.get(holm_family(c), 0) if c.p is not None else "",
            ]
            for c in sorted(self.comparisons, key=lambda c: (c.table, c.metric, c.scenario, c.a, c.b))
        ]
        return csv_text(columns, rows)

    def files(self) -> tuple[dict[str, str], list[str]]:
        """Tables 5-7 (md, csv, tex, ci.md, ci.csv) and tests.csv; and their Markdown, for all.md."""
        out, md = {}, []
        for g, ci in (self.table5(), self.table6(), self.table7()):
            out[f"{g.name}.md"] = grid_markdown(g)
            out[f"{g.name}.csv"] = grid_csv(g)
            out[f"{g.name}.tex"] = grid_latex(g)
            out[f"{g.name}.ci.md"] = grid_markdown(ci, ci=True)
            out[f"{g.name}.ci.csv"] = grid_ci_csv(ci)
            md.append(out[f"{g.name}.md"])
        out["tests.csv"] = self.tests_csv()
        out["answers.csv"] = answers_csv(self.answers or {})
        return out, md


def _human_label(model: str) -> str:
    return model if "human" in model.lower() else f"{model} (human)"
