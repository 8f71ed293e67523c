"""Table 5: the ablation of CoDAR's steps against full CoDAR with the same backbone, with paired tests,
the answer-format line and 95% intervals; other backbones than the paper's get a table of the same form."""

from __future__ import annotations

from typing import TYPE_CHECKING

from socialbench.moca.results.answers import answers_note
from socialbench.moca.results.grids import ci_grid, grid
from socialbench.moca.results.tables import CODAR, HEADER
from socialbench.results.numbers import difference, mean
from socialbench.results.tables import Num, Table

if TYPE_CHECKING:
    from socialbench.moca.results.paper import PaperTables


CAPTION = (
    "Ablation of CoDAR's steps. Atomic Avg. is the mean of Lab, Subj, Tgt and Mech; (+x / -x): change"
    " over full CoDAR with the same backbone."
)
#: The extra table of the ablation rows of every backbone but Table 5's own.
OTHER_BACKBONES = "table5_other_backbones"


def table5(paper: PaperTables) -> tuple[Table, Table]:
    """Table 5: the ablations of one backbone, params' ``ablation_backbone`` or the first with the rows."""
    chosen = paper.table5_backbone()
    named = paper.settings.ablation_backbone
    no_rows = lead = None
    if named is not None and chosen is None:
        no_rows = f"No rows: {named} (moca.tables.ablation_backbone) has no codar and ablation runs."
    elif named is None and chosen is not None:
        others = [m for m in paper.ablation_backbones() if m != chosen]
        lead = (
            f"Backbone: {chosen}, the first model with codar and ablation runs (moca.tables.ablation_backbone"
            " names it; the paper's is Qwen3-VL-32B-Instruct)"
            + (f"; {', '.join(others)} in {OTHER_BACKBONES}." if others else ".")
        )
    backbones = [chosen] if chosen else []
    return ablation_grids(paper, backbones, "table5", "Table 5: Ablation of CoDAR's steps", no_rows, lead)


def table5_other_backbones(paper: PaperTables) -> tuple[Table, Table]:
    """Beyond the paper: the ablations of every other backbone with codar and ablation rows, as Table 5."""
    chosen = paper.table5_backbone()
    others = [m for m in paper.ablation_backbones() if m != chosen]
    title = "Ablation of CoDAR's steps on the other backbones (beyond the paper)"
    no_rows = f"No rows: no model but Table 5's ({chosen or 'none'}) has codar and ablation runs."
    return ablation_grids(paper, others, OTHER_BACKBONES, title, no_rows)


def ablation_grids(
    paper: PaperTables, backbones: list[str], name: str, title: str, no_rows: str | None = None, lead: str | None = None
) -> tuple[Table, Table]:
    """The ablation grid of ``backbones`` against full CoDAR on the same backbone, and its intervals."""
    cols = ["Scenario", "Backbone", "Variant", HEADER["atomic"], "Dyad", "Faith", "Holis"]
    heading = title.split(":")[0] if title.startswith("Table") else title
    rows, ci_rows, notes = [], [], [lead] if lead else []
    atomic_keys = ("label", "subject", "target", "mechanism")
    answer_rows = []  # (row label, model, method, scenario) of the answer-format line, as Tables 2-4 have
    for s in paper.scenarios:
        for m in backbones:
            full_atomic = mean(paper.value(m, CODAR, s, k) for k in atomic_keys)
            for meth, label in [(CODAR, "CoDAR"), *paper.settings.ablations]:
                if not paper.has(m, meth) or s not in paper.scores[(m, meth)]:
                    continue
                ablated = meth != CODAR
                atomic = mean(paper.value(m, meth, s, k) for k in atomic_keys)
                row = [s, m, label, Num(atomic, difference(atomic, full_atomic) if ablated else None)]
                crow = [s, m, label, atomic_ci(paper, m, meth, s, atomic)]
                for key in ("dyad", "faith", "holis"):
                    d = difference(paper.value(m, meth, s, key), paper.value(m, CODAR, s, key)) if ablated else None
                    row.append(
                        Num(paper.value(m, meth, s, key), d, mark=ablated and paper.significant("5", (m, meth), s, key))
                    )
                    crow.append(paper.cell(m, meth, s, key))
                rows.append(row)
                ci_rows.append(crow)
                answer_rows.append((f"{m} {label} ({s})", m, meth, s))
    if not backbones:
        runs = ", ".join(a for a, _ in paper.settings.ablations) or "none defined: see moca.ablations"
        notes = [
            no_rows
            or f"No rows: no model has codar and ablation runs; add codar and its ablations ({runs}) to moca.methods."
        ]
    else:
        missing = [a for a, _ in paper.settings.ablations if not any(paper.has(m, a) for m in backbones)]
        if missing:
            notes.append(f"Not run: {', '.join(missing)} (add to moca.methods).")
        what = "paired test against full CoDAR (exact McNemar; paired bootstrap for Faith; Atomic Avg. is not tested)"
        notes.append(paper.tests_note("5", what))
        notes.append(answers_note(answer_rows, paper.scores, paper.answers))
    ci_notes = paper.ci_notes() if backbones else notes
    ci = ci_grid(f"{name}.ci", f"{heading}: 95% bootstrap intervals", cols, 3, ci_rows, ci_notes)
    return grid(name, title, CAPTION, cols, 3, rows, notes), ci


def atomic_ci(paper: PaperTables, model: str, method: str, scenario: str, atomic: float | None) -> Num:
    cell = None if paper.cells is None else paper.cells.get((model, method, scenario))
    if cell is None:
        return Num(atomic)
    r = paper.resampled([cell], model, method, scenario)  # the cell's own seed: its intervals' resamples
    return paper.interval(atomic, (r["label"][0] + r["subject"][0] + r["target"][0] + r["mechanism"][0]) / 4)
