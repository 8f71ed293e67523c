"""Inspecting the request cache (``socialbench cache``): stored records checked as read, and why a call
was made again (:func:`nearest_explanation`). Pure functions over rows a store read; a record the cache
would not write is a DataError naming store, entry and field."""

from __future__ import annotations

import json
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from socialbench.core.cache_store import damaged, damaged_entry, sql_kind


def checked_entry(store: str, row: Sequence[Any]) -> dict[str, Any]:
    """One stored (key, model, key_parts, created_at) as inspection reads it; wrong types are a DataError."""
    key, model, parts, created = row
    for name, value in (("key", key), ("model", model), ("key_parts", parts)):
        if not isinstance(value, str):
            raise damaged_entry(store, key, name, f"holds {sql_kind(value)} where the request cache keeps text")
    try:
        decoded = json.loads(parts)
    except (ValueError, RecursionError) as exc:
        raise damaged_entry(store, key, "key_parts", f"is not JSON ({exc})") from exc
    if not isinstance(decoded, dict):
        raise damaged_entry(store, key, "key_parts", f"is JSON {type(decoded).__name__}, not an object")
    if isinstance(created, bool) or not isinstance(created, (int, float)):
        raise damaged_entry(store, key, "created_at", f"holds {sql_kind(created)} where the request cache keeps a time")
    return {"key": key, "model": model, "key_parts": decoded, "created_at": created}


def checked_model_row(store: str, row: Sequence[Any]) -> dict[str, Any]:
    """One model's totals as ``cache stats`` shows them; wrong types are a DataError naming the model."""
    model, backend = row[0], row[1]
    for name, value in (("model", model), ("backend", backend)):
        if not isinstance(value, str):
            record = f"model {model!r}" if name == "backend" else None
            raise damaged(store, f"holds {sql_kind(value)} where the request cache keeps text", record, name)
    names = ("entries", "input_tokens", "output_tokens", "latency_s", "hits_served", "first_at", "last_at")
    values = dict(zip(names, row[2:]))
    for name, value in values.items():
        # numbers.Number: PostgreSQL sums BIGINT columns to Decimal
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Number)):
            raise damaged(store, f"its {name} total is {sql_kind(value)}, not a number", f"model {model!r}")
    zeroed = {k: values[k] or 0 for k in ("input_tokens", "output_tokens", "hits_served")}
    return {"model": model, "backend": backend, **values, **zeroed, "latency_s": round(values["latency_s"] or 0.0, 3)}


PART_NAMES = {
    "identity": "model identity (backend, model id, revision, backend settings, a no-model backend's code)",
    "messages": "rendered messages (prompt text or media)",
    "task": "structured task",
    "decoding": "decoding parameters",
}


@dataclass(frozen=True)
class Change:
    path: str  # e.g. "identity.revision", "messages[1].content[0].image_sha256", "decoding.max_tokens"
    old: Any
    new: Any

    @property
    def part(self) -> str:
        return self.path.split(".", 1)[0].split("[", 1)[0]

    def describe(self) -> str:
        kind = next((k for k in ("image", "video", "audio") if self.path.endswith(f"{k}_sha256")), None)
        if kind is not None and self.old is not _MISSING and self.new is not _MISSING:
            what = f"{kind} bytes changed"
        elif self.old is _MISSING:
            what = "added"
        elif self.new is _MISSING:
            what = "removed"
        else:
            what = "changed"
        return f"{self.path}: {what} ({_short(self.old)} -> {_short(self.new)})"


class _Missing:
    def __repr__(self) -> str:
        return "<absent>"


_MISSING = _Missing()


def _short(value: Any, width: int = 60) -> str:
    if value is _MISSING:
        return "<absent>"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value[:12] + "…"  # a content hash
    text = " ".join(str(text).split())
    return json.dumps(text[: width - 1] + "…" if len(text) > width else text, ensure_ascii=False)


def diff_parts(old: Any, new: Any, path: str = "") -> list[Change]:
    """Leaf-level differences between two key_parts documents, with their paths."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(set(old) | set(new))
        subs = [(f"{path}.{k}" if path else str(k), old.get(k, _MISSING), new.get(k, _MISSING)) for k in keys]
    elif isinstance(old, list) and isinstance(new, list):
        pad = [_MISSING] * abs(len(old) - len(new))
        subs = [(f"{path}[{i}]", a, b) for i, (a, b) in enumerate(zip(old + pad, new + pad))]
    else:
        return [] if old == new else [Change(path, old, new)]
    out: list[Change] = []
    for sub, a, b in subs:
        out += [Change(sub, a, b)] if a is _MISSING or b is _MISSING else diff_parts(a, b, sub)
    return out


@dataclass
class MissExplanation:
    request_id: str
    model: str
    hit: bool
    changes: list[Change] = field(default_factory=list)
    compared_key: str | None = None  # the stored entry the request was compared with
    other_models: list[str] = field(default_factory=list)

    @property
    def parts(self) -> list[str]:
        """Top-level key parts that changed: identity, messages, task, decoding."""
        return sorted({c.part for c in self.changes})

    def summary(self) -> str:
        if self.hit:
            return f"{self.model} {self.request_id}: hit (stored under the same key)"
        if self.compared_key is None:
            where = f"; entries exist under model(s) {', '.join(self.other_models)}" if self.other_models else ""
            return f"{self.model} {self.request_id}: miss: no stored call with this request id (new instance){where}"
        lines = [
            f"{self.model} {self.request_id}: miss: changed {', '.join(self.parts)}"
            f" (vs entry {self.compared_key[:12]}…)"
        ]
        lines += [f"  {PART_NAMES.get(c.part, c.part)}: {c.describe()}" for c in self.changes[:20]]
        if len(self.changes) > 20:
            lines.append(f"  … and {len(self.changes) - 20} more")
        return "\n".join(lines)


def nearest_explanation(
    request_id: str, model: str, parts: dict[str, Any], candidates: list[dict[str, Any]]
) -> MissExplanation:
    """The candidate (newest first) with the fewest differences from ``parts``; the newest on ties."""
    diffs = [(diff_parts(entry["key_parts"], parts), entry["key"]) for entry in candidates]
    changes, key = min(diffs, key=lambda d: len(d[0]))  # the first of the fewest: the newest on ties
    return MissExplanation(request_id, model, hit=False, changes=changes, compared_key=key)
