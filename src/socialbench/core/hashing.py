"""Content hashes used for cache keys and provenance."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import tokenize
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialbench.core.paths import refuse_special

_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    refuse_special(path)  # a FIFO would never end
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal objects give equal bytes. Only plain JSON values (a
    path, set or NaN would hash as whatever its string is: a TypeError or ValueError instead)."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_not_json
    )


def _not_json(value: Any) -> Any:
    raise TypeError(
        f"not a plain JSON value: {type(value).__name__} {str(value)[:80]!r} (keys and hashes take"
        " only dicts, lists, strings, numbers, booleans and null)"
    )


def sha256_json(obj: Any) -> str:
    return sha256_bytes(canonical_json(obj).encode("utf-8"))


#: Larger files enter a fingerprint by size and first and last MiB: hashing tens of GB of weights per run costs minutes.
FINGERPRINT_FULL_HASH_MAX = 16 * 1024 * 1024
_SAMPLE = 1024 * 1024


def _large_file_digest(path: Path, size: int) -> str:
    h = hashlib.sha256(f"size:{size}\0".encode())
    refuse_special(path)
    with open(path, "rb") as fh:
        h.update(fh.read(_SAMPLE))
        fh.seek(max(0, size - _SAMPLE))
        h.update(fh.read(_SAMPLE))
    return "sampled:" + h.hexdigest()


def folder_fingerprint(folder: str | Path) -> str:
    """One hash over a model folder's files by path: small ones whole, large ones sampled; no hidden or .md."""
    folder = Path(folder)
    h = hashlib.sha256()
    for f in sorted(folder.rglob("*")):
        rel = f.relative_to(folder)
        if not f.is_file() or f.suffix == ".md" or any(part.startswith(".") for part in rel.parts):
            continue
        size = f.stat().st_size
        digest = sha256_file(f) if size <= FINGERPRINT_FULL_HASH_MAX else _large_file_digest(f, size)
        h.update(f"{rel.as_posix()}\0{digest}\n".encode())
    return "files:" + h.hexdigest()


def module_source(name: str) -> str:
    """Module ``name``'s source as Python reads it (universal newlines: CRLF checkouts hash the same)."""
    spec = importlib.util.find_spec(name)
    get_source = getattr(spec.loader, "get_source", None) if spec is not None else None
    source = get_source(name) if get_source is not None else None
    if source is None:
        raise ValueError(f"module {name}: no source to hash (installed without its .py files?)")
    return source


def code_tokens(source: str) -> str:
    """``source``'s tokens in order, one per line: no comments, blank lines, wrapping, spacing or docstrings."""
    skipped = (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER)
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skipped]
    starts = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    kept: list[str] = []
    i = 0
    while i < len(tokens):
        j = i
        if i == 0 or tokens[i - 1].type in starts:  # a statement starts: is it strings only?
            while j < len(tokens) and tokens[j].type == tokenize.STRING:
                j += 1
            if j > i and j < len(tokens) and tokens[j].type == tokenize.NEWLINE:
                i = j + 1  # a docstring (or a bare string): no code
                continue
        kept.append(f"{tokenize.tok_name[tokens[i].type]} {tokens[i].string}")
        i += 1
    return "\n".join(kept)


def module_sources_sha256(names: Sequence[str]) -> str:
    """One hash over the code of ``names`` (:func:`code_tokens`): comments, docstrings or reformats change no key."""
    return sha256_json([sha256_bytes(code_tokens(module_source(name)).encode("utf-8")) for name in names])
