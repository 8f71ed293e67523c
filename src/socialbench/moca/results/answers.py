"""Answer format per run: invalid output and the answers a format retry or repair changed (answers.csv,
and the line under each table that says so per row)."""

from __future__ import annotations

from typing import Any

from socialbench.moca.eval.scoring import instance_valid_sets, is_invalid
from socialbench.results.tables import SIGNED, csv_text

ANSWER_COUNTS = ("n", "invalid", "answer_errors", "repaired", "retry", "code_fence", "invalid_tuple", "ignored_keys")
ANSWER_COUNTS += ("last_tuple_kept", "checker_unparsable")


def answer_counts(
    instances: list[dict[str, Any]], records: list[dict[str, Any]], labels, mechanisms
) -> dict[str, dict[str, int]]:
    """{scenario: counts} of one run: N, the instances scored invalid (any field missing, unparsable or
    invalid, as the scorer counts them), those with no usable answer (``error``), the answers a retry or
    repair changed (``repaired``, and per repair), those with keys dropped under ``extra_keys: ignore``,
    and those whose answer is the decoder's last tuple because a later stage failed (the checker's
    verdict unreadable: ``checker_unparsable``). Read from the records' ``format`` (params moca.answer)."""
    by_id = {r.get("id"): r for r in records}
    out: dict[str, dict[str, int]] = {}
    for gold in instances:
        s = gold["scenario"]
        c = out.setdefault(s, dict.fromkeys(ANSWER_COUNTS, 0))
        pred = by_id.get(gold["id"])
        valid = instance_valid_sets(gold, labels.get(s, []), mechanisms.get(s, []))
        answer = None if pred is not None and pred.get("error") else pred
        fmt = (pred or {}).get("format") or {}
        repairs = fmt.get("repairs") or []
        kept = fmt.get("last_tuple_kept")
        c["n"] += 1
        c["invalid"] += is_invalid(answer, valid)
        c["answer_errors"] += pred is None or bool(pred.get("error"))
        c["repaired"] += bool(repairs)
        for r in ("retry", "code_fence", "invalid_tuple"):
            c[r] += r in repairs
        c["ignored_keys"] += bool(fmt.get("ignored_keys"))
        c["last_tuple_kept"] += bool(kept)
        c["checker_unparsable"] += kept == "checker"
    return out


def answers_note(rows: list[tuple[str, str, str, str]], scores, answers) -> str:
    """The line under a table: per row (``(row label, model, method, scenario)``), the invalid rate
    (%) and how many answers a format retry or repair changed, so a gain that is format repair shows as
    such; and for a run with failures (no usable answer: a failed call, a format failure, media), how
    many of its N they are (kept in N, scored invalid)."""
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
        else "; repairs unknown without --instances and --predictions-dir."
    )
    return f"Answer format per row ({how}): " + "; ".join(parts) + tail


def answers_csv(answers: dict[tuple[str, str, str], dict[str, int]]) -> str:
    """answers.csv: one row per run and scenario with its invalid-output and repair counts."""
    return csv_text(
        ["model", "method", "scenario", *ANSWER_COUNTS],
        [[m, meth, s, *(c[k] for k in ANSWER_COUNTS)] for (m, meth, s), c in sorted(answers.items())],
    )
