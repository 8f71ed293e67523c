"""The MoCA instance schema (pandera) and a reader naming the file, record and field at fault. Gold
fields are compared after the scorer's normalization (:func:`canonical_gold` stores the taxonomy's spelling)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pandera.pandas as pa

from socialbench.core.errors import DataError
from socialbench.core.io import first_bad_line, is_number, read_jsonl_lines
from socialbench.moca.schema.normalize import normalize
from socialbench.moca.schema.taxonomy import Taxonomy

FIELDS = tuple(
    (
        "id source modality text transcript media scenario domain culture subject_options target_options "
        "subject target mechanism label"
    ).split()
)
MODALITIES = ("image_text", "video_text")
N_OPTIONS = 4
FRAME_KEYS = ("path", "sha256", "index", "timestamp")  # what socialbench moca frames writes
EMPTY = "no records: the file is empty (or holds only blank lines)"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _is_str_list(n: int | None = None):
    """A list of non-empty strings: exactly ``n`` of them, or (without ``n``) at least one."""

    def check(v: Any) -> bool:
        return (
            isinstance(v, list)
            and all(isinstance(x, str) and x.strip() for x in v)
            and (len(v) == n if n is not None else len(v) >= 1)
        )

    return check


def instance_schema(taxonomy: Taxonomy) -> pa.DataFrameSchema:
    def listed(n: int | None, error: str) -> pa.Column:
        return pa.Column(object, pa.Check(_is_str_list(n), element_wise=True, error=error))

    nonempty = pa.Check.str_length(min_value=1)
    columns = {f: pa.Column(str, nonempty) for f in FIELDS}  # the fields below replaced in place
    columns.update(
        id=pa.Column(str, nonempty, unique=True),
        modality=pa.Column(str, pa.Check.isin(MODALITIES)),
        text=pa.Column(str),
        transcript=pa.Column(str, nullable=True),
        media=listed(None, "a non-empty list of paths"),
        scenario=pa.Column(str, pa.Check.isin(list(taxonomy.scenarios))),
        subject_options=listed(N_OPTIONS, f"a list of {N_OPTIONS} strings"),
        target_options=listed(N_OPTIONS, f"a list of {N_OPTIONS} strings"),
    )
    return pa.DataFrameSchema(columns, strict=False, coerce=False)


def _one_of(values: Sequence[str]) -> str:
    return "one of " + ", ".join(repr(v) for v in values)


def expected(field: str, taxonomy: Taxonomy) -> str:
    """What the schema wants in ``field``, in words (the first half of every schema problem)."""
    return {
        "text": "a string",
        "transcript": "a string or null",
        "modality": _one_of(MODALITIES),
        "scenario": _one_of(list(taxonomy.scenarios)),
        "media": "a non-empty list of paths",
        "subject_options": f"a list of {N_OPTIONS} non-empty strings",
        "target_options": f"a list of {N_OPTIONS} non-empty strings",
    }.get(field, "a non-empty string")


def describe(value: Any, limit: int = 80) -> str:
    """A value as the record holds it, for messages: ``int 42``, ``null``, ``'text'``, ``list [1, 2]``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, str):
        if not value:
            return "an empty string"
        text = repr(value)
    else:
        kind = {list: "list", dict: "object"}.get(type(value), type(value).__name__)
        try:
            text = f"{kind} {json.dumps(value, ensure_ascii=False)}"
        except (TypeError, ValueError):
            text = f"{kind} {value!r}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _schema_problems(records: list[dict[str, Any]], taxonomy: Taxonomy) -> dict[int, list[tuple[str, str]]]:
    """One pandera pass over all records: per record position, one problem per field, from its own value."""
    frame = pd.DataFrame([{f: rec[f] for f in FIELDS} for rec in records])
    out: dict[int, list[tuple[str, str]]] = {}
    try:
        instance_schema(taxonomy).validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        seen: set[tuple[int, str]] = set()
        for _, row in exc.failure_cases.iterrows():
            field, check = str(row.get("column")), str(row.get("check"))
            if check == "field_uniqueness" or field not in FIELDS:
                continue
            idx = row.get("index")
            # A failure without a row (a check on the whole column) concerns every record.
            positions = [int(idx)] if idx is not None and not pd.isna(idx) else range(len(records))
            for pos in positions:
                if (pos, field) in seen:
                    continue
                seen.add((pos, field))
                reason = f"expected {expected(field, taxonomy)}, got {describe(records[pos][field])}"
                out.setdefault(pos, []).append((field, reason))
    return out


def frames_problem(value: Any) -> str | None:
    """Why the optional ``frames`` field (written by the media stage) is malformed, or None."""
    shape = (
        "a non-empty list of frames ({path, sha256, index, timestamp} objects, as socialbench moca frames writes them)"
    )
    if not isinstance(value, list) or not value:
        return f"expected {shape}, got {describe(value)}"
    previous = None
    for k, frame in enumerate(value):
        if not isinstance(frame, dict):
            return f"frame {k}: expected an object with {', '.join(FRAME_KEYS)}, got {describe(frame)}"
        missing = [key for key in ("path", "sha256", "timestamp") if key not in frame]
        if missing:
            return f"frame {k}: missing {', '.join(missing)}"
        path, digest, stamp = frame["path"], frame["sha256"], frame["timestamp"]
        if not isinstance(path, str) or not path.strip():
            return f"frame {k}: path: expected a non-empty string, got {describe(path)}"
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            return f"frame {k}: sha256: expected 64 lowercase hex digits, got {describe(digest)}"
        if not is_number(stamp) or stamp < 0:
            return f"frame {k}: timestamp: expected a number of seconds >= 0, got {describe(stamp)}"
        if "index" in frame:
            index = frame["index"]
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                return f"frame {k}: index: expected an integer >= 0, got {describe(index)}"
        if previous is not None and stamp < previous:
            return (
                f"frame {k}: timestamp {stamp} is before the previous"
                f" frame's ({previous}); frames must be in temporal order"
            )
        previous = stamp
    return None


def _match(value: str, allowed: Sequence[str]) -> str | None:
    """The member of ``allowed`` equal to ``value`` after normalization (the scorer's), else None."""
    return {normalize(a): a for a in allowed}.get(normalize(value))


def _collision(options: Sequence[str]) -> str | None:
    """Two options the same after normalization (the scorer could not tell them apart), else None."""
    seen: dict[str | None, str] = {}
    for o in options:
        if normalize(o) in seen:
            return f"{seen[normalize(o)]!r} and {o!r} are the same option after normalization"
        seen[normalize(o)] = o
    return None


def _cross_field_problems(rec: dict[str, Any], taxonomy: Taxonomy) -> list[tuple[str, str]]:
    """Gold within the options and the scenario's taxonomy, after the scorer's normalization."""
    problems = []
    for role in ("subject", "target"):
        clash = _collision(rec[f"{role}_options"])
        if clash:
            problems.append((f"{role}_options", clash))
        elif _match(rec[role], rec[f"{role}_options"]) is None:
            problems.append((role, f"gold {rec[role]!r} is not one of {role}_options"))
    s = rec["scenario"]
    if _match(rec["mechanism"], taxonomy.mechanism_names(s)) is None:
        problems.append(("mechanism", f"{rec['mechanism']!r} is not a mechanism of scenario {s!r}"))
    if _match(rec["label"], taxonomy.label_names(s)) is None:
        problems.append(("label", f"{rec['label']!r} is not a label of scenario {s!r}"))
    return problems


def canonical_gold(rec: dict[str, Any], taxonomy: Taxonomy) -> dict[str, Any]:
    """A copy of a valid record with its gold spelled as the taxonomy and options write it."""
    s = rec["scenario"]
    out = dict(rec)
    out["mechanism"] = _match(rec["mechanism"], taxonomy.mechanism_names(s))
    out["label"] = _match(rec["label"], taxonomy.label_names(s))
    for role in ("subject", "target"):
        out[role] = _match(rec[role], rec[f"{role}_options"])
    return out


def media_error_problem(value: Any, rec: dict[str, Any]) -> str | None:
    """Why the optional ``media_error`` field (an instance kept with failed media) is malformed, or None."""
    if not isinstance(value, str) or not value.strip():
        return f"expected a non-empty string (the media problem), got {describe(value)}"
    if "frames" in rec:
        return "a record with media_error has no frames (the media stage writes one or the other)"
    return None


def _where(positions: list[int], lines: Sequence[int] | None) -> str:
    if lines is None:
        return ("record " if len(positions) == 1 else "records ") + ", ".join(str(p + 1) for p in positions)
    return ("on line " if len(positions) == 1 else "on lines ") + ", ".join(str(lines[p]) for p in positions)


def all_problems(
    records: list[dict[str, Any]], taxonomy: Taxonomy, lines: Sequence[int] | None = None
) -> list[list[tuple[str, str]]]:
    """For each record its (field, problem) pairs, duplicate ids included (naming the other line)."""
    result: list[list[tuple[str, str]]] = [[] for _ in records]
    complete = []
    for i, rec in enumerate(records):
        missing = [f for f in FIELDS if f not in rec]
        result[i].extend((f, "missing") for f in missing)
        if not missing:
            complete.append(i)
    if complete:
        schema_probs = _schema_problems([records[i] for i in complete], taxonomy)
        for pos, probs in schema_probs.items():
            result[complete[pos]].extend(probs)
    for i, rec in enumerate(records):
        if "frames" in rec:
            problem = frames_problem(rec["frames"])
            if problem:
                result[i].append(("frames", problem))
        if "media_error" in rec:
            problem = media_error_problem(rec["media_error"], rec)
            if problem:
                result[i].append(("media_error", problem))
    for i in complete:
        if not result[i]:
            result[i].extend(_cross_field_problems(records[i], taxonomy))
    # Duplicate ids: every copy is dropped (else the file's order would pick the gold), naming the others.
    by_id: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        rid = rec.get("id")
        if isinstance(rid, str) and rid:
            by_id.setdefault(rid, []).append(i)
    for positions in by_id.values():
        if len(positions) > 1:
            for i in positions:
                others = [p for p in positions if p != i]
                result[i].append(("id", f"duplicate id, also {_where(others, lines)}"))
    return result


def record_name(rec: dict[str, Any] | None, position: int, line: int | None = None) -> str:
    """The record's id, else its line in the file (when known), else its position (from 1)."""
    rid = rec.get("id") if isinstance(rec, dict) else None
    if isinstance(rid, str) and rid:
        return rid
    return f"line {line}" if line is not None else f"record {position + 1}"


def validate_records(
    records: list[dict[str, Any]], taxonomy: Taxonomy, path: str, lines: Sequence[int] | None = None
) -> None:
    """Raise DataError for the first bad record, naming file, record id and field."""
    for i, problems in enumerate(all_problems(records, taxonomy, lines)):
        if problems:
            field, msg = problems[0]
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            line = lines[i] if lines is not None else None
            raise DataError(path, msg + more, record=record_name(records[i], i, line), field=field)


def load_instances(path: str | Path, taxonomy: Taxonomy) -> list[dict[str, Any]]:
    """The validated instances of a file, gold canonical; a bad record is a DataError naming file and field."""
    lines = read_jsonl_lines(path)
    first_bad_line(path, lines)
    records = [jl.record for jl in lines if jl.record is not None]
    validate_records(records, taxonomy, str(path), [jl.line for jl in lines])
    return [canonical_gold(r, taxonomy) for r in records]
