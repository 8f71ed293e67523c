"""Parsing a model's answer to a MeetingToM multiple-choice question (pure, no I/O).

The invalid-output rule (docs/decisions.md, "MeetingToM pipeline"): the answer must be one JSON
object with a key ``answer`` whose value names options by letter. For a single-choice task the
value is a string that, stripped and upper-cased, is one of the instance's option letters; for a
multi-select task (Task 3.2) it is a non-empty list of distinct option letters (a single letter
string is taken as a list of one). Anything else is invalid: no response, prose or a code fence
around the object, a JSON value that is not an object, no ``answer``, a non-string, a letter that
is no option, the option's text instead of its letter, an empty or repeated selection. An invalid
answer is scored incorrect and counted in ``invalid_rate``. Other keys beside ``answer`` are
noted, not held against it.

Where the answer sits (``marked``): the No Prompt method's whole response must be the object; the
reasoning methods (CoT, ECoT) reason first and end with a line ``Final answer: {...}``: the object
after the last such marker is the answer and the text before it the reasoning (kept in the trace).
A reasoning response without the marker is accepted only when it is the bare object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

MARKER = re.compile(r"^\s*\**\s*final\s+answer\s*\**\s*:\s*\**\s*", re.IGNORECASE | re.MULTILINE)


def normalize(value: Any, labels: Sequence[str], *, multi: bool = False) -> tuple[Any, str | None]:
    """``(answer, problem)``: the ``answer`` value of a response (or of a prediction record) as the
    option label it names (``multi``: the sorted labels), or None with the reason. The scorer applies
    the same rule to prediction files, so parsed and unparsed predictions score alike."""
    if multi:
        chosen = [value] if isinstance(value, str) else value
        if not isinstance(chosen, list) or not all(isinstance(x, str) for x in chosen):
            return None, f"answer is not a list of letters: {value!r}"
        norm = [x.strip().upper() for x in chosen]
        if not norm:
            return None, "answer selects no option (at least one is needed)"
        if len(set(norm)) != len(norm):
            return None, f"answer repeats an option: {value!r}"
        bad = [x for x in norm if x not in labels]
        if bad:
            return None, f"answer {bad[0]!r} is not an option letter ({', '.join(labels)})"
        return sorted(norm), None
    if not isinstance(value, str):
        return None, f"answer is not a string: {value!r}"
    label = value.strip().upper()
    if label not in labels:
        return None, f"answer {value!r} is not an option letter ({', '.join(labels)})"
    return label, None


def parse_choice(raw: str | None, labels: Sequence[str], *, multi: bool = False) -> tuple[Any, str | None, str | None]:
    """``(answer, error, note)``: the chosen letter (``multi``: the sorted letters) or None with
    the reason; ``note`` names keys other than ``answer``."""
    if raw is None:
        return None, "no response", None
    text = raw.strip()
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"unparsable: {exc.msg} at char {exc.pos} (the answer must be a JSON object only)", None
    if not isinstance(obj, dict):
        return None, f"unparsable: JSON {type(obj).__name__}, not an object", None
    extra = sorted(k for k in obj if k != "answer")
    note = f"keys besides answer: {extra}" if extra else None
    if "answer" not in obj:
        return None, "missing answer", note
    answer, error = normalize(obj["answer"], labels, multi=multi)
    return answer, error, note


def split_reasoning(raw: str | None) -> tuple[str | None, str | None]:
    """``(reasoning, final)``: the text before the last ``Final answer:`` marker and what follows
    it; without a marker, ``(None, raw)``."""
    if raw is None:
        return None, None
    marks = list(MARKER.finditer(raw))
    if not marks:
        return None, raw
    last = marks[-1]
    return raw[: last.start()].strip(), raw[last.end() :]


def parse_final(raw: str | None, labels: Sequence[str], *, multi: bool = False, marked: bool = False) -> dict[str, Any]:
    """The answer of a response: ``{"answer", "error", "note", "reasoning"}``. ``marked``: the
    response reasons first and ends with a ``Final answer:`` line (module doc)."""
    reasoning, final = split_reasoning(raw) if marked else (None, raw)
    answer, error, note = parse_choice(final, labels, multi=multi)
    if marked and reasoning is None and error is not None and raw is not None:
        error = f"no 'Final answer:' line, and the response is not the bare answer object ({error})"
    return {"answer": answer, "error": error, "note": note, "reasoning": reasoning}
