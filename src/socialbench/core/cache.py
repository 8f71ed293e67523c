"""Content-addressed request cache (sqlite, WAL mode).

The key is sha256 over the backend identity (backend, model id, revision, backend extras), the fully
rendered messages with the content hash of every image, frame, clip or audio file, the structured task
and the decoding parameters. A retriever's searches are stored here too (``core.retrieval``: keyed by
the retriever's identity, the query and k). Each entry keeps the answer with its finish reason, so an answer cut at
max_tokens replayed from the cache is still marked truncated. Each finished call is committed at once,
so a killed run loses only the calls that were in flight. The cache lives outside DVC outs: DVC
deleting a stage's outputs costs no calls.

Calls in flight are shared across processes (two pipelines on one cache): a process claims the keys
it is about to call in the ``claims`` table (:meth:`RequestCache.share_calls`); another process that
needs the same key waits for the answer instead of calling again, and takes the claim over when its
claimant died (same host: the process is gone; another host: the claim is older than
:data:`CLAIM_TTL_S`). A cache that fills up (no space left) stays usable: the call being stored is
lost, every earlier one is kept, and the run stops with :class:`CacheFull`.

Stores: :class:`RequestCache` (SQLite, the default: one file on a local disk) implements the operations
the runner needs (:class:`CacheStore`); ``core.cache_pg.PostgresRequestCache`` keeps the same tables in
PostgreSQL for many nodes (SQLite in WAL mode is unsafe on network file systems).
``core.cache_pg.open_request_cache`` picks it when ``SOCIALBENCH_CACHE_URL`` holds a ``postgresql://`` URL (from the
environment only: the URL may hold a password, so it is never a param).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from socialbench.core.backend import Request, Response
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.hashing import canonical_json, sha256_bytes
from socialbench.core.paths import refuse_special
from socialbench.core.processes import proc_stat as _proc_stat
from socialbench.core.processes import process_started as _process_started

log = logging.getLogger("socialbench.core.cache")

#: The tables of every store, one definition: (column, type, constraint) with a neutral type (``text``,
#: ``int``, ``real``) that each dialect names (:data:`SQLITE_TYPES`, ``core.cache_pg.POSTGRES_TYPES``).
_CALLS_FIRST = (
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
#: Columns added after the first schema: a new store has them, an older SQLite file gains them in place
#: (:func:`_migrate`; entries stored before ``finish_reason`` read back as None: the backend did not say).
_CALLS_ADDED = (
    ("hit_count", "int", "NOT NULL DEFAULT 0"),
    ("last_hit_at", "real", ""),
    ("finish_reason", "text", ""),
)
_CLAIMS = (
    ("key", "text", "PRIMARY KEY"),
    ("owner", "text", "NOT NULL"),
    ("host", "text", "NOT NULL"),
    ("pid", "int", "NOT NULL"),
    ("pid_started", "text", ""),
    ("claimed_at", "real", "NOT NULL"),
)
SQLITE_TYPES = {"text": "TEXT", "int": "INTEGER", "real": "REAL"}


def _column(column: tuple[str, str, str], types: dict[str, str]) -> str:
    name, kind, constraint = column
    return " ".join(p for p in (name, types[kind], constraint) if p)


def schema_statements(types: dict[str, str]) -> list[str]:
    """The statements that create the cache's tables where missing, in a dialect's column ``types``."""

    def table(name: str, columns: Sequence[tuple[str, str, str]]) -> str:
        body = ",\n".join(f"    {_column(c, types)}" for c in columns)
        return f"CREATE TABLE IF NOT EXISTS {name} (\n{body}\n)"

    return [
        table("calls", (*_CALLS_FIRST, *_CALLS_ADDED)),
        "CREATE INDEX IF NOT EXISTS calls_request ON calls(model, request_id)",
        table("claims", _CLAIMS),
    ]


#: A claim made on another host is taken over when older than this (its process cannot be asked).
CLAIM_TTL_S = 3600.0
#: How often a process waiting for another's calls looks again.
CLAIM_POLL_S = 0.2


class CacheFull(SocialbenchError):
    """No space left for the request cache: what was stored stays, the cache stays usable."""

    def __init__(self, path: str | Path, detail: str):
        super().__init__(
            f"{path}: the request cache cannot grow ({detail}): no space left on the device; every call"
            " finished before this one is stored, so a rerun after freeing space continues from them"
        )


class ReplayMiss(BaseException):  # noqa: N818 (a signal, not an error)
    """A replay from the cache (``socialbench plan``: the cache read, no call made) reached something
    the cache does not hold. A BaseException, like KeyboardInterrupt: a method's catch-all for a
    provider's own failures must not turn it into the instance's error."""


def _is_full(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("full" in text or "disk i/o" in text)


def _alive(host: str, pid: int, started: str | None, claimed_at: float, now: float, ttl_s: float = CLAIM_TTL_S) -> bool:
    """Whether a claimant may still be making its calls. Claims are shared across processes: one of
    this process (an earlier run in it that stopped) is stale."""
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
    fields = _proc_stat(pid)
    if fields and fields[0] in ("Z", "X"):
        return False  # killed, not yet reaped by its parent
    return started is None or fields is None or len(fields) <= 19 or fields[19] == started


def key_parts(identity: dict[str, Any], request: Request) -> dict[str, Any]:
    """The named parts of a cache key; kept with each entry so a miss can be explained."""
    parts = {"identity": identity}
    parts.update(request.key())
    return parts


def cache_key(identity: dict[str, Any], request: Request) -> str:
    return sha256_bytes(canonical_json(key_parts(identity, request)).encode("utf-8"))


_SQLITE_MAGIC = b"SQLite format 3\x00"
# Columns every request cache has had since the first schema (the added ones: _migrate adds them; a cache
# opened read-only is read without them).
_REQUIRED_COLUMNS = {name for name, _, _ in _CALLS_FIRST}


class CacheStore:
    """What the runner needs of a request cache: read an answer, store one (or a non-call record),
    make the missing calls once across every process sharing the store, release claims, close."""

    hits: int
    misses: int

    def get(self, key: str) -> Response | None:
        raise NotImplementedError

    def put(self, key: str, identity: dict[str, Any], request: Request, response: Response, model: str) -> None:
        raise NotImplementedError

    def put_record(
        self, key: str, parts: dict[str, Any], text: str, *, backend: str, model: str, request_id: str
    ) -> None:
        raise NotImplementedError

    def share_calls(
        self,
        keys: Sequence[str],
        call: Callable[[list[int]], None],
        on_shared: Callable[[int, Response], None],
        poll_s: float = CLAIM_POLL_S,
    ) -> None:
        raise NotImplementedError

    def release(self, keys: Sequence[str]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class RequestCache(CacheStore):
    """Thread-safe sqlite cache; one connection per thread, WAL so readers never block writers.

    ``RequestCache.open_readonly(path)`` only reads (``socialbench cache``): it creates, converts and
    locks nothing, and refuses a path that is not a request cache."""

    #: Another host's claim is taken over when older than this (its process cannot be asked).
    claim_ttl_s = CLAIM_TTL_S

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self._init_state(Path(path), readonly)
        if readonly:
            self._check_readonly()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Processes opening a new cache at once (parallel Snakemake jobs) race to switch it to WAL and
        # create its tables, and SQLite answers the loser "database is locked" at once, without its
        # busy timeout. A file lock beside the database serialises the set-up; later use needs none.
        with FileLock(f"{self.path}.lock", timeout=300):
            try:
                conn = self._conn()
                for statement in schema_statements(SQLITE_TYPES):
                    conn.execute(statement)
                _migrate(conn)
            except sqlite3.DatabaseError as exc:
                self.close()
                if _is_full(exc):
                    raise CacheFull(self.path, str(exc)) from exc
                raise DataError(
                    str(self.path),
                    f"the request cache cannot be opened ({exc}); it only saves model calls,"
                    " so move it aside (the next run starts a new one and repeats the calls)",
                ) from exc

    def _init_state(self, path: Any, readonly: bool) -> None:
        """What every store starts with (``path``: what messages name the store by)."""
        self.path = path
        self.readonly = readonly
        self._local = threading.local()
        self.hits = 0
        self.misses = 0
        self._columns: set[str] | None = None  # known only when opened read-only (else migrated)
        self._token = secrets.token_hex(6)  # this cache object's part of its claims' owner

    @classmethod
    def open_readonly(cls, path: str | Path) -> RequestCache:
        """An existing request cache, opened for reading only; DataError naming the path when it
        is missing, a folder, empty, not SQLite, or an SQLite file without the cache's table."""
        return cls(path, readonly=True)

    def _check_readonly(self) -> None:
        p = self.path
        if not p.exists():
            raise DataError(str(p), "no such file: no request cache here (a run creates it with its first model call)")
        if p.is_dir():
            raise DataError(str(p), "is a folder, not a request cache file")
        refuse_special(p, "request cache file")
        with open(p, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
        if not head:
            raise DataError(str(p), "is empty, not a request cache; nothing was changed")
        if head != _SQLITE_MAGIC:
            raise DataError(str(p), "is not a request cache (not an SQLite database); nothing was changed")
        try:
            conn = self._conn()
            have = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
        except sqlite3.DatabaseError as exc:
            self.close()
            raise DataError(str(p), f"the request cache cannot be read ({exc}); nothing was changed") from exc
        missing = _REQUIRED_COLUMNS - have
        if missing:
            self.close()
            what = "no 'calls' table" if not have else f"its 'calls' table lacks {', '.join(sorted(missing))}"
            raise DataError(str(p), f"is an SQLite database but not a request cache ({what}); nothing was changed")
        self._columns = have

    def _readonly_conn(self) -> sqlite3.Connection:
        # A read-only connection to a WAL database needs its -shm file: when a writer has the cache
        # open (-wal and -shm present) it shares them and sees every committed call. With no writer
        # there are none, and a read-only connection would create both and leave them behind, so the
        # file is opened as immutable (all committed data is then in the main file).
        wal, shm = Path(f"{self.path}-wal"), Path(f"{self.path}-shm")
        mode = "mode=ro" if wal.exists() and shm.exists() else "mode=ro&immutable=1"
        conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?{mode}", uri=True, timeout=60, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=60000")
        return conn

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None and self.readonly:
            conn = self._local.conn = self._readonly_conn()
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            self._local.conn = conn
        return conn

    def _has(self, column: str) -> bool:
        # Opened for writing, the cache was migrated: it has every column.
        return self._columns is None or column in self._columns

    def get(self, key: str) -> Response | None:
        """The stored response (``cached`` set) with its token counts, latency and finish reason
        (None for an entry stored before finish reasons were kept), or None on a miss."""
        finish = "finish_reason" if self._has("finish_reason") else "NULL"
        row = (
            self._conn()
            .execute(f"SELECT text, input_tokens, output_tokens, latency_s, {finish} FROM calls WHERE key = ?", (key,))
            .fetchone()
        )
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        response = Response(
            text=row[0], input_tokens=row[1], output_tokens=row[2], latency_s=row[3], cached=True, finish_reason=row[4]
        )
        if not self.readonly:
            # How often each entry saved a call (shown by `socialbench cache stats`).
            try:
                self._conn().execute(
                    "UPDATE calls SET hit_count = hit_count + 1, last_hit_at = ? WHERE key = ?", (time.time(), key)
                )
            except sqlite3.OperationalError as exc:
                if not _is_full(exc):
                    raise  # a full disk costs only the count: the answer is there
        return response

    def put(self, key: str, identity: dict[str, Any], request: Request, response: Response, model: str) -> None:
        """Store a successful call, with its finish reason (a truncated answer stays marked
        truncated when replayed). Failed calls are not cached, so a rerun tries them again. This
        process's claim on the key is released either way. No space left is :class:`CacheFull`
        (nothing of this call is stored; every earlier call is)."""
        if response.error is not None:
            self.release([key])
            return
        if self.readonly:
            raise RuntimeError(f"{self.path}: the request cache was opened read-only")
        with self._write() as conn:
            self._insert(conn, key, identity, request, response, model)
            conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self._owner()))

    def put_record(
        self, key: str, parts: dict[str, Any], text: str, *, backend: str, model: str, request_id: str
    ) -> None:
        """Store an answer that is no model call (a retriever's search, ``core.retrieval``) under
        ``key``, with the named ``parts`` of its key; read back with :meth:`get`."""
        if self.readonly:
            raise RuntimeError(f"{self.path}: the request cache was opened read-only")
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO calls(key, backend, model, request_id, key_parts, text, input_tokens,"
                " output_tokens, latency_s, created_at, finish_reason) VALUES (?,?,?,?,?,?,0,0,0,?,NULL)",
                (key, backend, model, request_id, canonical_json(parts), text, time.time()),
            )

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (taken at once, so concurrent writers queue); a full disk is a
        CacheFull naming the cache, and the cache stays as it was."""
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if _is_full(exc):
                raise CacheFull(self.path, str(exc)) from exc
            raise

    def _insert(
        self,
        conn: sqlite3.Connection,
        key: str,
        identity: dict[str, Any],
        request: Request,
        response: Response,
        model: str,
    ) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO calls(key, backend, model, request_id, key_parts, text, input_tokens,"
            " output_tokens, latency_s, created_at, finish_reason) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                key,
                str(identity.get("backend")),
                model,
                request.request_id,
                canonical_json(key_parts(identity, request)),
                response.text,
                response.input_tokens,
                response.output_tokens,
                response.latency_s,
                time.time(),
                response.finish_reason,
            ),
        )

    # ---- calls in flight, shared across processes ---------------------------------------------------
    def _owner(self) -> str:
        return f"{socket.gethostname()}:{os.getpid()}:{self._token}"

    def _claim(self, keys: Sequence[str]) -> tuple[set[str], set[str], dict[str, str]]:
        """In one transaction: (keys now claimed by this cache object, keys already stored, keys a live
        claimant holds -> its owner). A claim of a dead claimant is taken over."""
        me, host, pid = self._owner(), socket.gethostname(), os.getpid()
        mine: set[str] = set()
        stored: set[str] = set()
        theirs: dict[str, str] = {}
        now = time.time()
        with self._write() as conn:
            for key in dict.fromkeys(keys):
                if conn.execute("SELECT 1 FROM calls WHERE key = ?", (key,)).fetchone() is not None:
                    stored.add(key)
                    continue
                row = conn.execute(
                    "SELECT owner, host, pid, pid_started, claimed_at FROM claims WHERE key = ?", (key,)
                ).fetchone()
                if row is not None and row[0] != me and _alive(row[1], row[2], row[3], row[4], now, self.claim_ttl_s):
                    theirs[key] = row[0]
                    continue
                if row is not None and row[0] != me:
                    log.info("request cache: taking over call %s from %s, which is gone", key[:12], row[0])
                conn.execute(
                    "INSERT OR REPLACE INTO claims(key, owner, host, pid, pid_started, claimed_at)"
                    " VALUES (?,?,?,?,?,?)",
                    (key, me, host, pid, _process_started(pid), now),
                )
                mine.add(key)
        return mine, stored, theirs

    def release(self, keys: Sequence[str]) -> None:
        """Give up this cache object's claims on ``keys`` (a call that failed, or was never made)."""
        if self.readonly or not keys:
            return
        owner = self._owner()
        try:
            self._conn().executemany("DELETE FROM claims WHERE key = ? AND owner = ?", [(k, owner) for k in keys])
        except sqlite3.OperationalError as exc:
            if not _is_full(exc):
                raise
            # A full disk can refuse even a delete (WAL): the claim then dies with this process.

    def share_calls(
        self,
        keys: Sequence[str],
        call: Callable[[list[int]], None],
        on_shared: Callable[[int, Response], None],
        poll_s: float = CLAIM_POLL_S,
    ) -> None:
        """Make the calls for ``keys`` (cache misses) once across every process that uses this cache.

        ``call(indices)`` makes the calls this process claimed (indices into ``keys``); each answer
        must be stored with :meth:`put`, which releases its claim. Keys another live process has
        claimed are waited for: ``on_shared(index, response)`` gets each answer as that process
        stores it. A claim whose process died (or that was released after a failed call) is taken
        over and called here. Claims still held when this returns or raises are released."""
        pending = list(range(len(keys)))
        waited_on: set[str] = set()
        try:
            while pending:
                mine, stored, theirs = self._claim([keys[i] for i in pending])
                for i in pending:
                    if keys[i] in stored:
                        hit = self.get(keys[i])
                        if hit is not None:
                            on_shared(i, hit)
                ours = [i for i in pending if keys[i] in mine]
                if ours:
                    try:
                        call(ours)
                    finally:
                        self.release(sorted(mine))  # those put() stored are gone already
                new = set(theirs.values()) - waited_on
                if new:
                    log.info(
                        "request cache: waiting for %d call(s) that another run is making (%s)",
                        len(theirs),
                        ", ".join(sorted(new)),
                    )
                    waited_on |= new
                pending = [i for i in pending if keys[i] in theirs]
                if pending and not ours:
                    time.sleep(poll_s)
        finally:
            self.release([keys[i] for i in pending])

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ---- inspection (``socialbench cache``) --------------------------------------------------------
    def __contains__(self, key: str) -> bool:
        return self._conn().execute("SELECT 1 FROM calls WHERE key = ?", (key,)).fetchone() is not None

    def stats(self) -> dict[str, Any]:
        """Entries, tokens, latency and hits served, in total and per model."""
        # A cache written before hits were counted (read-only: not migrated) has served none we know of.
        hits = "SUM(hit_count)" if self._has("hit_count") else "0"
        rows = (
            self._conn()
            .execute(
                "SELECT model, backend, COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(latency_s),"
                f" {hits}, MIN(created_at), MAX(created_at) FROM calls GROUP BY model, backend ORDER BY model"
            )
            .fetchall()
        )
        models = [
            {
                "model": r[0],
                "backend": r[1],
                "entries": r[2],
                "input_tokens": r[3] or 0,
                "output_tokens": r[4] or 0,
                "latency_s": round(r[5] or 0.0, 3),
                "hits_served": r[6] or 0,
                "first_at": r[7],
                "last_at": r[8],
            }
            for r in rows
        ]
        return {
            "path": str(self.path),
            "size_bytes": self._size_bytes(),
            "entries": sum(m["entries"] for m in models),
            "hits_served": sum(m["hits_served"] for m in models),
            "models": models,
        }

    def _size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def entries_for(self, model: str | None, request_id: str) -> list[dict[str, Any]]:
        """Stored entries of one request id (under one model, or any), newest first."""
        sql = "SELECT key, model, key_parts, created_at FROM calls WHERE request_id = ?"
        args: list[Any] = [request_id]
        if model is not None:
            sql += " AND model = ?"
            args.append(model)
        rows = self._conn().execute(sql + " ORDER BY created_at DESC", args).fetchall()
        return [{"key": r[0], "model": r[1], "key_parts": json.loads(r[2]), "created_at": r[3]} for r in rows]

    def recomputed(self, model: str | None = None, limit: int = 20) -> list[tuple[str, str]]:
        """(model, request_id) pairs stored under more than one key: calls that were made again
        because some part of the key changed; most recent first."""
        sql = "SELECT model, request_id, MAX(created_at) AS t FROM calls"
        args: list[Any] = []
        if model is not None:
            sql += " WHERE model = ?"
            args.append(model)
        sql += " GROUP BY model, request_id HAVING COUNT(*) > 1 ORDER BY t DESC LIMIT ?"
        args.append(int(limit))
        return [(r[0], r[1]) for r in self._conn().execute(sql, args).fetchall()]

    def explain_miss(self, identity: dict[str, Any], request: Request, model: str) -> MissExplanation:
        """Why ``request`` is (or is not) a miss: the parts of its key that differ from the nearest
        stored entry with the same model and request id."""
        if cache_key(identity, request) in self:
            return MissExplanation(request.request_id, model, hit=True)
        same = self.entries_for(model, request.request_id)
        if not same:
            others = sorted({e["model"] for e in self.entries_for(None, request.request_id)})
            return MissExplanation(request.request_id, model, hit=False, other_models=others)
        # Compared as stored: JSON (tuples become lists).
        parts = json.loads(canonical_json(key_parts(identity, request)))
        return nearest_explanation(request.request_id, model, parts, same)

    def explain_stored(self, model: str, request_id: str) -> MissExplanation | None:
        """Why the newest stored entry of a request was a miss: its changes against the nearest older
        entry. None when there is only one entry (nothing was recomputed)."""
        entries = self.entries_for(model, request_id)
        if len(entries) < 2:
            return None
        return nearest_explanation(request_id, model, entries[0]["key_parts"], entries[1:])


def _migrate(conn: sqlite3.Connection) -> None:
    """Columns added after the first schema; old cache files gain them in place."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
    for column in _CALLS_ADDED:
        if column[0] not in have:
            conn.execute(f"ALTER TABLE calls ADD COLUMN {_column(column, SQLITE_TYPES)}")


# ---- explaining misses ------------------------------------------------------------------------
PART_NAMES = {
    "identity": "model identity (backend, model id, revision, backend settings)",
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
        out: list[Change] = []
        for k in sorted(set(old) | set(new)):
            sub = f"{path}.{k}" if path else str(k)
            if k not in old:
                out.append(Change(sub, _MISSING, new[k]))
            elif k not in new:
                out.append(Change(sub, old[k], _MISSING))
            else:
                out.extend(diff_parts(old[k], new[k], sub))
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for i in range(max(len(old), len(new))):
            sub = f"{path}[{i}]"
            if i >= len(old):
                out.append(Change(sub, _MISSING, new[i]))
            elif i >= len(new):
                out.append(Change(sub, old[i], _MISSING))
            else:
                out.extend(diff_parts(old[i], new[i], sub))
        return out
    return [] if old == new else [Change(path, old, new)]


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
    """Compare ``parts`` with each candidate entry (newest first) and keep the one with the fewest
    differences (the newest on ties)."""
    best: tuple[int, list[Change], str] | None = None
    for entry in candidates:
        changes = diff_parts(entry["key_parts"], parts)
        if best is None or len(changes) < best[0]:
            best = (len(changes), changes, entry["key"])
    assert best is not None
    return MissExplanation(request_id, model, hit=False, changes=best[1], compared_key=best[2])
