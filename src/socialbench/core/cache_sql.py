"""The SQL request-cache stores' shared reads, writes, claims and inspection, written once against each
store's own statements (:class:`Statements`, in its dialect; no SQL is rewritten into another's)."""

from __future__ import annotations

import abc
import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from socialbench.core.backend import Request, Response
from socialbench.core.cache_inspect import MissExplanation, checked_entry, checked_model_row, nearest_explanation
from socialbench.core.cache_store import (
    CLAIM_POLL_S,
    CLAIM_TTL_S,
    CacheFull,
    CacheStore,
    cache_key,
    check_calls_columns,
    checked_response,
    claimant_alive,
    key_parts,
    record_name,
)
from socialbench.core.errors import DataError
from socialbench.core.hashing import canonical_json
from socialbench.core.processes import process_started

log = logging.getLogger("socialbench.core.cache")


@dataclass(frozen=True)
class Statements:
    """A store's SQL. ``get``/``stats`` hold a ``{finish}``/``{hits}`` slot: the column, or ``NULL``/``0``
    for an old read-only cache. ``*_of_model`` forms add the model's condition."""

    get: str  # (key) -> text, input_tokens, output_tokens, latency_s, finish_reason
    count_hit: str  # (last_hit_at, key)
    put_call: str  # (key, backend, model, request_id, key_parts, text, in, out, latency, created_at, finish)
    put_record: str  # (key, backend, model, request_id, key_parts, text, created_at)
    drop_claim: str  # (key, owner)
    stored: str  # (key) -> a row when the key is stored
    claim_of: str  # (key) -> owner, host, pid, pid_started, claimed_at
    put_claim: str  # (key, owner, host, pid, pid_started, claimed_at)
    stats: str  # -> model, backend, count, in, out, latency, hits, first, last (by model, backend)
    entries: str  # (request_id) -> key, model, key_parts, created_at, newest first
    entries_of_model: str  # (request_id, model)
    recomputed: str  # (limit) -> model, request_id, newest
    recomputed_of_model: str  # (model, limit)


class SqlStore(CacheStore):
    """A request cache in an SQL database: a connection per thread, queued writes, shared claims."""

    sql: ClassVar[Statements]
    #: Another host's claim is taken over when older than this (its process cannot be asked).
    claim_ttl_s = CLAIM_TTL_S
    _database_name = "a database"

    # ---- what each store gives ----------------------------------------------------------------------
    @abc.abstractmethod
    def _conn(self) -> Any:
        """This thread's connection."""

    @abc.abstractmethod
    def _begin(self, conn: Any) -> None:
        """Start a write transaction that waits for other writers (SQLite's ``BEGIN IMMEDIATE``)."""

    @abc.abstractmethod
    def _database_errors(self) -> tuple[type[BaseException], ...]:
        """Driver errors meaning the database, not this program, is at fault."""

    @abc.abstractmethod
    def _size_bytes(self) -> int:
        """The store's size on disk."""

    def _is_full(self, exc: BaseException) -> bool:
        """Whether ``exc`` says no space is left (the cache stays usable). Default: never."""
        return False

    def _check_records(self) -> None:
        """Before inspecting: stored values of a wrong type are a DataError naming entry and field."""
        return None

    # ---- state -------------------------------------------------------------------------------------
    def _init_state(self, path: Any, readonly: bool) -> None:
        """What every store starts with (``path``: what messages name it by)."""
        self.path = path
        self.readonly = readonly
        self._local = threading.local()
        self.hits = 0
        self.misses = 0
        self._columns: set[str] | None = None  # known only when opened read-only (else migrated)
        self._records_checked = False  # stored values' types, checked once before inspecting
        self._token = secrets.token_hex(6)  # this cache object's part of its claims' owner

    def _refuse_foreign(self, have: set[str]) -> None:
        """Close and raise when the ``calls`` table is not a request cache's."""
        try:
            check_calls_columns(str(self.path), have, self._database_name)
        except DataError:
            self.close()
            raise

    def _has(self, column: str) -> bool:
        # Opened for writing, the cache was migrated: it has every column.
        return self._columns is None or column in self._columns

    # ---- reads and writes ---------------------------------------------------------------------------
    def get(self, key: str) -> Response | None:
        """The stored response (``cached`` set; finish reason None for old entries), or None on a miss."""
        finish = "finish_reason" if self._has("finish_reason") else "NULL"
        with self._reading(key):
            row = self._conn().execute(self.sql.get.format(finish=finish), (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        response = checked_response(str(self.path), key, row)
        self.hits += 1
        if not self.readonly:
            # How often each entry saved a call (shown by `socialbench cache stats`).
            try:
                self._conn().execute(self.sql.count_hit, (time.time(), key))
            except self._database_errors() as exc:
                if not self._is_full(exc):
                    raise  # a full disk costs only the count: the answer is there
        return response

    def put(self, key: str, identity: dict[str, Any], request: Request, response: Response, model: str) -> None:
        """Store a successful call with its finish reason (a failed one only releases its claim); full: CacheFull."""
        if response.error is not None:
            self.release([key])
            return
        if self.readonly:
            raise RuntimeError(f"{self.path}: the request cache was opened read-only")
        parts = canonical_json(key_parts(identity, request))
        call = (key, str(identity.get("backend")), model, request.request_id, parts)
        usage = (response.input_tokens, response.output_tokens, response.latency_s)
        with self._write(key) as conn:
            conn.execute(self.sql.put_call, (*call, response.text, *usage, time.time(), response.finish_reason))
            conn.execute(self.sql.drop_claim, (key, self._owner()))

    def put_record(
        self, key: str, parts: dict[str, Any], text: str, *, backend: str, model: str, request_id: str
    ) -> None:
        """Store an answer that is no model call (a retriever's search) under ``key``; read with :meth:`get`."""
        if self.readonly:
            raise RuntimeError(f"{self.path}: the request cache was opened read-only")
        with self._write(key) as conn:
            conn.execute(
                self.sql.put_record, (key, backend, model, request_id, canonical_json(parts), text, time.time())
            )

    @contextmanager
    def _write(self, key: str | None = None) -> Iterator[Any]:
        """One write transaction: a full disk is CacheFull, another database error a DataError naming ``key``."""
        conn = self._conn()
        try:
            self._begin(conn)
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if self._is_full(exc):
                raise CacheFull(self.path, str(exc)) from exc
            if isinstance(exc, self._database_errors()):
                raise self._damaged(exc, "cannot be written", key) from exc
            raise

    # ---- database errors, named ----------------------------------------------------------------------
    def _damaged(self, exc: BaseException, doing: str, key: str | None = None) -> DataError:
        return DataError(
            str(self.path),
            f"the request cache {doing} ({' '.join(str(exc).split()) or type(exc).__name__}); it only saves"
            " model calls, so move it aside (the next run starts a new one and repeats the calls)",
            record=record_name(key) if key is not None else None,
        )

    @contextmanager
    def _reading(self, key: str | None = None) -> Iterator[None]:
        """Reads whose database errors become a DataError naming the cache."""
        try:
            yield
        except self._database_errors() as exc:
            if self._is_full(exc):
                raise
            raise self._damaged(exc, "cannot be read", key) from exc

    # ---- calls in flight, shared across processes ---------------------------------------------------
    def _owner(self) -> str:
        return f"{socket.gethostname()}:{os.getpid()}:{self._token}"

    def _claim(self, keys: Sequence[str]) -> tuple[set[str], set[str], dict[str, str]]:
        """In one transaction: (keys claimed, keys stored, {key: live claimant}); dead claims taken over."""
        me, host, pid = self._owner(), socket.gethostname(), os.getpid()
        mine: set[str] = set()
        stored: set[str] = set()
        theirs: dict[str, str] = {}
        now = time.time()
        with self._write() as conn:
            for key in dict.fromkeys(keys):
                if conn.execute(self.sql.stored, (key,)).fetchone() is not None:
                    stored.add(key)
                    continue
                row = conn.execute(self.sql.claim_of, (key,)).fetchone()
                if (
                    row is not None
                    and row[0] != me
                    and claimant_alive(row[1], row[2], row[3], row[4], now, self.claim_ttl_s)
                ):
                    theirs[key] = row[0]
                    continue
                if row is not None and row[0] != me:
                    log.info("request cache: taking over call %s from %s, which is gone", key[:12], row[0])
                conn.execute(self.sql.put_claim, (key, me, host, pid, process_started(pid), now))
                mine.add(key)
        return mine, stored, theirs

    def release(self, keys: Sequence[str]) -> None:
        """Give up this object's claims on ``keys``."""
        if self.readonly or not keys:
            return
        owner = self._owner()
        try:
            self._conn().executemany(self.sql.drop_claim, [(k, owner) for k in keys])
        except self._database_errors() as exc:
            if not self._is_full(exc):
                raise
            # A full disk can refuse even a delete (WAL): the claim then dies with this process.

    def share_calls(
        self,
        keys: Sequence[str],
        call: Callable[[list[int]], None],
        on_shared: Callable[[int, Response], None],
        poll_s: float = CLAIM_POLL_S,
    ) -> None:
        """Make the calls for ``keys`` once across processes: ``call(indices)`` makes those claimed here, a live
        process's claims are awaited (``on_shared(index, response)``), dead ones taken over."""
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

    # ---- inspection (``socialbench cache``) --------------------------------------------------------
    def __contains__(self, key: str) -> bool:
        with self._reading(key):
            return self._conn().execute(self.sql.stored, (key,)).fetchone() is not None

    def stats(self) -> dict[str, Any]:
        """Entries, tokens, latency and hits served, in total and per model."""
        # A cache written before hits were counted (read-only: not migrated) has served none we know of.
        hits = "SUM(hit_count)" if self._has("hit_count") else "0"
        self._check_records()
        with self._reading():
            rows = self._conn().execute(self.sql.stats.format(hits=hits)).fetchall()
            size = self._size_bytes()
        models = [checked_model_row(str(self.path), r) for r in rows]
        for m in models:  # a database may sum whole numbers to decimals (PostgreSQL's NUMERIC)
            for k in ("entries", "input_tokens", "output_tokens", "hits_served"):
                m[k] = int(m[k])
        return {
            "path": str(self.path),
            "size_bytes": size,
            "entries": sum(m["entries"] for m in models),
            "hits_served": sum(m["hits_served"] for m in models),
            "models": models,
        }

    def entries_for(self, model: str | None, request_id: str) -> list[dict[str, Any]]:
        """Stored entries of one request id (under one model, or any), newest first."""
        if model is None:
            sql, args = self.sql.entries, (request_id,)
        else:
            sql, args = self.sql.entries_of_model, (request_id, model)
        self._check_records()
        with self._reading():
            rows = self._conn().execute(sql, args).fetchall()
        return [checked_entry(str(self.path), r) for r in rows]

    def recomputed(self, model: str | None = None, limit: int = 20) -> list[tuple[str, str]]:
        """(model, request_id) pairs stored under several keys (calls made again), most recent first."""
        if model is None:
            sql, args = self.sql.recomputed, (int(limit),)
        else:
            sql, args = self.sql.recomputed_of_model, (model, int(limit))
        self._check_records()
        with self._reading():
            return [(r[0], r[1]) for r in self._conn().execute(sql, args).fetchall()]

    def explain_miss(self, identity: dict[str, Any], request: Request, model: str) -> MissExplanation:
        """Why ``request`` is a miss: its key's differences from the nearest entry of the same model and id."""
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
        """Why a request's newest entry was a miss, against the nearest older one; None with one entry."""
        entries = self.entries_for(model, request_id)
        if len(entries) < 2:
            return None
        return nearest_explanation(request_id, model, entries[0]["key_parts"], entries[1:])
