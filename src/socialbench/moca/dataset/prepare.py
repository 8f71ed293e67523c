"""Filtering raw MoCA instances into the processed set. Besides the records, only media files are read:
each must exist, and an image-text instance's images must decode (clips are decoded by the media stage)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.io import JsonLine, first_bad_line, read_jsonl_lines
from socialbench.core.paths import special_file, special_problem
from socialbench.media.images import ImageUnreadable, verify_image_file
from socialbench.moca.schema.instances import EMPTY, all_problems, canonical_gold, record_name
from socialbench.moca.schema.taxonomy import Taxonomy

ON_INVALID = ("drop", "fail")
RAW_LIMIT = 200  # characters of an unparsable line kept in the drop report


def check_on_invalid(on_invalid: str) -> None:
    if on_invalid not in ON_INVALID:
        raise SocialbenchError(f"--on-invalid {on_invalid!r}: must be one of {', '.join(ON_INVALID)}")


def media_problems(rec: dict[str, Any], media_roots: Any = None) -> list[tuple[str, str]]:
    """(field, reason) for each media file outside ``media_roots``, missing, or not a decodable image."""
    problems = []
    for m in rec["media"]:
        path = Path(m)
        outside = media_roots.problem(m) if media_roots is not None else None
        if outside:
            problems.append(("media", outside))
        elif path.is_dir():
            problems.append(("media", f"{m} is a folder, not a file"))
        elif special_file(path):
            problems.append(("media", f"{m} {special_problem(special_file(path) or '', 'media file')}"))
        elif not path.is_file():
            problems.append(("media", f"file not found: {m}"))
        elif rec["modality"] == "image_text":
            try:
                verify_image_file(path)
            except ImageUnreadable as exc:
                problems.append(("media", str(exc)))  # "<path>: cannot decode the image (<why>)"
            except OSError as exc:
                problems.append(("media", f"cannot read {m}: {exc.strerror or exc}"))
    return problems


def prepare_instances(
    records: list[dict[str, Any]],
    tax: Taxonomy,
    source: str,
    on_invalid: str = "drop",
    lines: Sequence[int] | None = None,
    media_roots: Any = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept records sorted by id, gold canonical; dropped records with reasons); ``lines``: of ``source``."""
    check_on_invalid(on_invalid)
    kept, dropped = [], []
    for i, (rec, problems) in enumerate(zip(records, all_problems(records, tax, lines))):
        if not problems:
            problems = media_problems(rec, media_roots)
        line = lines[i] if lines is not None else None
        if problems:
            if on_invalid == "fail":
                field, msg = problems[0]
                raise DataError(source, msg, record=record_name(rec, i, line), field=field)
            entry = {
                "id": record_name(rec, i, line),
                "source_file": source,
                "problems": [{"field": f, "reason": r} for f, r in problems],
                "record": rec,
            }
            if line is not None:
                entry["line"] = line
            dropped.append(entry)
        else:
            kept.append(canonical_gold(rec, tax))  # "Mock" is kept as the label mock, not dropped for its case
    kept.sort(key=lambda r: r["id"])
    return kept, dropped


def _truncated(text: str, limit: int = RAW_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bad_line_entry(jl: JsonLine, source: str) -> dict[str, Any]:
    raw = _truncated(jl.raw)
    return {
        "id": f"line {jl.line}",
        "line": jl.line,
        "source_file": source,
        "problems": [{"field": jl.field, "reason": f"{jl.problem}: {raw!r}"}],
        "record": None,
        "raw": raw,
    }


def prepare_file(
    path: str | Path, tax: Taxonomy, on_invalid: str = "drop", media_roots: Any = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`prepare_instances` over a JSON-lines file; a line that is no JSON object is dropped or fails."""
    check_on_invalid(on_invalid)
    source = str(path)
    lines = read_jsonl_lines(path)
    if not lines:
        raise DataError(source, EMPTY)
    if on_invalid == "fail":
        first_bad_line(path, lines)
    good = [jl for jl in lines if jl.record is not None]
    kept, dropped = prepare_instances(
        [jl.record for jl in good], tax, source, on_invalid, [jl.line for jl in good], media_roots
    )
    dropped += [_bad_line_entry(jl, source) for jl in lines if jl.record is None]
    dropped.sort(key=lambda d: d["line"])
    return kept, dropped
