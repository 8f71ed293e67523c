"""Sheets (CSV/TSV that people fill in or sources ship): the one reader every import uses, naming file, line
(where the row starts) and column: :func:`csv_rows` (a header, no column twice, then rows of its width),
:func:`distinct_sheets` (no file in two roles), :func:`rows_match` (exactly the items exported)."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from socialbench.core.errors import DataError

__all__ = ["csv_rows", "distinct_sheets", "rows_match"]


def csv_rows(
    text: str,
    source: str,
    required: Sequence[str] = (),
    *,
    delimiter: str = ",",
    quoting: int = csv.QUOTE_MINIMAL,
    exact: bool = True,
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """(header, [(line, row)]); blank rows skipped; short rows padded unless ``exact``. DataError naming
    ``source``, line and column for a missing or duplicated column, a wrong width or a bad quote."""
    text = text[1:] if text.startswith("\ufeff") else text  # a spreadsheet's UTF-8 byte-order mark
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting, strict=True)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise DataError(source, "empty file: expected a header line") from None
    except csv.Error as exc:
        raise DataError(source, f"unreadable header: {exc}", record="line 1 (header)") from None
    twice = next((h for i, h in enumerate(header) if h and h in header[:i]), None)
    if twice is not None:
        raise DataError(
            source, f"the column {twice!r} is in the header twice: which one is meant?", "line 1 (header)", twice
        )
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(
            source,
            f"missing column(s) {', '.join(repr(c) for c in missing)};"
            f" the header has {', '.join(repr(h) for h in header)}",
            record="line 1 (header)",
            field=missing[0],
        )
    rows = []
    start = reader.line_num + 1
    try:
        for fields in reader:
            line, start = start, reader.line_num + 1
            if not fields or all(not f.strip() for f in fields):
                continue
            if len(fields) > len(header) or (exact and len(fields) != len(header)):
                raise DataError(
                    source,
                    f"expected {len(header)} fields ({delimiter!r}-separated), got {len(fields)}",
                    record=f"line {line}",
                )
            rows.append((line, dict(zip(header, fields + [""] * (len(header) - len(fields))))))
    except csv.Error as exc:
        raise DataError(source, f"malformed row: {exc}", record=f"line {start}") from None
    return header, rows


def distinct_sheets(sheets: Iterable[tuple[str, str | os.PathLike[str]]]) -> None:
    """Refuse one file (by path or link) in two roles; identical bytes in two files are allowed."""
    seen: dict[tuple[int, int], tuple[str, Path]] = {}
    for role, path in sheets:
        p = Path(path)
        if not p.is_file():
            continue
        st = p.stat()
        key = (st.st_dev, st.st_ino)
        if key in seen:
            first_role, first = seen[key]
            raise DataError(
                str(p),
                f"{role} is the same file as {first_role} {first}: one sheet given twice (each role needs its own)",
            )
        seen[key] = (role, p)


def rows_match(source: str, rows: Mapping[str, int], items: Iterable[str], what: str = "the exported items") -> None:
    """The sheet's rows ({item id: line}) are exactly ``items``: a stray or missing one is named."""
    expected = list(items)
    wanted = set(expected)
    for iid, line in rows.items():
        if iid not in wanted:
            raise DataError(source, f"{iid!r} is not one of {what}", record=f"line {line}", field="item_id")
    absent = [i for i in expected if i not in rows]
    if absent:
        more = f" ({len(absent)} of {len(expected)} items have none)" if len(absent) > 1 else ""
        raise DataError(
            source,
            f"no row for item {absent[0]!r}{more}: the sheet's rows must be {what} (export the sheet again?)",
            field="item_id",
        )
