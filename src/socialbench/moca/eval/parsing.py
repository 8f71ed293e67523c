"""Parsing a model's raw answer into the four MoCA fields (pure functions, no I/O).

Strict by default: the raw text, stripped of surrounding whitespace, must be one JSON object (D.1:
"Return only a strict JSON object"; the paper decodes in JSON mode). With ``code_fence="tolerate"``
(params ``moca.answer.code_fence``) one Markdown code fence enclosing the whole answer (```` ```json ````
or a bare ```` ``` ````) is removed first; anything else around the object still makes it unparsable.
Every field is resolved independently; a missing, unparsable or scenario-invalid field becomes None
with its reason in ``field_errors`` and scores as incorrect. Nothing is dropped.
"""

from __future__ import annotations

import json
import re

from socialbench.moca.eval.prompts import ANSWER_KEYS, CODE_FENCE
from socialbench.moca.spec.normalize import normalize

# One fence around everything: an opening ``` with an optional info word (json) on its own line, the
# body, and a closing ``` on its own line. A fence inside the body (a second block) does not match.
_FENCE = re.compile(r"\A```[A-Za-z0-9_+-]*[ \t]*\r?\n(?P<body>(?:(?!```).)*?)\r?\n?```\Z", re.S)


def unfence(text: str) -> str | None:
    """The body of one Markdown code fence that encloses all of ``text`` (stripped), else None."""
    m = _FENCE.match(text.strip())
    return m.group("body") if m else None


def parse_answer(
    raw: str | None,
    scenario_mechanisms: list[str],
    scenario_labels: list[str],
    maps: dict[str, dict[str, str]],
    code_fence: str = "strict",
) -> tuple[dict[str, str | None], dict[str, str], str | None]:
    """Return (fields, field_errors, record_error).

    ``fields`` maps mechanism/label to the canonical taxonomy name and subject/target to the
    option text behind the answered slot id (None where invalid)."""
    if code_fence not in CODE_FENCE:
        raise ValueError(f"code_fence must be one of {CODE_FENCE}, got {code_fence!r}")
    fields: dict[str, str | None] = {k: None for k in ANSWER_KEYS}
    if raw is None:
        return fields, {k: "no response" for k in ANSWER_KEYS}, "no response"
    text = raw.strip()
    if code_fence == "tolerate":
        body = unfence(text)
        text = body.strip() if body is not None else text
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = (
            " (a code fence around the answer; params moca.answer.code_fence: tolerate accepts one)"
            if (code_fence == "strict" and unfence(text) is not None)
            else ""
        )
        return fields, {k: "unparsable" for k in ANSWER_KEYS}, f"unparsable: {exc.msg} at char {exc.pos}{hint}"
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
