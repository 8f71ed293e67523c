"""Result tables per scenario, as the paper's Tables 2-4: rows are models grouped by category;
columns Lab, Subj, Tgt, Mech, Dyad, Faith, Holis. Rendered as Markdown, CSV and LaTeX (booktabs).
Pure functions: they take scores and return strings (``socialbench.results.collect_scores`` checks
that a set of score files makes one coherent table)."""

from __future__ import annotations

import csv
import io
from typing import Any


COLUMNS = (("Lab", "label"), ("Subj", "subject"), ("Tgt", "target"), ("Mech", "mechanism"),
           ("Dyad", "dyad"), ("Faith", "faith"), ("Holis", "holis"))  # fmt: skip
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


def _md_cell(s: str) -> str:
    """A table cell: a `|` would start a new column, a line break would end the row."""
    return " ".join(str(s).replace("\\", "\\\\").replace("|", "\\|").split())


def to_markdown(scenario: str, rows, n: int | None = None) -> str:
    head = "| Category | Model | " + " | ".join(c for c, _ in COLUMNS) + " |"
    sep = "|---|---|" + "---:|" * len(COLUMNS)
    lines = [f"### {scenario.capitalize()}" + (f" (N = {n})" if n is not None else ""), "", head, sep]
    for cat, name, vals in rows:
        lines.append(f"| {_md_cell(cat)} | {_md_cell(name)} | " + " | ".join(_fmt(v) for v in vals) + " |")
    return "\n".join(lines) + "\n"


def to_csv(rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["category", "model", *[c for c, _ in COLUMNS]])
    for cat, name, vals in rows:
        w.writerow([cat, name, *["" if v is None else f"{v:.2f}" for v in vals]])
    return buf.getvalue()


def _tex_escape(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("$", r"\$")):
        s = s.replace(a, b)
    return s


def to_latex(scenario: str, rows) -> str:
    cols = "ll" + "r" * len(COLUMNS)
    out = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{Performance (accuracy, \%) in the {scenario.capitalize()} scenario.}}",
        rf"\label{{tab:moca-{scenario}}}",
        rf"\begin{{tabular}}{{{cols}}}",
        r"\toprule",
        "Category & Model & " + " & ".join(c for c, _ in COLUMNS) + r" \\",
        r"\midrule",
    ]
    last = None
    for cat, name, vals in rows:
        if last is not None and cat != last:
            out.append(r"\midrule")
        out.append(f"{_tex_escape(cat) if cat != last else ''} & {_tex_escape(name)} & "
                   + " & ".join("--" if v is None else f"{v:.2f}" for v in vals) + r" \\")
        last = cat
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(out) + "\n"


def excluded_note(models: dict[str, dict[str, Any]], methods: list[str]) -> str:
    """A note under each table naming the (model, method) pairs params excludes, with their reasons
    (empty when none is excluded)."""
    lines = [f"- {_md_cell(row_name(m, meth))}: not run ({_md_cell(reason)})"
             for m, e in models.items() for meth, reason in (e.get("exclude_methods") or {}).items() if meth in methods]
    return "\nExcluded in params:\n" + "\n".join(lines) + "\n" if lines else ""
