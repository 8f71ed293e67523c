"""MeetingToM result tables (Markdown, CSV, LaTeX) and headline metrics. Pure functions.

One table per task (``task2_1.md/.csv/.tex``): a row per (model, method), grouped by the models'
categories, and a chance row (uniform guessing over each instance's options); a column per source
(the demo meetings, the real AMI meetings) with exact-match accuracy and its 95% bootstrap interval.
A source without instances gets a note instead of a column (the real corpus when its mirror is
absent), and a model that excludes a method gets a note instead of a row.

Intervals: the instance-level percentile bootstrap of ``socialbench.stats.bootstrap_ci`` (B = 2000,
seed ``stats.cell_seed(seed, model, method, group)``). Accuracy is a mean of exchangeable 0/1
outcomes, so its bootstrap distribution depends on the number correct and N only; the interval is
computed from the score file's counts (the first ``correct`` of ``n`` outcomes set), which keeps it
a function of the scores and the seed.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Mapping, Sequence

from socialbench.benchmark import excluded

TASK_TITLES = {"task2_1": "Task 2.1: addressee identification (exact-match accuracy, %)"}
SOURCE_TITLES = {"demo": "demo meetings", "ami": "AMI meetings"}
RESAMPLES = 2000


def accuracy_ci(correct: int, n: int, seed: int, key: tuple[str, ...]) -> tuple[float | None, float | None]:
    import numpy as np

    from socialbench.stats import bootstrap_ci, cell_seed

    outcome = np.zeros((n, 4), dtype=bool)
    outcome[:correct] = True
    ci = bootstrap_ci(outcome, n_resamples=RESAMPLES, seed=cell_seed(seed, *key))
    return ci.intervals["label"].low, ci.intervals["label"].high


def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


def _tex(text: str) -> str:
    """Text safe in LaTeX (special characters escaped one by one)."""
    special = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "_": "\\_", "#": "\\#", "$": "\\$", "{": "\\{", "}": "\\}",
               "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"}  # fmt: skip
    return "".join(special.get(ch, ch) for ch in str(text))


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def build_rows(scores: Mapping[tuple[str, str], Mapping[str, Any]], categories: Mapping[str, str], groups: Sequence[str],
               seed: int) -> list[dict[str, Any]]:
    """A row per (model, method) in category order (as models appear in params), then by name."""
    order = list(dict.fromkeys(categories.values()))
    rows = []
    for (model, method), sc in sorted(scores.items(), key=lambda kv: (order.index(categories.get(kv[0][0], order[-1])) if order else 0, kv[0])):
        cells = {}
        for g in groups:
            m = sc.get(g)
            if m is None:
                continue
            low, high = accuracy_ci(m["correct"], m["n"], seed, (model, method, g))
            cells[g] = {"accuracy": m["accuracy"], "low": low, "high": high, "invalid_rate": m["invalid_rate"], "n": m["n"]}
        rows.append({"model": model, "method": method, "category": categories.get(model, ""), "cells": cells})
    return rows


def chance_row(scores: Mapping[tuple[str, str], Mapping[str, Any]], groups: Sequence[str]) -> dict[str, Any]:
    any_sc = next(iter(scores.values()), {})
    return {g: any_sc[g]["chance"] for g in groups if g in any_sc}


def notes(groups: Sequence[str], task: str, params: Mapping[str, Any], excluded: Sequence[str]) -> list[str]:
    out = []
    for src in ("demo", "ami"):
        if f"{task}/{src}" not in groups:
            where = (params.get("meetingtom") or {}).get("ami", {}).get("mirror") if src == "ami" else "the demo release"
            out.append(f"No instances from the {SOURCE_TITLES[src]}: the source ({where}) was absent or gave none when the data"
                       f" stages ran (see data/processed/meetingtom/{src}/source.json); the table shows the other source only.")  # fmt: skip
    out += excluded
    return out


def to_markdown(task: str, rows: list[dict[str, Any]], chance: Mapping[str, float], groups: Sequence[str], note_lines: Sequence[str]) -> str:
    head = "| category | model | method | " + " | ".join(
        f"{SOURCE_TITLES.get(g.split('/', 1)[1], g)} (n={next((r['cells'][g]['n'] for r in rows if g in r['cells']), '?')})" for g in groups) + " |"
    lines = [f"# {TASK_TITLES.get(task, task)}", "", "Accuracy [95% bootstrap CI]; invalid answers count as wrong.", "", head,
             "|---|---|---|" + "---:|" * len(groups)]  # fmt: skip
    for r in rows:
        cells = [f"{_fmt(c['accuracy'])} [{_fmt(c['low'])}, {_fmt(c['high'])}]" if (c := r["cells"].get(g)) else "-" for g in groups]
        lines.append(f"| {_md(r['category'])} | {_md(r['model'])} | {_md(r['method'])} | " + " | ".join(cells) + " |")
    lines.append("| chance | uniform guess | - | " + " | ".join(_fmt(chance.get(g)) for g in groups) + " |")
    if note_lines:
        lines += [""] + [f"Note: {n}" for n in note_lines]
    return "\n".join(lines) + "\n"


def to_csv(rows: list[dict[str, Any]], chance: Mapping[str, float], groups: Sequence[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["category", "model", "method", "group", "n", "accuracy", "ci_low", "ci_high", "invalid_rate"])
    for r in rows:
        for g in groups:
            c = r["cells"].get(g)
            if c:
                w.writerow([r["category"], r["model"], r["method"], g, c["n"], c["accuracy"], c["low"], c["high"], c["invalid_rate"]])
    for g in groups:
        if g in chance:
            w.writerow(["chance", "uniform guess", "", g, "", chance[g], "", "", ""])
    return buf.getvalue()


def to_latex(task: str, rows: list[dict[str, Any]], chance: Mapping[str, float], groups: Sequence[str]) -> str:
    cols = "lll" + "c" * len(groups)
    head = " & ".join(["Category", "Model", "Method"] + [_tex(SOURCE_TITLES.get(g.split("/", 1)[1], g)) for g in groups])
    lines = ["\\begin{table}[t]", "\\centering", f"\\caption{{{_tex(TASK_TITLES.get(task, task))}}}", f"\\begin{{tabular}}{{{cols}}}",
             "\\toprule", head + " \\\\", "\\midrule"]  # fmt: skip
    for r in rows:
        cells = [f"{_fmt(c['accuracy'])} [{_fmt(c['low'])}, {_fmt(c['high'])}]" if (c := r["cells"].get(g)) else "--" for g in groups]
        lines.append(" & ".join([_tex(r["category"]), _tex(r["model"]), _tex(r["method"])] + cells) + " \\\\")
    lines += ["\\midrule", " & ".join(["Chance", "uniform guess", "--"] + [_fmt(chance.get(g)) for g in groups]) + " \\\\",
              "\\bottomrule", "\\end{tabular}", "\\end{table}"]  # fmt: skip
    return "\n".join(lines) + "\n"


def excluded_notes(models: Mapping[str, Any], methods: Sequence[str]) -> list[str]:
    out = []
    for m, entry in models.items():
        for meth in sorted(methods):
            reason = excluded(entry, "meetingtom", meth)
            if reason:
                out.append(f"{m} is not run with {meth}: {reason}")
    return out


def tables(scores: Mapping[tuple[str, str], Mapping[str, Any]], params: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """``({file name: text}, headline)`` for every task in the scores."""
    categories = {m: e["category"] for m, e in params["models"].items()}
    methods = (params.get("meetingtom") or {}).get("methods", [])
    kept = {(m, meth): sc for (m, meth), sc in scores.items() if excluded(params["models"].get(m, {}), "meetingtom", meth) is None}
    groups_all = sorted({g for sc in scores.values() for g in sc})
    files: dict[str, str] = {}
    for task in sorted({g.split("/", 1)[0] for g in groups_all} | {"task2_1"}):
        groups = [g for g in (f"{task}/demo", f"{task}/ami") if g in groups_all]
        rows = build_rows(kept, categories, groups, params["seed"])
        chance = chance_row(scores, groups)
        files[f"{task}.md"] = to_markdown(task, rows, chance, groups, notes(groups, task, params, excluded_notes(params["models"], methods)))
        files[f"{task}.csv"] = to_csv(rows, chance, groups)
        files[f"{task}.tex"] = to_latex(task, rows, chance, groups)
    headline = {f"{m}.{meth}": {g: sc[g]["accuracy"] for g in sorted(sc)} for (m, meth), sc in sorted(kept.items())}
    return files, headline
