"""Tables 5-7 and their companions in the shared table model (``socialbench.results.tables``): key
columns (the first groups rows), then ``Num`` cells, MoCA's symbols in its text (:func:`moca_text`)."""

from __future__ import annotations

from collections.abc import Sequence

from socialbench.results.tables import Block, Cell, Num, Table, Text, grouped, md_escape, tex_escape


def tex_text(s: str) -> str:
    """Escaped text with C_sem|dyad in math mode (the escaper sets Δ and ± in math mode already)."""
    return tex_escape(s).replace("C\\_sem|dyad", r"$C_{\mathrm{sem}\mid\mathrm{dyad}}$")


def moca_text(s: str) -> Text:
    """Text with the tables' symbols: stars escaped in Markdown, C_sem|dyad in LaTeX math."""
    return Text(s, md=md_escape(s).replace("*", "\\*"), tex=tex_text(s))


def grid(
    name: str,
    title: str,
    caption: str,
    columns: Sequence[str],
    nkeys: int,
    rows: Sequence[Sequence[Cell]],
    notes: Sequence[str],
) -> Table:
    """A table as the paper prints it: ``nkeys`` key columns, rows grouped by the first; none without rows."""
    heads, texts = [Text(c, tex=tex_text(c)) for c in columns], [moca_text(n) for n in notes]
    block = Block(heads, grouped(rows), keys=nkeys, notes=texts, header_when_empty=False)
    return Table(title, [block], caption=Text(caption, tex=tex_text(caption)), label=f"tab:moca-{name}")


def ci_grid(
    name: str, title: str, columns: Sequence[str], nkeys: int, rows: Sequence[Sequence[Cell]], notes: Sequence[str]
) -> Table:
    """A :func:`grid` of intervals whose CSV is the long format (keys, column, value, interval)."""
    t = grid(name, title, "", columns, nkeys, rows, notes)
    lines = [
        [*row[:nkeys], head, Num(c.value), Num(c.low), Num(c.high), c.undefined if c.has_ci else ""]
        for row in rows
        for head, c in zip(columns[nkeys:], row[nkeys:])
    ]
    t.csv = ([*columns[:nkeys], "column", "value", "low", "high", "undefined_resamples"], lines)
    return t
