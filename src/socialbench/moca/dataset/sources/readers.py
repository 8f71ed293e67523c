"""Reading raw source files so that every problem (bad encoding, truncated or malformed JSON, bad table
columns or rows) is a one-line :class:`DataError` naming the file, the record and the field."""

from __future__ import annotations

import codecs
import csv
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError, DataError
from socialbench.core.io import read_file_bytes
from socialbench.core.sheets import csv_rows

_WS = re.compile(r"[ \t\n\r]*")


def check_encoding(encoding: str) -> str:
    """The codec's canonical name; an unknown one is a ConfigError naming it."""
    try:
        return codecs.lookup(encoding).name
    except LookupError as exc:
        why = "use a Python codec name such as utf-8, cp1252, latin-1"
        raise ConfigError(f"unknown text encoding {encoding!r} ({why})") from exc


def _line_col(data: bytes | str, offset: int) -> tuple[int, int]:
    nl = b"\n" if isinstance(data, bytes) else "\n"
    line = data.count(nl, 0, offset) + 1
    start = data.rfind(nl, 0, offset) + 1
    return line, offset - start + 1


def decode(data: bytes, source: str, encoding: str = "utf-8") -> str:
    """Text of ``data`` (a UTF-8 BOM dropped); bytes that do not decode are a DataError naming byte and line."""
    codec = check_encoding(encoding)
    if codec == "utf-8" and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        line, col = _line_col(data, exc.start)
        why = f"not {codec} text: byte 0x{data[exc.start]:02x} at offset {exc.start} (column {col}) does not decode"
        fix = "if the file uses another encoding, set `encoding` for this source in params.yaml"
        raise DataError(source, f"{why} ({exc.reason}); {fix}", record=f"line {line}") from exc


def read_text(path: str | Path, encoding: str = "utf-8") -> str:
    """The file's text (:func:`decode`); a missing file, a folder or a special file is a DataError naming it."""
    return decode(read_file_bytes(path), str(path), encoding)


def _skip_ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _json_error(
    text: str, source: str, pos: int, msg: str, position: int, last: str | None, container: str
) -> DataError:
    line, col = _line_col(text, pos)
    after = f", after record {last}" if last is not None else ", before the first complete record"
    closed = text.rstrip().endswith("]" if container == "array" else "}")
    cut = "" if closed else f"; the file ends before the {container} is closed: truncated?"
    return DataError(source, f"invalid JSON at line {line} column {col}: {msg}{cut}", record=f"{position + 1}{after}")


def json_records(text: str, source: str, container: str) -> Iterator[tuple[str | int, Any]]:
    """The top-level records of a JSON array or object, parsed one at a time so errors name the record."""
    decoder = json.JSONDecoder()
    open_, close = ("[", "]") if container == "array" else ("{", "}")
    i = _skip_ws(text, 0)
    if i >= len(text):
        raise DataError(source, "empty file: expected a JSON " + container)
    if text[i] != open_:
        raise DataError(source, f"expected a JSON {container} (starting with {open_!r}), got {text[i]!r} at the start")
    i = _skip_ws(text, i + 1)
    position, last = 0, None

    def fail(pos: int, msg: str) -> DataError:  # naming the record the error is in, or the last one read
        return _json_error(text, source, pos, msg, position, last, container)

    if i < len(text) and text[i] == close:
        yield from ()
        i += 1
    else:
        while True:
            key: str | int = position
            if container == "object":
                try:
                    key, i = decoder.raw_decode(text, i)
                except json.JSONDecodeError as exc:
                    raise fail(exc.pos, f"expected a record key: {exc.msg}") from exc
                if not isinstance(key, str):
                    raise fail(i, "a record key must be a string")
                i = _skip_ws(text, i)
                if i >= len(text) or text[i] != ":":
                    raise fail(i, f"expected ':' after key {key!r}")
                i = _skip_ws(text, i + 1)
            try:
                value, i = decoder.raw_decode(text, i)
            except json.JSONDecodeError as exc:
                where = f" (in record {key!r})" if container == "object" else ""
                raise fail(exc.pos, f"{exc.msg}{where}") from exc
            yield key, value
            last = repr(key) if container == "object" else str(position + 1)
            position += 1
            i = _skip_ws(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip_ws(text, i + 1)
                continue
            if i < len(text) and text[i] == close:
                i += 1
                break
            msg = f"expected ',' or {close!r}" if i < len(text) else f"the {container} is not closed"
            raise fail(i, msg)
    if _skip_ws(text, i) < len(text):
        line, col = _line_col(text, _skip_ws(text, i))
        raise DataError(source, f"extra data after the JSON {container} at line {line} column {col}")


def jsonl_records(text: str, source: str) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSON-lines text."""
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            cut = " (the line ends here: truncated?)" if exc.pos >= len(line.rstrip()) else ""
            raise DataError(source, f"invalid JSON at column {exc.colno}: {exc.msg}{cut}", record=f"line {n}") from exc


def table_rows(
    text: str, source: str, required: Sequence[str], delimiter: str = ",", quoting: int = csv.QUOTE_MINIMAL
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """(header, [(line, row)]) of a CSV/TSV text (``core.sheets.csv_rows``, every sheet's reader)."""
    return csv_rows(text, source, required, delimiter=delimiter, quoting=quoting)


def require_fields(value: Any, fields: Sequence[str], source: str, record: str) -> dict[str, Any]:
    """``value`` as a JSON object with every one of ``fields``; else a DataError naming the first missing."""
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}.get(type(value), "null")
        raise DataError(source, f"expected a JSON object, got {kind}", record=record)
    for f in fields:
        if f not in value:
            raise DataError(source, "missing", record=record, field=f)
    return value


def expect_str(value: Any, source: str, record: str, field: str, allow_empty: bool = True) -> str:
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        why = f"expected {'a' if allow_empty else 'a non-empty'} string, got {json.dumps(value)[:60]}"
        raise DataError(source, why, record=record, field=field)
    return value


def expect_str_list(value: Any, source: str, record: str, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(source, f"expected a list of strings, got {json.dumps(value)[:60]}", record=record, field=field)
    return list(value)
