"""Content hashes used for cache keys and provenance."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal objects give equal bytes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_json(obj: Any) -> str:
    return sha256_bytes(canonical_json(obj).encode("utf-8"))


def sha256_files(paths: Iterable[str | Path]) -> str:
    """One hash over several files, by their names (relative order as given) and contents."""
    h = hashlib.sha256()
    for p in paths:
        h.update(str(Path(p).name).encode())
        h.update(b"\0")
        h.update(sha256_file(p).encode())
    return h.hexdigest()
