"""File I/O shared by every stage: JSON lines in and out, and atomic writes (a killed run never
leaves half a file; sorted keys, so equal content gives equal bytes)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
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


def _read_text(path: Path) -> str:
    """The file's text; a missing file, a folder or bytes that are not UTF-8 are a DataError naming it."""
    if path.is_dir():
        raise DataError(str(path), "is a folder, not a file")
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise DataError(str(path), "file not found") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(str(path), f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from exc


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line of a JSON-lines file: its number (from 1), its text, and either the JSON
    object it holds (``record``) or why it holds none (``problem``)."""

    line: int
    raw: str
    record: dict[str, Any] | None
    problem: str | None = None


def read_jsonl_lines(path: str | Path) -> list[JsonLine]:
    """Every non-blank line of a JSON-lines file, parsed; a line that is not a JSON object comes back
    with its ``problem`` instead of raising, so callers that drop bad records can report it. A file
    that cannot be read (missing, a folder, not UTF-8) is a DataError naming it."""
    path = Path(path)
    out = []
    # Lines end at "\n" only: str.splitlines() would also split at U+2028, U+2029 and U+0085, which
    # JSON strings written with ensure_ascii=False carry as they are (social-media text does).
    for n, line in enumerate(_read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            out.append(JsonLine(n, line, None, f"line {n} is not valid JSON ({exc.msg})"))
            continue
        if not isinstance(rec, dict):
            out.append(JsonLine(n, line, None, f"line {n} is not a JSON object"))
            continue
        out.append(JsonLine(n, line, rec))
    return out


def first_bad_line(path: str | Path, lines: list[JsonLine]) -> None:
    """Raise DataError for the first line that holds no JSON object, if any."""
    for jl in lines:
        if jl.problem is not None:
            raise DataError(str(path), jl.problem, record=f"line {jl.line}")


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read JSON lines; a bad line is an error naming the file and line."""
    lines = read_jsonl_lines(path)
    first_bad_line(path, lines)
    return [jl.record for jl in lines if jl.record is not None]


def is_number(v: Any) -> bool:
    """A finite int or float, not a boolean (what every metric, statistic and timestamp must be)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def parse_json_object(data: bytes, source: str, what: str) -> dict[str, Any]:
    """The JSON object in a file's bytes (UTF-8); anything else is a DataError naming ``source``
    (``what`` says what the object holds, e.g. ``{scenario: metrics}``). Score and stats files are
    read through here."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DataError(source, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise DataError(source, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}); truncated?") from exc
    if not isinstance(obj, dict):
        raise DataError(source, f"must be a JSON object {what}, got {type(obj).__name__}")
    return obj
