"""One table model, rendered to Markdown, CSV and LaTeX: every table is a :class:`Table`, so there is one
escaper per format and one layout of each file. A table has blocks (grids with an optional heading) and
notes; a cell is a plain value, a :class:`Text` or a :class:`Num` written the table's way
(:class:`NumStyle`). Tables stay objects until :func:`render_file` writes them. The benchmarks' figures share
:func:`new_figure` and :func:`drawn` (PNG and PDF bytes, matplotlib, Agg) at the end. Pure functions."""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from socialbench.core.modalities import backend_declaration, temperature_sent_of
from socialbench.results.numbers import fixed, half_up

#: LaTeX's special characters in text, each replaced by its escaped form.
TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
#: Symbols the tables print that LaTeX sets in math mode.
TEX_SYMBOLS = {"±": r"$\pm$", "Δ": r"$\Delta$", "↑": r"$\uparrow$", "↓": r"$\downarrow$"}
LAYOUTS = ("compact", "sections")


def tex_escape(text: Any) -> str:
    """Text safe in LaTeX, one character at a time (nothing escaped twice); the tables' symbols in math mode."""
    return "".join(TEX_SPECIAL.get(ch) or TEX_SYMBOLS.get(ch) or ch for ch in str(text))


def md_escape(text: Any) -> str:
    """A Markdown table cell: a `|` would start a new column, a line break would end the row."""
    return " ".join(str(text).replace("\\", "\\\\").replace("|", "\\|").split())


def temperature_note(models: Mapping[str, Mapping[str, Any]], shown: Iterable[str]) -> str | None:
    """The note under a table naming the shown models whose runs send no temperature (their API takes none,
    or ``options.send_temperature: false``), from params as the run stats' ``temperature_sent``; else None."""
    why = []
    for name in sorted(set(shown)):
        entry = models.get(name)
        if entry is None or "backend" not in entry or temperature_sent_of(entry) is not False:
            continue
        option = backend_declaration(entry["backend"]).temperature_option
        set_off = option is not None and (entry.get("options") or {}).get(option) is False
        reason = f"options.{option}: false" if set_off else f"the {entry['backend']} API takes none"
        why.append(f"{name} ({reason})")
    if not why:
        return None
    return (
        f"No temperature sent: {'; '.join(why)}. These models decode at their own default temperature, not at"
        " the one the method asks for."
    )


def json_mode_note(models: Mapping[str, Mapping[str, Any]], shown: Iterable[str]) -> str | None:
    """The note under a table naming the shown models whose backend declares ``json_mode.enforced: false``
    (unless ``options.json_mode: none``), from params as the run stats' ``json_enforced``; else None."""
    why = []
    for name in sorted(set(shown)):
        entry = models.get(name)
        if entry is None or "backend" not in entry or (entry.get("options") or {}).get("json_mode") == "none":
            continue
        declared = backend_declaration(entry["backend"])
        if declared.json_enforced is False:
            reason = declared.json_why or f"the {entry['backend']} server does not enforce it"
            why.append(f"{name} ({reason})")
    if not why:
        return None
    return (
        f"JSON mode not enforced: {'; '.join(why)}. These models' requests ask for JSON, but they decode freely:"
        " an answer may go on after its JSON object or never form one, and is scored as an answer that breaks"
        " the format."
    )


@dataclass(frozen=True)
class Text:
    """A cell or note whose rendering differs by format: ``plain`` is escaped for each format unless
    that format's own text is given (``md``, ``tex``: written as they are; ``csv``: the CSV value)."""

    plain: str
    md: str | None = None
    tex: str | None = None
    csv: str | None = None


@dataclass(frozen=True)
class NumStyle:
    """How a table writes its numbers. ``missing``: the mark for no value (Markdown, and LaTeX unless ``tex_missing``);
    ``change``: ``"signed"`` (+3.12) or ``"arrow"`` (↑3.12); ``csv_bare``: the CSV writes 66.7, not 66.70."""

    missing: str = "–"
    tex_missing: str | None = "--"
    change: str = "signed"
    csv_bare: bool = False

    def __post_init__(self) -> None:
        if self.change not in ("signed", "arrow"):
            raise ValueError(f"change must be 'signed' or 'arrow', got {self.change!r}")

    def csv(self, v: float | None) -> str:
        """A value as the table's CSV writes it: rounded half-up, with two decimals (66.70) or, ``csv_bare``,
        as the rounded number prints (66.7); empty when missing."""
        if v is None:
            return ""
        return repr(half_up(v)) if self.csv_bare else fixed(v)

    def number(self, v: float | None) -> str:
        """A value as the table prints it: two decimals, rounded half-up (``results.numbers.fixed``)."""
        return self.missing if v is None else fixed(v)

    def changed(self, d: float | None) -> str:
        """A change as the table prints it: +3.12 / ↑3.12, ±0.00 for none."""
        if d is None:
            return self.missing
        if d == 0:
            return "±0.00"
        if self.change == "signed":
            return fixed(d, sign=True)
        return f"{'↑' if d > 0 else '↓'}{fixed(abs(d))}"


#: The default style: "–" for a missing value, +x / -x changes.
SIGNED = NumStyle()


@dataclass(frozen=True)
class Num:
    """A number cell (percent or points) and what is printed beside it: ``delta`` (``has_delta`` alone prints the
    missing mark), ``mark`` (a star), ``[low, high]`` when ``has_ci``, ``n``. ``text``: a note instead; ``exact``: the
    unrounded value, never printed."""

    value: float | None = None
    delta: float | None = None
    has_delta: bool = False
    mark: bool = False
    signed: bool = False
    best: bool = False
    low: float | None = None
    high: float | None = None
    undefined: int = 0
    has_ci: bool = False
    n: int | None = None
    text: str | None = None
    exact: Any = None

    def with_ci(self, low: float | None, high: float | None, undefined: int = 0) -> Num:
        return replace(self, low=low, high=high, undefined=undefined, has_ci=True)

    def render(self, style: NumStyle = SIGNED) -> Text:
        """The cell's text in each format."""
        if self.text is not None:
            return Text(self.text, csv="")
        v = style.changed(self.value) if self.signed else style.number(self.value)
        if self.value is None and not (self.has_delta or self.n is not None):
            return Text(v, tex=style.tex_missing, csv="")
        change = ""
        if self.value is not None and self.delta is not None:
            change = f" ({style.changed(self.delta)}{'*' * self.mark})"
        elif self.has_delta:
            change = f" ({style.missing})"
        elif self.value is not None and self.mark:
            change = "*"
        interval = tex_interval = ""
        if self.has_ci and self.value is not None:
            bounds = f"[{style.number(self.low)}, {style.number(self.high)}]"
            undef = f" ({self.undefined} undef.)" if self.undefined else ""
            interval, tex_interval = f" {bounds}{undef}", rf" {{\scriptsize {bounds}}}{undef}"
        n = "" if self.n is None else f" (n={self.n})"
        return Text(
            v + change + interval + n,
            md=(f"**{v}**" if self.best else v) + change.replace("*", "\\*") + interval + n,
            tex=(rf"\textbf{{{v}}}" if self.best else tex_escape(v))
            + tex_escape(change).replace("*", "$^{*}$")
            + tex_interval
            + n,
            csv=style.csv(self.value),
        )


Cell = Text | Num | str | int | float


def _text(c: Cell, style: NumStyle = SIGNED) -> Cell:
    return c.render(style) if isinstance(c, Num) else c


def _plain(c: Cell) -> str:
    c = _text(c)
    return c.plain if isinstance(c, Text) else str(c)


def md_text(c: Cell, style: NumStyle = SIGNED) -> str:
    c = _text(c, style)
    return c.md if isinstance(c, Text) and c.md is not None else md_escape(_plain(c))


def tex_text(c: Cell, style: NumStyle = SIGNED) -> str:
    c = _text(c, style)
    return c.tex if isinstance(c, Text) and c.tex is not None else tex_escape(_plain(c))


def csv_value(c: Cell, style: NumStyle = SIGNED) -> Any:
    c = _text(c, style)
    if isinstance(c, Text):
        return c.plain if c.csv is None else c.csv
    return c


@dataclass
class Row:
    """One row; ``rule_before``: a LaTeX rule above it (a new group of rows starts); ``key``: what
    names the row in a long-format CSV (:func:`keyed_cells`), which may hold what the row does not show."""

    cells: list[Cell]
    rule_before: bool = False
    key: tuple[Any, ...] = ()


@dataclass
class Block:
    """One grid: ``keys`` leading text columns, then value columns; ``title`` a heading; ``empty`` a Markdown line after
    it; ``align`` a LaTeX column spec; ``key`` and ``column_keys`` name it in a long-format CSV."""

    columns: list[Cell]
    rows: list[Row] = field(default_factory=list)
    keys: int = 1
    title: str | None = None
    notes: list[Cell] = field(default_factory=list)
    empty: str | None = None
    header_when_empty: bool = True
    align: str | None = None
    key: tuple[Any, ...] = ()
    column_keys: list[tuple[Any, ...]] = field(default_factory=list)


@dataclass
class Table:
    """A table: heading (``title`` at ``level``), LaTeX caption and label, ``intro`` lines, blocks, notes, Markdown-only
    ``md_notes``; ``csv``: (columns, rows) of a long format of its own; ``style``: how numbers are written."""

    title: str
    blocks: list[Block]
    level: int = 3
    caption: Cell | None = None
    label: str | None = None
    intro: list[str] = field(default_factory=list)
    notes: list[Cell] = field(default_factory=list)
    layout: str = "compact"
    csv: tuple[Sequence[Any], Sequence[Sequence[Any]]] | None = None
    style: NumStyle = SIGNED
    md_notes: list[Cell] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"table layout must be one of {LAYOUTS}, got {self.layout!r}")


@dataclass
class Document:
    """Tables written one after another as one Markdown file (a benchmark's all.md), each as its own file has
    it, a blank line between; ``notes``: paragraphs after the last table."""

    tables: list[Table]
    notes: list[Cell] = field(default_factory=list)


def grouped(rows: Iterable[Sequence[Cell]]) -> list[Row]:
    """Rows grouped by their first cell, as the paper prints them: a rule where it changes, repeats blank in LaTeX."""
    out: list[Row] = []
    last: str | None = None
    for cells in rows:
        first = _plain(cells[0])
        head: Cell = cells[0] if first != last else Text(first, md=md_text(cells[0]), tex="", csv=csv_value(cells[0]))
        out.append(Row([head, *cells[1:]], rule_before=last is not None and first != last))
        last = first
    return out


def keyed_cells(t: Table) -> Iterator[tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...], Num]]:
    """``(block key, row key, column key, cell)`` of every :class:`Num` cell, in order, for a long-format CSV."""
    for b in t.blocks:
        values = len(b.columns) - b.keys
        if len(b.column_keys) != values:
            raise ValueError(f"a block has {values} value columns but {len(b.column_keys)} column keys")
        for r in b.rows:
            for key, c in zip(b.column_keys, r.cells[b.keys :]):
                if isinstance(c, Num):
                    yield b.key, r.key, key, c


def to_markdown(t: Table) -> str:
    sections = t.layout == "sections"
    lines = ["#" * t.level + " " + t.title, ""]
    for line in t.intro:
        lines += [line, ""]
    for b in t.blocks:
        if b.title is not None:
            lines += ["#" * (t.level + 1) + " " + b.title, ""]
        grid = bool(b.rows) or b.header_when_empty
        if grid:
            lines += [
                "| " + " | ".join(md_text(c) for c in b.columns) + " |",
                "|" + "---|" * b.keys + "---:|" * (len(b.columns) - b.keys),
            ]
            lines += ["| " + " | ".join(md_text(c, t.style) for c in r.cells) + " |" for r in b.rows]
        if b.empty is not None:
            lines += ["", b.empty]
        if sections:
            for n in b.notes:
                lines += ["", "Note: " + md_text(n)]
            lines.append("")
        else:
            if grid:
                lines.append("")
            lines += [md_text(n) for n in b.notes]
    for n in t.notes:
        lines += ["Note: " + md_text(n), ""] if sections else [md_text(n)]
    text = "\n".join(lines).rstrip("\n") + "\n"
    return text + "".join(f"\n{md_text(n)}" for n in t.md_notes) + "\n" * bool(t.md_notes)


def document_markdown(d: Document) -> str:
    text = "\n".join(to_markdown(t) for t in d.tables)
    for n in d.notes:
        text = text.rstrip("\n") + f"\n\n{md_text(n)}\n"
    return text


def csv_text(columns: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """CSV with ``\\n`` line ends (the one CSV writer of the tables)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows(rows)
    return buf.getvalue()


def to_csv(t: Table) -> str:
    """The table's own long format, else its first block's column heads and every block's rows (CSV values)."""
    if t.csv is not None:
        columns, rows = t.csv
        return csv_text(columns, ([csv_value(v, t.style) if isinstance(v, Num) else v for v in row] for row in rows))
    columns = [csv_value(c) for c in t.blocks[0].columns] if t.blocks else []
    return csv_text(columns, ([csv_value(c, t.style) for c in r.cells] for b in t.blocks for r in b.rows))


def to_latex(t: Table) -> str:
    sections = t.layout == "sections"

    def note(n: Cell) -> str:
        return rf"\par\footnotesize {tex_text(n)}" if sections else rf"\par\smallskip{{\footnotesize {tex_text(n)}}}"

    out = [r"\begin{table}[t]", r"\centering"]
    if t.caption is not None:
        out.append(rf"\caption{{{tex_text(t.caption)}}}")
    if t.label is not None:
        out.append(rf"\label{{{t.label}}}")
    for b in t.blocks:
        ncols = len(b.columns)
        out += [rf"\begin{{tabular}}{{{b.align or 'l' * b.keys + 'r' * (ncols - b.keys)}}}", r"\toprule"]
        if b.title is not None:
            out += [rf"\multicolumn{{{ncols}}}{{l}}{{{tex_escape(b.title)}}} \\", r"\midrule"]
        out += [" & ".join(tex_text(c) for c in b.columns) + r" \\", r"\midrule"]
        for r in b.rows:
            if r.rule_before:
                out.append(r"\midrule")
            out.append(" & ".join(tex_text(c, t.style) for c in r.cells) + r" \\")
        out += [r"\bottomrule", r"\end{tabular}"]
        if sections:
            out.append(r"\par\medskip")
        out += [note(n) for n in b.notes]
    out += [note(n) for n in t.notes]
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def formats(stem: str, t: Table, exts: Sequence[str] = ("md", "csv", "tex")) -> dict[str, Table]:
    """``{stem.md: t, stem.csv: t, stem.tex: t}``: the names one table is written under."""
    return {f"{stem}.{ext}": t for ext in exts}


RENDERERS = {Table: {".md": to_markdown, ".csv": to_csv, ".tex": to_latex}, Document: {".md": document_markdown}}
File = Table | Document | str | bytes


def render_file(name: str, content: File) -> str | bytes:
    """What the file ``name`` holds: a table in its suffix's format, a document as Markdown, text or bytes as is."""
    if not isinstance(content, Table | Document):
        return content
    by_suffix = RENDERERS[type(content)]
    suffix = "." + name.rsplit(".", 1)[-1]
    if suffix not in by_suffix:
        raise ValueError(f"{name}: a {type(content).__name__} is written as one of {sorted(by_suffix)}")
    return by_suffix[suffix](content)


def rendered(files: Mapping[str, File]) -> dict[str, str | bytes]:
    """Every file of ``files`` as it is written (:func:`render_file`)."""
    return {name: render_file(name, content) for name, content in files.items()}


def with_note(files: Mapping[str, File], note: Cell) -> dict[str, File]:
    """Every table and document of ``files`` with ``note`` as its last note (in every format but the CSV,
    which stays data); a table written under several names is noted once, so they stay one table."""
    noted: dict[int, Table | Document] = {}
    out: dict[str, File] = {}
    for name, content in files.items():
        if isinstance(content, Table | Document):
            content = noted.setdefault(id(content), replace(content, notes=[*content.notes, note]))
        out[name] = content
    return out


#: The finish reasons the answers table has a column for, in order (``core.backend.FINISH_REASONS``);
#: another one a record carries is counted under ``other``.
FINISH_COLUMNS = ("stop", "length", "error", "refusal", "content_filter", "no_record")


def answers_table(runs: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]], categories: Mapping[str, str]) -> Table:
    """One row per (model, run): N, answers that could not be scored (``error`` set) and their share, and
    each ``finish_reason``'s count (``none``: not reported, as by the baselines)."""
    columns: list[Cell] = ["model", "category", "run", "N", "invalid", "invalid %", *FINISH_COLUMNS, "other", "none"]
    rows = []
    for (model, run), records in sorted(runs.items()):
        n = len(records)
        invalid = sum(1 for r in records if r.get("error"))
        reasons = [r.get("finish_reason") for r in records]
        counts = [sum(1 for f in reasons if f == c) for c in FINISH_COLUMNS]
        other = sum(1 for f in reasons if f is not None and f not in FINISH_COLUMNS)
        share = Num(100.0 * invalid / n) if n else Num()
        rows.append([model, categories.get(model, ""), run, n, invalid, share, *counts, other, reasons.count(None)])
    block = Block(columns=columns, rows=grouped(rows), keys=3, empty=None if rows else "(no runs)")
    return Table(
        title="Answers: N, invalid share and finish reasons per run",
        blocks=[block],
        caption="Answers per run: N, invalid share, finish reasons",
        label="tab:answers-finish",
        notes=[
            "invalid: answers that could not be scored (unparsable, cut at max_tokens, failed calls);"
            " finish reasons as the backend reported them (length: cut at max_tokens; none: not reported)."
        ],
    )


# ---- figures ------------------------------------------------------------------------------------------------------
_DPI = 150
_PNG_META = {"Software": None}
_PDF_META = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}


def new_figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=_DPI, layout="constrained")


def figure_bytes(fig) -> dict[str, bytes]:
    """PNG and PDF bytes of a figure, without timestamps or versions."""
    out = {}
    for fmt, meta in (("png", _PNG_META), ("pdf", _PDF_META)):
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, metadata=meta, dpi=_DPI)
        out[fmt] = buf.getvalue()
    return out


def drawn(draw):
    """``draw`` (returning a figure) as a function returning :func:`figure_bytes`, in matplotlib's default style."""

    @functools.wraps(draw)
    def render(*args: Any, **kwargs: Any) -> dict[str, bytes]:
        import matplotlib
        import matplotlib.style

        with matplotlib.rc_context(), matplotlib.style.context("default"):
            matplotlib.rcParams.update({"svg.hashsalt": "socialbench", "pdf.compression": 6, "font.size": 8})
            return figure_bytes(draw(*args, **kwargs))

    return render
