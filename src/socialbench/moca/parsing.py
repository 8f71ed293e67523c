"""Parsing a model's raw answer into the four MoCA fields (pure functions, no I/O).

Strict: the raw text, stripped of surrounding whitespace, must be one JSON object. Every field is
resolved independently; a missing, unparsable or scenario-invalid field becomes None with its reason
in ``field_errors`` and scores as incorrect. Nothing is dropped.
"""

from __future__ import annotations

import json

from socialbench.moca.prompts import ANSWER_KEYS
from socialbench.moca.scoring import normalize


def parse_answer(
    raw: str | None,
    scenario_mechanisms: list[str],
    scenario_labels: list[str],
    maps: dict[str, dict[str, str]],
) -> tuple[dict[str, str | None], dict[str, str], str | None]:
    """Return (fields, field_errors, record_error).

    ``fields`` maps mechanism/label to the canonical taxonomy name and subject/target to the
    option text behind the answered slot id (None where invalid)."""
    fields: dict[str, str | None] = {k: None for k in ANSWER_KEYS}
    if raw is None:
        return fields, {k: "no response" for k in ANSWER_KEYS}, "no response"
    try:
        obj = json.loads(raw.strip())
    except json.JSONDecodeError as exc:
        return fields, {k: "unparsable" for k in ANSWER_KEYS}, f"unparsable: {exc.msg} at char {exc.pos}"
    if not isinstance(obj, dict):
        return fields, {k: "unparsable" for k in ANSWER_KEYS}, f"unparsable: JSON {type(obj).__name__}, not an object"
    errors: dict[str, str] = {}
    extra = sorted(set(obj) - set(ANSWER_KEYS))
    record_error = f"unexpected keys {extra}" if extra else None
    allowed = {"mechanism": scenario_mechanisms, "label": scenario_labels}
    for key in ANSWER_KEYS:
        if key not in obj:
            errors[key] = "missing"
            continue
        value = obj[key]
        if not isinstance(value, str):
            errors[key] = f"not a string: {value!r}"
            continue
        if key in allowed:
            hit = {normalize(name): name for name in allowed[key]}.get(normalize(value))
            problem = f"invalid for scenario: {value!r}"
        else:
            hit = {k.lower(): v for k, v in maps[key].items()}.get(normalize(value).replace(" ", ""))
            problem = f"invalid slot id: {value!r}"
        if hit is None:
            errors[key] = problem
        else:
            fields[key] = hit
    return fields, errors, record_error
