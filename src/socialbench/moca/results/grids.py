"""The paper's Tables 5-7 and every companion (95% intervals, Figure 9's means) as grids: leading key
columns, then number cells (``socialbench.results.tables.Num``), rendered by the shared table model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from socialbench.results.tables import Block, Table, Text, csv_number, csv_text, grouped, md_escape, tex_escape
from socialbench.results.tables import to_csv as render_csv
from socialbench.results.tables import to_latex as render_latex
from socialbench.results.tables import to_markdown as render_markdown


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


def tex_text(s: str) -> str:
    """Escaped text with C_sem|dyad in math mode (the escaper sets Δ and ± in math mode already)."""
    return tex_escape(s).replace("C\\_sem|dyad", r"$C_{\mathrm{sem}\mid\mathrm{dyad}}$")


def moca_text(s: str) -> Text:
    """Text with the tables' symbols: stars escaped in Markdown, C_sem|dyad in LaTeX math."""
    return Text(s, md=md_escape(s).replace("*", "\\*"), tex=tex_text(s))


def grid_table(g: Grid) -> Table:
    """A grid in the shared model: its number cells as they are (``Num``), its notes as MoCA text."""
    block = Block(
        [Text(c, tex=tex_text(c)) for c in g.columns],
        grouped(g.rows),
        keys=g.nkeys,
        notes=[moca_text(n) for n in g.notes],
        header_when_empty=False,
    )
    level = len(g.title) - len(g.title.lstrip("#"))
    title = g.title[level:].lstrip(" ")
    caption = Text(g.caption, tex=tex_text(g.caption))
    return Table(title, [block], level=level, caption=caption, label=f"tab:moca-{g.name}")


def grid_markdown(g: Grid) -> str:
    return render_markdown(grid_table(g))


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
                *(csv_number(v) for v in (c.value, c.low, c.high)),
                c.undefined if c.has_ci else "",
            ]
            for row in g.rows
            for head, c in zip(g.columns[g.nkeys :], row[g.nkeys :])
        ),
    )
