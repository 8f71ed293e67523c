"""MoCA's per-instance outcomes (pure): what ``socialbench score`` writes beside each score file, one
JSON line per instance (``id``, ``group``, ``correct``, ``invalid``, ``answer``, ``format``), so the
tables never score the predictions again."""

from __future__ import annotations

from typing import Any

from socialbench.moca.eval.scoring import FIELDS

#: The resolved answer's fields, in the order of a row's ``answer``.
ANSWER_FIELDS = ("subject", "target", "mechanism", "label")


def resolved(record: dict[str, Any] | None) -> list[Any] | None:
    """A run's resolved answer: the four fields as scored (None: no record, or an error)."""
    if record is None or record.get("error"):
        return None
    return [record.get(f) for f in ANSWER_FIELDS]


def format_flags(record: dict[str, Any] | None) -> dict[str, bool]:
    """:data:`FORMAT_FLAGS` of one instance's record (None: no record), in their order."""
    fmt = (record or {}).get("format") or {}
    repairs = fmt.get("repairs") or []
    kept = fmt.get("last_tuple_kept")
    return {
        "answer_errors": record is None or bool(record.get("error")),
        "repaired": bool(repairs),
        **{r: r in repairs for r in ("retry", "code_fence", "invalid_tuple")},
        "ignored_keys": bool(fmt.get("ignored_keys")),
        "last_tuple_kept": bool(kept),
        "checker_unparsable": kept == "checker",
    }


#: Per instance, from the record's ``format``: its answer failed, a retry or repair changed it (which), keys
#: were dropped, it is the decoder's last tuple (a later stage failed). answers.csv sums them per scenario.
FORMAT_FLAGS = tuple(format_flags(None))


def rows_of(matched_rows: list[tuple[dict, dict | None, dict[str, bool], bool]]) -> list:
    """Each instance's outcome row, in the instances' order, from ``scoring.matched``'s rows."""
    return [
        {
            "id": gold["id"],
            "group": gold["scenario"],
            "correct": {k: matches[k] for k in FIELDS},
            "invalid": invalid,
            "answer": resolved(pred),
            "format": format_flags(pred),
        }
        for gold, pred, matches, invalid in matched_rows
    ]
