"""Table 6: within-family scaling, the smaller model against the larger (params ``moca.tables.scaling``): the changes of
Dyad and Holis with their paired tests, and each model's C_sem|dyad (the human's too, when there is a human row)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from socialbench.moca.results.completion import human_label
from socialbench.moca.results.grids import ci_grid, grid
from socialbench.moca.results.tables import DIRECT
from socialbench.results.numbers import difference
from socialbench.results.tables import Num, Table

if TYPE_CHECKING:
    from socialbench.moca.results.paper import PaperTables


def table6(paper: PaperTables) -> tuple[Table, Table]:
    sc = paper.settings.scaling
    small, large = sc if sc else ("smaller", "larger")
    human = paper.human
    cols = [
        "Scenario",
        "ΔDyad",
        "ΔHolis",
        f"C_sem|dyad {small}",
        f"C_sem|dyad {large}",
        *([f"C_sem|dyad {human_label(human)}"] if human else []),
    ]
    title = f"Table 6: Within-family scaling from {small} to {large}" if sc else "Table 6: Within-family scaling"
    rows, ci_rows, notes = [], [], []
    if sc is None:
        notes.append(
            "No rows: name the smaller and the larger model of one family in moca.tables.scaling: [smaller, larger]."
        )
    elif not paper.scaling_ready():
        notes.append(
            f"No rows: {', '.join(m for m in sc if not paper.has(m, DIRECT))} (moca.tables.scaling) has no direct row."
        )
    else:
        for s in paper.scenarios:
            row, crow = [s], [s]
            for key in ("dyad", "holis"):
                d = difference(paper.value(large, DIRECT, s, key), paper.value(small, DIRECT, s, key))
                c = paper.comparison("6", (large, DIRECT), s, key)
                row.append(Num(d, mark=c is not None and c.significant, signed=True))
                crow.append(
                    Num(d, signed=True, low=c.low, high=c.high, has_ci=d is not None) if c else Num(d, signed=True)
                )
            for m in (small, large, *([human] if human else [])):
                row.append(Num(paper.value(m, DIRECT, s, "c_sem_dyad")))
                crow.append(paper.cell(m, DIRECT, s, "c_sem_dyad"))
            rows.append(row)
            ci_rows.append(crow)
        notes.append(paper.tests_note("6", f"exact McNemar test of {large} against {small}"))
        if not human:
            notes.append("No human rate: name the model that holds human answers in moca.tables.human.")
    caption = (
        f"Within-family scaling from {small} to {large}. ΔDyad and ΔHolis: change in points;"
        " C_sem|dyad: percentage of dyad-correct predictions that are also holistically correct."
    )
    ci_notes = paper.ci_notes() if paper.scaling_ready() else notes
    return (
        grid("table6", title, caption, cols, 1, rows, notes),
        ci_grid("table6.ci", title + ": 95% bootstrap intervals", cols, 1, ci_rows, ci_notes),
    )
