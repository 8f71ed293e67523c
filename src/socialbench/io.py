"""File I/O shared by every stage: JSON lines in and out, and atomic writes (a killed run never
leaves half a file; sorted keys, so equal content gives equal bytes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from socialbench.errors import DataError


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` through a temporary file renamed into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    tmp.replace(path)


def write_json(path: str | Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def jsonl_text(records: Iterable[Any]) -> str:
    return "".join(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n" for rec in records)


def write_jsonl(path: str | Path, records: Iterable[Any]) -> None:
    write_text_atomic(path, jsonl_text(records))


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read JSON lines; a bad line is an error naming the file and line."""
    path = Path(path)
    records = []
    try:
        lines = path.read_text("utf-8").splitlines()
    except FileNotFoundError as exc:
        raise DataError(str(path), "file not found") from exc
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(str(path), f"line {n} is not valid JSON ({exc.msg})", record=f"line {n}") from exc
        if not isinstance(rec, dict):
            raise DataError(str(path), f"line {n} is not a JSON object", record=f"line {n}")
        records.append(rec)
    return records
