"""Parsing a model's raw answer into the four MoCA fields (pure): one strict JSON object (D.1), each
field resolved on its own (section 3.3 scores per field), under params ``moca.answer``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from socialbench.moca.eval.prompts import ANSWER_KEYS, CODE_FENCE, EXTRA_KEYS
from socialbench.moca.schema.normalize import normalize

# One fence around everything (an optional info word such as json); a second block inside does not match.
_FENCE = re.compile(r"\A```[A-Za-z0-9_+-]*[ \t]*\r?\n(?P<body>(?:(?!```).)*?)\r?\n?```\Z", re.S)


def unfence(text: str) -> str | None:
    """The body of one Markdown code fence that encloses all of ``text`` (stripped), else None."""
    m = _FENCE.match(text.strip())
    return m.group("body") if m else None


def fence_hint(text: str, code_fence: str) -> str:
    """What an unparsable answer's error adds when a code fence is what kept it from parsing."""
    if code_fence == "strict" and unfence(text) is not None:
        return " (a code fence around the answer; params moca.answer.code_fence: tolerate accepts one)"
    return ""


@dataclass(frozen=True)
class ParsedAnswer:
    """An answer read field by field; ``record_error``: unusable as a whole (a retry may ask again)."""

    fields: dict[str, str | None]
    field_errors: dict[str, str]
    record_error: str | None
    fence_removed: bool = False
    extra_keys: tuple[str, ...] = ()
    #: The four keys' values as answered (before resolution; only the keys present).
    values: dict[str, object] = field(default_factory=dict)
    #: The ``unscored`` keys present (CoDAR's decoder substeps): kept, never scored.
    unscored: dict[str, object] = field(default_factory=dict)


def read_answer(
    raw: str | None,
    scenario_mechanisms: list[str],
    scenario_labels: list[str],
    maps: dict[str, dict[str, str]],
    code_fence: str = "strict",
    extra_keys: str = "ignore",
    unscored: tuple[str, ...] = (),
) -> ParsedAnswer:
    """The four fields, each resolved on its own (None where invalid); ``unscored`` keys kept, never scored."""
    if code_fence not in CODE_FENCE:
        raise ValueError(f"code_fence must be one of {CODE_FENCE}, got {code_fence!r}")
    if extra_keys not in EXTRA_KEYS:
        raise ValueError(f"extra_keys must be one of {EXTRA_KEYS}, got {extra_keys!r}")
    fields: dict[str, str | None] = {k: None for k in ANSWER_KEYS}
    if raw is None:
        return ParsedAnswer(fields, dict.fromkeys(ANSWER_KEYS, "no response"), "no response")
    text = raw.strip()
    fence_removed = False
    if code_fence == "tolerate":
        body = unfence(text)
        if body is not None:
            text, fence_removed = body.strip(), True
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"unparsable: {exc.msg} at char {exc.pos}{fence_hint(text, code_fence)}"
        return ParsedAnswer(fields, dict.fromkeys(ANSWER_KEYS, "unparsable"), problem)
    if not isinstance(obj, dict):
        problem = f"unparsable: JSON {type(obj).__name__}, not an object"
        return ParsedAnswer(fields, dict.fromkeys(ANSWER_KEYS, "unparsable"), problem)
    extra = tuple(sorted(set(obj) - set(ANSWER_KEYS) - set(unscored)))
    values = {k: obj[k] for k in ANSWER_KEYS if k in obj}
    kept = {k: obj[k] for k in unscored if k in obj}
    if extra and extra_keys == "invalid":
        problem = f"unexpected keys {list(extra)} (params moca.answer.extra_keys: invalid)"
        return ParsedAnswer(fields, dict.fromkeys(ANSWER_KEYS, problem), problem, fence_removed, extra, values, kept)
    errors: dict[str, str] = {}
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
    return ParsedAnswer(fields, errors, None, fence_removed, extra, values, kept)
