"""The request cache in one SQLite file (WAL mode): the default store (``core.cache`` describes the
cache; ``core.cache_store`` its contract). One connection per thread; writers take ``BEGIN IMMEDIATE``
so they queue; a full disk is :class:`~socialbench.core.cache_store.CacheFull`; a damaged file (a bad
page, a value of the wrong type) is a DataError naming the file and, where one is at fault, the entry.
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
from pathlib import Path
from typing import Any

from filelock import FileLock

from socialbench.core.backend import Request, Response
from socialbench.core.cache_inspect import MissExplanation, checked_entry, checked_model_row, nearest_explanation
from socialbench.core.cache_store import (
    CALLS_ADDED,
    CLAIM_POLL_S,
    CLAIM_TTL_S,
    CacheFull,
    CacheStore,
    cache_key,
    check_calls_columns,
    checked_response,
    claimant_alive,
    column_sql,
    key_parts,
    record_name,
    schema_statements,
)
from socialbench.core.errors import DataError
from socialbench.core.hashing import canonical_json
from socialbench.core.paths import refuse_special
from socialbench.core.processes import process_started

log = logging.getLogger("socialbench.core.cache")

SQLITE_TYPES = {"text": "TEXT", "int": "INTEGER", "real": "REAL"}
_SQLITE_MAGIC = b"SQLite format 3\x00"


def _is_full(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("full" in text or "disk i/o" in text)


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
        self._refuse_foreign_file()  # before the lock file beside it is made: a refusal changes nothing
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
        self._records_checked = False  # stored values' types, checked once before inspecting
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
        self._refuse_foreign(have)
        self._columns = have

    def _refuse_foreign_file(self) -> None:
        """Before anything is changed (not even the journal mode): a database whose ``calls`` table is
        another program's is never written to."""
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return
        probe = sqlite3.connect(self.path, isolation_level=None)
        try:
            have = {row[1] for row in probe.execute("PRAGMA table_info(calls)")}
        except sqlite3.DatabaseError:
            return  # not SQLite, or damaged: opening it says so, naming the file
        finally:
            probe.close()
        if have:
            self._refuse_foreign(have)

    def _refuse_foreign(self, have: set[str]) -> None:
        """Close and raise when the ``calls`` table (columns ``have``) is not a request cache's."""
        try:
            check_calls_columns(str(self.path), have, self._database_name)
        except DataError:
            self.close()
            raise

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
        with self._reading(key):
            row = (
                self._conn()
                .execute(
                    f"SELECT text, input_tokens, output_tokens, latency_s, {finish} FROM calls WHERE key = ?", (key,)
                )
                .fetchone()
            )
        if row is None:
            self.misses += 1
            return None
        response = checked_response(str(self.path), key, row)
        self.hits += 1
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
        with self._write(key) as conn:
            self._insert(conn, key, identity, request, response, model)
            conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self._owner()))

    def put_record(
        self, key: str, parts: dict[str, Any], text: str, *, backend: str, model: str, request_id: str
    ) -> None:
        """Store an answer that is no model call (a retriever's search, ``core.retrieval``) under
        ``key``, with the named ``parts`` of its key; read back with :meth:`get`."""
        if self.readonly:
            raise RuntimeError(f"{self.path}: the request cache was opened read-only")
        with self._write(key) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO calls(key, backend, model, request_id, key_parts, text, input_tokens,"
                " output_tokens, latency_s, created_at, finish_reason) VALUES (?,?,?,?,?,?,0,0,0,?,NULL)",
                (key, backend, model, request_id, canonical_json(parts), text, time.time()),
            )

    @contextmanager
    def _write(self, key: str | None = None) -> Iterator[sqlite3.Connection]:
        """One write transaction (taken at once, so concurrent writers queue); a full disk is a
        CacheFull naming the cache, and the cache stays as it was; any other database error is a
        DataError naming the cache and the entry ``key`` being written."""
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
            if isinstance(exc, self._database_errors()):
                raise self._damaged(exc, "cannot be written", key) from exc
            raise

    # ---- database errors, named ----------------------------------------------------------------------
    #: What a message calls the store's database.
    _database_name = "an SQLite database"

    def _database_errors(self) -> tuple[type[BaseException], ...]:
        """The driver's errors that mean the database (not this program) is at fault."""
        return (sqlite3.DatabaseError,)

    def _damaged(self, exc: BaseException, doing: str, key: str | None = None) -> DataError:
        return DataError(
            str(self.path),
            f"the request cache {doing} ({' '.join(str(exc).split()) or type(exc).__name__}); it only saves"
            " model calls, so move it aside (the next run starts a new one and repeats the calls)",
            record=record_name(key) if key is not None else None,
        )

    @contextmanager
    def _reading(self, key: str | None = None) -> Iterator[None]:
        """Reads whose database errors (a damaged page) become a DataError naming the cache."""
        try:
            yield
        except self._database_errors() as exc:
            if _is_full(exc):
                raise
            raise self._damaged(exc, "cannot be read", key) from exc

    #: SQLite's names of the types each column of ``calls`` may hold (a damaged file may hold others).
    _TYPEOF = {
        "key": "'text'",
        "backend": "'text'",
        "model": "'text'",
        "request_id": "'text'",
        "key_parts": "'text'",
        "text": "'text', 'null'",
        "input_tokens": "'integer'",
        "output_tokens": "'integer'",
        "latency_s": "'real', 'integer'",
        "created_at": "'real', 'integer'",
    }

    def _check_records(self) -> None:
        """Once per cache object, before inspecting it: the first stored value of a type the cache
        never writes (a BLOB where text belongs) is a DataError naming the file, the entry and the field."""
        if self._records_checked:
            return
        bad = {c: f"typeof({c}) NOT IN ({t})" for c, t in self._TYPEOF.items()}
        column = " ".join(f"WHEN {test} THEN '{c}'" for c, test in bad.items())
        kind = " ".join(f"WHEN {test} THEN typeof({c})" for c, test in bad.items())
        sql = f"SELECT key, CASE {column} END, CASE {kind} END FROM calls WHERE {' OR '.join(bad.values())} LIMIT 1"
        with self._reading():
            row = self._conn().execute(sql).fetchone()
        if row is not None:
            key, name, found = row
            expected = (
                "a number" if name in ("latency_s", "created_at") else "an integer" if "tokens" in name else "text"
            )
            raise DataError(
                str(self.path),
                f"holds {'a BLOB' if found == 'blob' else found} where the request cache keeps {expected};"
                " the cache is damaged (move it aside: a new one repeats the calls)",
                record=record_name(key),
                field=name,
            )
        self._records_checked = True

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
                if (
                    row is not None
                    and row[0] != me
                    and claimant_alive(row[1], row[2], row[3], row[4], now, self.claim_ttl_s)
                ):
                    theirs[key] = row[0]
                    continue
                if row is not None and row[0] != me:
                    log.info("request cache: taking over call %s from %s, which is gone", key[:12], row[0])
                conn.execute(
                    "INSERT OR REPLACE INTO claims(key, owner, host, pid, pid_started, claimed_at)"
                    " VALUES (?,?,?,?,?,?)",
                    (key, me, host, pid, process_started(pid), now),
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
        with self._reading(key):
            return self._conn().execute("SELECT 1 FROM calls WHERE key = ?", (key,)).fetchone() is not None

    def stats(self) -> dict[str, Any]:
        """Entries, tokens, latency and hits served, in total and per model."""
        # A cache written before hits were counted (read-only: not migrated) has served none we know of.
        hits = "SUM(hit_count)" if self._has("hit_count") else "0"
        self._check_records()
        with self._reading():
            rows = (
                self._conn()
                .execute(
                    "SELECT model, backend, COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(latency_s),"
                    f" {hits}, MIN(created_at), MAX(created_at) FROM calls GROUP BY model, backend ORDER BY model"
                )
                .fetchall()
            )
            size = self._size_bytes()
        models = [checked_model_row(str(self.path), r) for r in rows]
        return {
            "path": str(self.path),
            "size_bytes": size,
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
        self._check_records()
        with self._reading():
            rows = self._conn().execute(sql + " ORDER BY created_at DESC", args).fetchall()
        return [checked_entry(str(self.path), r) for r in rows]

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
        self._check_records()
        with self._reading():
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
    for column in CALLS_ADDED:
        if column[0] not in have:
            conn.execute(f"ALTER TABLE calls ADD COLUMN {column_sql(column, SQLITE_TYPES)}")
