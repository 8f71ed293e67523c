"""Table 7: semantic completion after correct Subject-Target recovery (C_sem|dyad), the direct
baseline against CoDAR macro-averaged over the backbones, with the human rate, and its 95% intervals
(the macro averages resampled together)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from socialbench.moca.results.grids import ci_grid, grid
from socialbench.moca.results.tables import CODAR, DIRECT
from socialbench.results.numbers import difference, mean
from socialbench.results.tables import Num, Table

if TYPE_CHECKING:
    from socialbench.moca.results.paper import PaperTables


TITLE = "Table 7: Semantic completion after correct Subject-Target recovery (C_sem|dyad)"
CAPTION = (
    "Semantic completion after correct Subject-Target recovery (C_sem|dyad, %). Baseline and CoDAR are"
    " macro-averaged over the backbones named below; ΔCoDAR is the change in points."
)


def table7(paper: PaperTables) -> tuple[Table, Table]:
    human = paper.human
    cols = ["Scenario", "Baseline", "CoDAR", "ΔCoDAR", *(["Human"] if human else [])]
    rows, ci_rows, notes = [], [], []
    backbones = paper.codar_backbones()
    if not backbones:
        notes.append(
            "No rows: no backbone has both a direct and a codar row; add codar to moca.methods"
            + (" (the backbones are moca.tables.backbones)." if paper.settings.backbones else ".")
        )
    else:
        left_out: list[str] = []
        for s in paper.scenarios:
            used = [
                b
                for b in backbones
                if paper.value(b, DIRECT, s, "c_sem_dyad") is not None
                and paper.value(b, CODAR, s, "c_sem_dyad") is not None
            ]
            left_out += [f"{b} in {s}" for b in backbones if b not in used]
            base = mean(paper.value(b, DIRECT, s, "c_sem_dyad") for b in used)
            cod = mean(paper.value(b, CODAR, s, "c_sem_dyad") for b in used)
            delta = difference(cod, base)
            human_cells = (
                ([Num(paper.value(human, DIRECT, s, "c_sem_dyad"))], [paper.cell(human, DIRECT, s, "c_sem_dyad")])
                if human
                else ([], [])
            )
            rows.append([s, Num(base), Num(cod), Num(delta, signed=True), *human_cells[0]])
            ci_rows.append([s, *table7_ci(paper, s, used, base, cod, delta), *human_cells[1]])
        how = (
            "moca.tables.backbones"
            if paper.settings.backbones
            else "every model with a direct and a codar row; name them in moca.tables.backbones to choose"
        )
        notes.append(f"Macro-averaged over: {', '.join(backbones)} ({how}).")
        if left_out:
            notes.append(f"Left out where C_sem|dyad is undefined (no correct dyad): {', '.join(left_out)}.")
        if not human:
            notes.append("No human rate: name the model that holds human answers in moca.tables.human.")
    named = [b for b in paper.settings.backbones if b not in backbones]
    if named:
        notes.append(f"Named in moca.tables.backbones without both a direct and a codar row: {', '.join(named)}.")
    ci_notes = paper.ci_notes() if backbones else notes
    ci = ci_grid("table7.ci", "Table 7: 95% bootstrap intervals", cols, 1, ci_rows, ci_notes)
    return grid("table7", TITLE, CAPTION, cols, 1, rows, notes), ci


def table7_ci(paper: PaperTables, scenario: str, used: list[str], base, cod, delta) -> list[Num]:
    if paper.cells is None or not used:
        return [Num(base), Num(cod), Num(delta, signed=True)]
    import numpy as np

    k = len(used)
    cells = [paper.cells[(b, DIRECT, scenario)] for b in used] + [paper.cells[(b, CODAR, scenario)] for b in used]
    c = paper.resampled(cells, "table7", scenario, *used)["c_sem_dyad"]
    with np.errstate(invalid="ignore"):
        b_vals, c_vals = c[:k].mean(axis=0), c[k:].mean(axis=0)  # NaN when one backbone's ratio is undefined
    return [
        paper.interval(base, b_vals),
        paper.interval(cod, c_vals),
        paper.interval(delta, c_vals - b_vals, signed=True),
    ]


def human_label(model: str) -> str:
    return model if "human" in model.lower() else f"{model} (human)"
