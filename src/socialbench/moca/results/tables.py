"""Result tables per scenario, as the paper's Tables 2-4, in the shared table model (Markdown, CSV,
LaTeX). Pure; decisions: docs/decisions/moca-tables.md."""

from __future__ import annotations

from typing import Any

from socialbench.moca.results.figures import output_files as figure_files
from socialbench.results.layout import exclusions
from socialbench.results.tables import Block, Num, Table, Text, grouped

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


def n_note(n: int | None, rows, media_errors: dict[str, int] | None, row_n: dict[str, int] | None = None) -> str:
    """The sentence under a table: N, and the instances whose media failed, per row when they differ."""
    if n is None or media_errors is None:
        return ""
    other = [f"{name}: N = {row_n[name]}" for _, name, _ in rows if row_n and row_n.get(name, n) != n]
    head = f"N = {n} per row" + (f" (but {', '.join(other)})" if other else "")
    counts = {name: media_errors.get(name, 0) for _, name, _ in rows}
    if len(set(counts.values())) > 1:
        per_row = ", ".join(f"{name} {k}" for name, k in counts.items())
        return f"{head}; instances whose media failed at evaluation time (kept, scored invalid): {per_row}."
    k = next(iter(counts.values()), 0)
    if k == 0:
        return f"{head}; no instance had media that failed at evaluation time."
    return f"{head}; {k} of them had media that failed at evaluation time (kept, scored invalid)."


def best_in_category(rows) -> set[tuple[str, int]]:
    """(row name, column) of each column's best value within each category of two or more rows."""
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


def scenario_table(
    scenario: str,
    rows,
    n: int | None = None,
    media_errors: dict[str, int] | None = None,
    changes: dict[str, list[tuple[float, bool] | None]] | None = None,
    row_n: dict[str, int] | None = None,
) -> Table:
    """A scenario's table (Tables 2-4), with each row's changes and the best per category in bold."""
    cells = []
    best = best_in_category(rows)
    for cat, name, vals in rows:
        chg = (changes or {}).get(name) or [None] * len(vals)
        nums = [
            Num(v, delta=c and c[0], mark=bool(c and c[1]), best=(name, j) in best)
            for j, (v, c) in enumerate(zip(vals, chg))
        ]
        cells.append([cat, name, *nums])
    note = n_note(n, rows, media_errors, row_n)
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


def exclusions_table(params: dict[str, Any], methods: list[str]) -> Table | None:
    """all.md's section naming the (model, method) pairs params exclude and why (None when none is)."""
    lines = [f"- {row_name(m, meth)}: not run ({reason})" for m, meth, reason in exclusions(params, "moca", methods)]
    return Table("Excluded in params", [], notes=list(lines)) if lines else None


# ---- the tables' vocabulary (Tables 2-7 and the figures) ------------------------------------------
DIRECT = "direct"
CODAR = "codar"
CI_METRICS = ("label", "subject", "target", "mechanism", "dyad", "faith", "holis", "c_sem_dyad", "invalid_rate")
HEADER = {
    **{key: head for head, key in COLUMNS},
    "c_sem_dyad": "C_sem|dyad",
    "invalid_rate": "Invalid",
    "atomic": "Atomic Avg.",
}
LEVEL = 0.95


def output_files(scenarios) -> list[str]:
    """Every file ``MocaBenchmark.tables`` writes for these scenarios (the pipeline's outputs)."""
    per = [f"{s}.{ext}" for s in scenarios for ext in ("md", "csv", "tex", "ci.md", "ci.csv")]
    stems = ("table5", "table5_other_backbones", "table6", "table7")
    grids = [f"{t}.{ext}" for t in stems for ext in ("md", "csv", "tex", "ci.md", "ci.csv")]
    return [*per, *grids, "tests.csv", "answers.csv", "all.md", *figure_files(scenarios)]
