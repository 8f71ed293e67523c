"""MeetingToM's instance contract: the fields every instance (and annotation item) has, and the
checked reader every stage uses (data building writes instances, inference and scoring read them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.io import first_bad_line, read_jsonl_lines
from socialbench.meetingtom.schema.questions import ANNOTATED, LABELS, MULTI, TASKS

TASK = "task2_1"
MODALITIES = ("utterances", "video", "both")
#: Fields every instance has (items lack answer and gold), and their types.
REQUIRED = {
    "id": str,
    "task": str,
    "source": str,
    "split": str,
    "modality": str,
    "clip_id": str,
    "question": str,
    "transcript": str,
    "turns": list,
    "options": list,
}
#: Task 2.1's own fields (kept from its first version: the baselines and tables read them).
REQUIRED_2_1 = {"speaker": str, "utterance": str, "you_time": (int, float), "addressee": str}


def _check_options(rec: Mapping[str, Any], path: str, rid: str) -> list[str]:
    labels = []
    needs = ("label", "value", "text") + (("participant",) if rec["task"] in (TASK, "task3_2") else ())
    for k, o in enumerate(rec["options"]):
        if not isinstance(o, dict) or not all(isinstance(o.get(f), str) for f in needs):
            why = f"option {k} must have string {', '.join(needs)}, got {o!r}"
            raise DataError(path, why, record=rid, field="options")
        labels.append(o["label"])
    if len(labels) < 2 or len(set(labels)) != len(labels) or any(x not in LABELS for x in labels):
        why = f"needs at least two options with distinct option labels (1-8), got {labels}"
        raise DataError(path, why, record=rid, field="options")
    return labels


def _check_answer(rec: Mapping[str, Any], path: str, rid: str, labels: Sequence[str]) -> None:
    for name in ("answer", "gold"):
        if name not in rec:
            raise DataError(path, "missing", record=rid, field=name)
    answer, gold = rec["answer"], rec["gold"]
    if rec["task"] in MULTI:
        strings = isinstance(answer, list) and answer and all(isinstance(a, str) for a in answer)
        if not strings or answer != sorted(set(answer) & set(labels)):  # sorted, distinct, all option labels
            why = f"must be a sorted non-empty list of distinct option labels ({', '.join(labels)}), got {answer!r}"
            raise DataError(path, why, record=rid, field="answer")
        values = sorted(o["value"] for o in rec["options"] if o["label"] in answer)
        if gold != values:
            raise DataError(path, f"options {answer} are {values}, not the gold {gold!r}", record=rid, field="answer")
        return
    if not isinstance(answer, str) or answer not in labels:
        raise DataError(path, f"{answer!r} is not an option label ({', '.join(labels)})", record=rid, field="answer")
    value = next(o["value"] for o in rec["options"] if o["label"] == answer)
    if value != gold:
        raise DataError(path, f"option {answer} is {value!r}, not the gold {gold!r}", record=rid, field="answer")
    if rec["task"] == TASK and gold != rec["addressee"]:
        raise DataError(path, f"the gold {gold!r} is not the addressee {rec['addressee']!r}", record=rid, field="gold")


def check_instance(rec: Mapping[str, Any], path: str, line: int | None = None, *, item: bool = False) -> None:
    """A DataError naming file, record and field for the first thing wrong (``item``: no answer yet)."""
    rid = str(rec.get("id")) if isinstance(rec.get("id"), str) else f"line {line}"
    required = dict(REQUIRED, **(REQUIRED_2_1 if rec.get("task") == TASK else {}))
    for name, kind in required.items():
        if name not in rec:
            raise DataError(path, "missing", record=rid, field=name)
        value = rec[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            why = f"must be {getattr(kind, '__name__', 'a number')}, got {value!r}"
            raise DataError(path, why, record=rid, field=name)
    known = ANNOTATED if item else TASKS
    if rec["task"] not in known:
        raise DataError(path, f"unknown task {rec['task']!r} (known: {', '.join(known)})", record=rid, field="task")
    if rec["split"] not in ("test", "dev"):
        raise DataError(path, f"must be test or dev, got {rec['split']!r}", record=rid, field="split")
    if rec["modality"] not in MODALITIES:
        why = f"must be one of {', '.join(MODALITIES)}, got {rec['modality']!r}"
        raise DataError(path, why, record=rid, field="modality")
    labels = _check_options(rec, path, rid)
    if not item:
        _check_answer(rec, path, rid, labels)
    elif "answer" in rec or "gold" in rec:
        why = "an item to annotate has no answer yet (its gold comes from the annotation round-trip)"
        raise DataError(path, why, record=rid, field="answer" if "answer" in rec else "gold")
    if rec["modality"] != "utterances" and rec.get("media") is None and not rec.get("media_error"):
        why = f"modality {rec['modality']} needs media (or a media_error saying why there is none)"
        raise DataError(path, why, record=rid, field="media")


def load_instances(path: str | Path, *, items: bool = False) -> list[dict[str, Any]]:
    """Checked instances (``items``: annotation items) from a JSON-lines file; duplicate ids are an error."""
    lines = read_jsonl_lines(path)
    first_bad_line(path, lines)
    seen: dict[str, int] = {}
    out = []
    for jl in lines:
        rec = jl.record
        check_instance(rec, str(path), jl.line, item=items)
        if rec["id"] in seen:
            raise DataError(str(path), f"duplicate id (also on line {seen[rec['id']]})", record=rec["id"], field="id")
        seen[rec["id"]] = jl.line
        out.append(rec)
    return out
