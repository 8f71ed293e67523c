"""The request cache's contract: tables, keys, claims of calls in flight, and :class:`CacheStore`, which the
SQLite and PostgreSQL stores implement. Nothing here opens a database: the schema is declared once in a neutral
dialect (:func:`schema_statements`), and a damaged or foreign table is an error naming store, record and field."""

from __future__ import annotations

import abc
import os
import socket
from collections.abc import Callable, Collection, Sequence
from typing import Any

from socialbench.core.backend import Request, Response
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.hashing import canonical_json, sha256_bytes
from socialbench.core.processes import proc_stat

#: The tables: (column, neutral type, constraint); each dialect names the types.
CALLS_FIRST = (
    ("key", "text", "PRIMARY KEY"),
    ("backend", "text", "NOT NULL"),
    ("model", "text", "NOT NULL"),
    ("request_id", "text", "NOT NULL"),
    ("key_parts", "text", "NOT NULL"),
    ("text", "text", ""),
    ("input_tokens", "int", "NOT NULL DEFAULT 0"),
    ("output_tokens", "int", "NOT NULL DEFAULT 0"),
    ("latency_s", "real", "NOT NULL DEFAULT 0"),
    ("created_at", "real", "NOT NULL"),
)
#: Columns added later: an older SQLite file gains them in place (old entries' ``finish_reason``: None).
CALLS_ADDED = (
    ("hit_count", "int", "NOT NULL DEFAULT 0"),
    ("last_hit_at", "real", ""),
    ("finish_reason", "text", ""),
)
CLAIMS = (
    ("key", "text", "PRIMARY KEY"),
    ("owner", "text", "NOT NULL"),
    ("host", "text", "NOT NULL"),
    ("pid", "int", "NOT NULL"),
    ("pid_started", "text", ""),
    ("claimed_at", "real", "NOT NULL"),
)
#: The columns a stored call writes, in the order of the stores' ``put_call`` values.
CALL_COLUMNS = ", ".join([name for name, _, _ in CALLS_FIRST] + ["finish_reason"])
#: Columns every request cache has had (a read-only one is read without the added ones).
REQUIRED_COLUMNS = frozenset(name for name, _, _ in CALLS_FIRST)


def column_sql(column: tuple[str, str, str], types: dict[str, str]) -> str:
    name, kind, constraint = column
    return " ".join(p for p in (name, types[kind], constraint) if p)


def schema_statements(types: dict[str, str]) -> list[str]:
    """The statements that create the cache's tables where missing, in a dialect's column ``types``."""

    def table(name: str, columns: Sequence[tuple[str, str, str]]) -> str:
        body = ",\n".join(f"    {column_sql(c, types)}" for c in columns)
        return f"CREATE TABLE IF NOT EXISTS {name} (\n{body}\n)"

    return [
        table("calls", (*CALLS_FIRST, *CALLS_ADDED)),
        "CREATE INDEX IF NOT EXISTS calls_request ON calls(model, request_id)",
        table("claims", CLAIMS),
    ]


def check_calls_columns(store: str, have: Collection[str], database: str = "a database") -> None:
    """DataError naming ``store`` when its ``calls`` table is not a request cache's (never written to)."""
    missing = REQUIRED_COLUMNS - set(have)
    if missing:
        what = "no 'calls' table" if not have else f"its 'calls' table lacks {', '.join(sorted(missing))}"
        raise DataError(store, f"is {database} but not a request cache ({what}); nothing was changed")


#: A claim made on another host is taken over when older than this (its process cannot be asked).
CLAIM_TTL_S = 3600.0
#: How often a process waiting for another's calls looks again.
CLAIM_POLL_S = 0.2


class CacheFull(SocialbenchError):
    """No space left for the request cache; what was stored stays usable."""

    def __init__(self, path: Any, detail: str):
        super().__init__(
            f"{path}: the request cache cannot grow ({detail}): no space left on the device; every call"
            " finished before this one is stored, so a rerun after freeing space continues from them"
        )


class ReplayMiss(BaseException):  # noqa: N818 (a signal, not an error)
    """A replay from the cache (``socialbench plan``) reached what the cache lacks; a BaseException so a
    method's catch-all for provider failures does not make it the instance's error."""


# ---- claimants: is the process that claimed a call still making it? ----------------------------------
def claimant_alive(
    host: str, pid: int, started: str | None, claimed_at: float, now: float, ttl_s: float = CLAIM_TTL_S
) -> bool:
    """Whether a claimant may still be making its calls (this very process's claims are stale)."""
    if host != socket.gethostname():
        return now - claimed_at < ttl_s
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's
    fields = proc_stat(pid)
    if fields and fields[0] in ("Z", "X"):
        return False  # killed, not yet reaped by its parent
    return started is None or fields is None or len(fields) <= 19 or fields[19] == started


# ---- keys ------------------------------------------------------------------------------------------
def key_parts(identity: dict[str, Any], request: Request) -> dict[str, Any]:
    """The named parts of a cache key, kept with each entry so a miss can be explained."""
    parts = {"identity": identity}
    parts.update(request.key())
    return parts


def cache_key(identity: dict[str, Any], request: Request) -> str:
    return sha256_bytes(canonical_json(key_parts(identity, request)).encode("utf-8"))


def record_name(key: Any) -> str:
    """A stored entry as a message names it: its key's first 12 characters."""
    return f"key {key[:12]}…" if isinstance(key, str) and len(key) > 12 else f"key {key!r}"


def sql_kind(value: Any) -> str:
    """A stored value's type in SQL's words."""
    names = {bytes: "a BLOB", str: "text", int: "an integer", float: "a number", type(None): "NULL"}
    return names.get(type(value), type(value).__name__)


def damaged(store: str, problem: str, record: str | None = None, field: str | None = None) -> DataError:
    """A stored value the cache never writes: a DataError naming store, entry and field."""
    return DataError(
        store,
        f"{problem}; the cache is damaged (move it aside: a new one repeats the calls)",
        record=record,
        field=field,
    )


def damaged_entry(store: str, key: Any, field: str, problem: str) -> DataError:
    return damaged(store, problem, record_name(key), field)


def checked_response(store: str, key: str, row: Sequence[Any]) -> Response:
    """``row`` as a cached Response; a wrong type is a DataError naming store, entry and field."""
    fields = (
        ("text", (str,), True, "text"),
        ("input_tokens", (int,), False, "an integer"),
        ("output_tokens", (int,), False, "an integer"),
        ("latency_s", (int, float), False, "a number"),
        ("finish_reason", (str,), True, "text"),
    )
    for (name, kinds, nullable, expected), value in zip(fields, row):
        wrong = value is None if not nullable else False
        wrong = wrong or (value is not None and (isinstance(value, bool) or not isinstance(value, kinds)))
        if wrong:
            raise damaged_entry(store, key, name, f"holds {sql_kind(value)} where the request cache keeps {expected}")
    text, inp, out, latency, finish = row
    return Response(
        text=text, input_tokens=inp, output_tokens=out, latency_s=latency, cached=True, finish_reason=finish
    )


# ---- the store contract -----------------------------------------------------------------------------
class CacheStore(abc.ABC):
    """What the runner needs of a request cache; a store missing one of these cannot be instantiated."""

    hits: int
    misses: int

    @abc.abstractmethod
    def get(self, key: str) -> Response | None:
        """The stored answer (``cached`` set), or None on a miss."""

    @abc.abstractmethod
    def put(self, key: str, identity: dict[str, Any], request: Request, response: Response, model: str) -> None:
        """Store a successful call (a failed one only releases its claim)."""

    @abc.abstractmethod
    def put_record(
        self, key: str, parts: dict[str, Any], text: str, *, backend: str, model: str, request_id: str
    ) -> None:
        """Store an answer that is no model call (a retriever's search)."""

    @abc.abstractmethod
    def share_calls(
        self,
        keys: Sequence[str],
        call: Callable[[list[int]], None],
        on_shared: Callable[[int, Response], None],
        poll_s: float = CLAIM_POLL_S,
    ) -> None:
        """Make the calls for ``keys`` once across every process sharing the store."""

    @abc.abstractmethod
    def release(self, keys: Sequence[str]) -> None:
        """Give up this store object's claims on ``keys``."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close every connection the store opened."""
