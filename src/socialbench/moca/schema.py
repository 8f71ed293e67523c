"""The MoCA instance schema (pandera) and a reader that names the file, record and field at fault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pandera.pandas as pa

from socialbench.errors import DataError
from socialbench.io import read_jsonl
from socialbench.taxonomy import Taxonomy

FIELDS = (
    "id", "source", "modality", "text", "transcript", "media", "scenario", "domain", "culture",
    "subject_options", "target_options", "subject", "target", "mechanism", "label",
)  # fmt: skip
OPTIONAL_FIELDS = ("frames",)  # added by the media stage to video-text instances
MODALITIES = ("image_text", "video_text")
N_OPTIONS = 4


def _is_str_list(n: int | None = None):
    def check(v: Any) -> bool:
        return isinstance(v, list) and all(isinstance(x, str) and x.strip() for x in v) and (n is None or len(v) == n)

    return check


def instance_schema(taxonomy: Taxonomy) -> pa.DataFrameSchema:
    scenarios = list(taxonomy.scenarios)
    nonempty = pa.Check.str_length(min_value=1)
    return pa.DataFrameSchema(
        {
            "id": pa.Column(str, nonempty, unique=True),
            "source": pa.Column(str, nonempty),
            "modality": pa.Column(str, pa.Check.isin(MODALITIES)),
            "text": pa.Column(str),
            "transcript": pa.Column(str, nullable=True),
            "media": pa.Column(object, pa.Check(_is_str_list(), element_wise=True, error="a non-empty list of paths")),
            "scenario": pa.Column(str, pa.Check.isin(scenarios)),
            "domain": pa.Column(str, nonempty),
            "culture": pa.Column(str, nonempty),
            "subject_options": pa.Column(object, pa.Check(_is_str_list(N_OPTIONS), element_wise=True, error=f"a list of {N_OPTIONS} strings")),
            "target_options": pa.Column(object, pa.Check(_is_str_list(N_OPTIONS), element_wise=True, error=f"a list of {N_OPTIONS} strings")),
            "subject": pa.Column(str, nonempty),
            "target": pa.Column(str, nonempty),
            "mechanism": pa.Column(str, nonempty),
            "label": pa.Column(str, nonempty),
        },
        strict=False,
        coerce=False,
    )


def _schema_problems(records: list[dict[str, Any]], taxonomy: Taxonomy) -> dict[int, list[tuple[str, str]]]:
    """One pandera pass over all records; problems keyed by record position."""
    frame = pd.DataFrame([{f: rec[f] for f in FIELDS} for rec in records])
    out: dict[int, list[tuple[str, str]]] = {}
    try:
        instance_schema(taxonomy).validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        for _, row in exc.failure_cases.iterrows():
            idx = row.get("index")
            pos = int(idx) if idx is not None and not pd.isna(idx) else -1
            out.setdefault(pos, []).append(
                (str(row.get("column")), f"failed check {row.get('check')} (value {row.get('failure_case')!r})")
            )
    return out


def _cross_field_problems(rec: dict[str, Any], taxonomy: Taxonomy) -> list[tuple[str, str]]:
    problems = []
    if rec["subject"] not in rec["subject_options"]:
        problems.append(("subject", f"gold {rec['subject']!r} is not one of subject_options"))
    if rec["target"] not in rec["target_options"]:
        problems.append(("target", f"gold {rec['target']!r} is not one of target_options"))
    s = rec["scenario"]
    if rec["mechanism"] not in taxonomy.mechanism_names(s):
        problems.append(("mechanism", f"{rec['mechanism']!r} is not a mechanism of scenario {s!r}"))
    if rec["label"] not in taxonomy.label_names(s):
        problems.append(("label", f"{rec['label']!r} is not a label of scenario {s!r}"))
    return problems


def all_problems(records: list[dict[str, Any]], taxonomy: Taxonomy) -> list[list[tuple[str, str]]]:
    """For each record, its (field, problem) pairs: missing fields, the pandera schema, then
    cross-field checks (gold within the options and within the scenario's taxonomy)."""
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
            if pos < 0:
                for i in complete:
                    result[i].extend(probs)
            else:
                result[complete[pos]].extend(probs)
        for i in complete:
            if not result[i]:
                result[i].extend(_cross_field_problems(records[i], taxonomy))
    seen: set[str] = set()
    for i, rec in enumerate(records):
        rid = rec.get("id")
        if isinstance(rid, str):
            if rid in seen:
                result[i].append(("id", "duplicate id"))
            seen.add(rid)
    return result


def record_problems(rec: dict[str, Any], taxonomy: Taxonomy) -> list[tuple[str, str]]:
    return all_problems([rec], taxonomy)[0]


def record_name(rec: dict[str, Any], position: int) -> str:
    rid = rec.get("id")
    return str(rid) if isinstance(rid, str) and rid else f"record {position + 1}"


def validate_records(records: list[dict[str, Any]], taxonomy: Taxonomy, path: str) -> None:
    """Raise DataError for the first bad record, naming file, record id and field."""
    for i, problems in enumerate(all_problems(records, taxonomy)):
        if problems:
            field, msg = problems[0]
            more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
            raise DataError(path, msg + more, record=record_name(records[i], i), field=field)


def load_instances(path: str | Path, taxonomy: Taxonomy) -> list[dict[str, Any]]:
    records = read_jsonl(path)
    validate_records(records, taxonomy, str(path))
    return records
