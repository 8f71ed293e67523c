"""Parsing a model's answer to a MeetingToM multiple-choice question (pure, no I/O).

The invalid-output rule (docs/decisions.md, "MeetingToM pipeline"): the response, stripped of
surrounding whitespace, must be one JSON object with a key ``answer`` whose value is a string that,
stripped and upper-cased, is one of the instance's option letters. Anything else is invalid:
no response, prose or a code fence around the object, a JSON value that is not an object, no
``answer``, a non-string, a letter that is no option, the option's text instead of its letter.
An invalid answer is scored incorrect and counted in ``invalid_rate``. Other keys beside
``answer`` are noted, not held against it.
"""

from __future__ import annotations

import json
from typing import Sequence


def parse_choice(raw: str | None, labels: Sequence[str]) -> tuple[str | None, str | None, str | None]:
    """``(label, error, note)``: the chosen option letter or None with the reason; ``note`` names
    keys other than ``answer``."""
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
    value = obj["answer"]
    if not isinstance(value, str):
        return None, f"answer is not a string: {value!r}", note
    label = value.strip().upper()
    if label not in labels:
        return None, f"answer {value!r} is not an option letter ({', '.join(labels)})", note
    return label, None, note
