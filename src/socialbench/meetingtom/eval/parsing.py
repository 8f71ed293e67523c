"""Parsing a model's answer, pure: one rule for every prompting method (docs/decisions/meetingtom-methods.md):
the whole response as one JSON object (fence, trailing period, single quotes tolerated), else the last
``Final answer:`` line read the same way or as bare labels (the text before it is the reasoning), else
invalid. The ``answer`` value (:func:`normalize`, also the scorer's rule): one label, for Task 3.2 a list."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

MARKER = re.compile(r"^\s*\**\s*final\s+answer\s*\**\s*:\s*\**\s*", re.IGNORECASE | re.MULTILINE)
FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?\s*```$", re.DOTALL)
#: Bare labels after a ``Final answer:`` marker: one label, or several separated by commas,
#: semicolons or "and" (each a number or a single letter), with an optional trailing period.
BARE = re.compile(r"^\s*(\w)(?:\s*(?:,|;|\band\b)\s*(\w))*\s*\.?\s*$", re.IGNORECASE)


def _label(x: Any) -> str | None:
    """A label as the answer may give it: a string (stripped, upper-cased) or a whole number."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return str(x)
    return x.strip().upper() if isinstance(x, str) else None


def normalize(value: Any, labels: Sequence[str], *, multi: bool = False) -> tuple[Any, str | None]:
    """``(answer, problem)``: an ``answer`` value as the option label it names (``multi``: the sorted labels),
    or None and why; the scorer applies it to prediction files, so parsed and unparsed ones score alike."""
    shown = ", ".join(labels)
    if multi:
        chosen = value if isinstance(value, list) else [value]
        norm = [_label(x) for x in chosen]
        if any(x is None for x in norm):
            return None, f"answer is not a list of option labels: {value!r}"
        if not norm:
            return None, "answer selects no option (at least one is needed)"
        if len(set(norm)) != len(norm):
            return None, f"answer repeats an option: {value!r}"
        bad = [x for x in norm if x not in labels]
        if bad:
            return None, f"answer {bad[0]!r} is not an option label ({shown})"
        return sorted(norm), None
    label = _label(value)
    if label is None:
        return None, f"answer is not an option label: {value!r}"
    if label not in labels:
        return None, f"answer {value!r} is not an option label ({shown})"
    return label, None


def _object(text: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object ``text`` holds (fence, trailing period, single quotes tolerated), or None and why."""
    t = text.strip()
    fenced = FENCE.match(t)
    if fenced:
        t = fenced.group(1).strip()
    if t.endswith("."):
        t = t[:-1].rstrip()
    try:
        obj = json.loads(t)
    except json.JSONDecodeError as exc:
        try:
            obj = ast.literal_eval(t)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None, f"unparsable: {exc.msg} at char {exc.pos}"
    if not isinstance(obj, dict):
        return None, f"unparsable: JSON {type(obj).__name__}, not an object"
    return obj, ""


def _from_object(obj: dict[str, Any], labels: Sequence[str], multi: bool) -> dict[str, Any]:
    extra = sorted(str(k) for k in obj if k not in ("answer", "reasoning"))
    note = f"keys besides answer: {extra}" if extra else None
    reasoning = obj.get("reasoning") if isinstance(obj.get("reasoning"), str) else None
    if "answer" not in obj:
        return {"answer": None, "error": "missing answer", "note": note, "reasoning": reasoning}
    answer, error = normalize(obj["answer"], labels, multi=multi)
    return {"answer": answer, "error": error, "note": note, "reasoning": reasoning}


def split_reasoning(raw: str | None) -> tuple[str | None, str | None]:
    """``(reasoning, final)`` around the last ``Final answer:`` marker; without one, ``(None, raw)``."""
    if raw is None:
        return None, None
    marks = list(MARKER.finditer(raw))
    if not marks:
        return None, raw
    last = marks[-1]
    return raw[: last.start()].strip(), raw[last.end() :]


def _invalid(error: str, reasoning: str | None = None) -> dict[str, Any]:
    return {"answer": None, "error": error, "note": None, "reasoning": reasoning}


def parse_final(raw: str | None, labels: Sequence[str], *, multi: bool = False) -> dict[str, Any]:
    """The answer of a response: ``{"answer", "error", "note", "reasoning"}`` (the module's one rule)."""
    if raw is None:
        return _invalid("no response")
    obj, why = _object(raw)
    if obj is not None:
        return _from_object(obj, labels, multi)
    reasoning, final = split_reasoning(raw)
    if reasoning is None or final is None:
        return _invalid(f"no answer object and no 'Final answer:' line ({why})")
    obj, why = _object(final)
    if obj is not None:
        out = _from_object(obj, labels, multi)
        return {**out, "reasoning": out["reasoning"] or reasoning}
    bare = BARE.match(final)
    if bare:
        found = [x for x in re.split(r"\s*(?:,|;|\band\b)\s*", final.strip().rstrip(".").strip()) if x]
        answer, error = normalize(found if multi else found[0] if len(found) == 1 else found, labels, multi=multi)
        return {"answer": answer, "error": error, "note": None, "reasoning": reasoning}
    return _invalid(f"the 'Final answer:' line is no answer ({why})", reasoning)
