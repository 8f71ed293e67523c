"""Answer format per run: invalid output and the answers a format retry or repair changed (answers.csv,
and the line under each table that says so per row)."""

from __future__ import annotations

from typing import Any

from socialbench.moca.eval.outcomes import FORMAT_FLAGS
from socialbench.results.tables import SIGNED, csv_text

ANSWER_COUNTS = ("n", "invalid", *FORMAT_FLAGS)


def answer_counts(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """{scenario: counts} of one run's outcome rows: N, invalid, and the ``FORMAT_FLAGS`` sums."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        c = out.setdefault(row["group"], dict.fromkeys(ANSWER_COUNTS, 0))
        c["n"] += 1
        c["invalid"] += row["invalid"]
        for k in FORMAT_FLAGS:
            c[k] += row["format"][k]
    return out


def answers_note(rows: list[tuple[str, str, str, str]], scores, answers) -> str:
    """The line under a table: per row the invalid rate and the answers a retry or repair changed."""
    parts = []
    for label, m, meth, scenario in rows:
        inv = (scores.get((m, meth), {}).get(scenario) or {}).get("invalid_rate")
        text = f"{label} {SIGNED.number(inv)}"
        c = (answers or {}).get((m, meth, scenario))
        if c is not None:
            kinds = [f"{k.replace('_', ' ')} {c[k]}" for k in ("retry", "code_fence", "invalid_tuple") if c[k]]
            text += f" / {c['repaired']}" + (f" ({', '.join(kinds)})" if kinds else "")
            if c["checker_unparsable"]:
                text += f", checker unreadable {c['checker_unparsable']}"
            if c["answer_errors"]:
                text += f", {c['answer_errors']} of N = {c['n']} failed (scored invalid)"
        parts.append(text)
    how = "invalid % / answers a format retry or repair changed" if answers is not None else "invalid %"
    tail = (
        "; answers.csv has every count (params moca.answer: the same policy for every method)."
        if answers is not None
        else "; repairs unknown without --instances and --outcomes-dir."
    )
    return f"Answer format per row ({how}): " + "; ".join(parts) + tail


def answers_csv(answers: dict[tuple[str, str, str], dict[str, int]]) -> str:
    """answers.csv: one row per run and scenario with its invalid-output and repair counts."""
    return csv_text(
        ["model", "method", "scenario", *ANSWER_COUNTS],
        [[m, meth, s, *(c[k] for k in ANSWER_COUNTS)] for (m, meth, s), c in sorted(answers.items())],
    )
