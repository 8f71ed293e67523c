"""Filtering raw MoCA instances into the processed set (pure: no I/O besides checking media exist)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.errors import DataError
from socialbench.moca.schema import all_problems, record_name
from socialbench.taxonomy import Taxonomy


def prepare_instances(
    records: list[dict[str, Any]], tax: Taxonomy, source: str, on_invalid: str = "drop"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept records sorted by id, dropped records with reasons). With on_invalid='fail' the first
    bad record raises DataError naming the file, record and field."""
    if on_invalid not in ("drop", "fail"):
        raise ValueError(f"on_invalid must be 'drop' or 'fail', not {on_invalid!r}")
    kept, dropped = [], []
    for i, (rec, problems) in enumerate(zip(records, all_problems(records, tax))):
        if not problems:
            missing = [m for m in rec["media"] if not Path(m).is_file()]
            problems = [("media", f"file not found: {m}") for m in missing]
        if problems:
            if on_invalid == "fail":
                field, msg = problems[0]
                raise DataError(source, msg, record=record_name(rec, i), field=field)
            dropped.append({"id": record_name(rec, i), "source_file": source,
                            "problems": [{"field": f, "reason": r} for f, r in problems], "record": rec})
        else:
            kept.append(rec)
    kept.sort(key=lambda r: r["id"])
    return kept, dropped
