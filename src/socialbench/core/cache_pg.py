"""The request cache in PostgreSQL (``psycopg``), for many nodes sharing one cache.

SQLite in WAL mode needs shared memory between its processes, which a network file system does not
give, so a cluster keeps the cache in PostgreSQL instead. The tables, the keys and the claims of calls
in flight are those of the SQLite store (``core.cache_store`` declares them; ``core.cache_sql`` holds the
logic both stores share); this store has its own connection and its own SQL, in PostgreSQL's dialect
(:data:`POSTGRES_SQL`). Writers are serialised by a transaction-scoped advisory lock, as SQLite's
``BEGIN IMMEDIATE`` serialises them, so two pipelines claiming the same key at once see each other's
claim and one waits for the other's answer.

The URL comes from the environment (:data:`CACHE_URL_ENV`; :func:`open_request_cache` picks the store) and may hold a
password: everything this module shows names the store by its URL with the password masked.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from socialbench.core.cache_sql import SqlStore, Statements
from socialbench.core.cache_sqlite import RequestCache
from socialbench.core.cache_store import CLAIM_POLL_S, CacheStore, schema_statements
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.secrets import redact_url

#: The advisory lock key of the cache's writers (any constant shared by every process of the store).
_WRITE_LOCK = 0x50C1A1BE
#: The advisory lock key of creating the tables (CREATE TABLE IF NOT EXISTS races between sessions).
_SCHEMA_LOCK = 0x50C1A1BF

#: Seconds a connect to the store may take unless params say (``waits.connect_s``; docs/security.md, "Waits").
CONNECT_TIMEOUT_S = 5.0

#: The dialect's names of the cache's column types (the tables are ``core.cache_store.schema_statements``).
POSTGRES_TYPES = {"text": "TEXT", "int": "BIGINT", "real": "DOUBLE PRECISION"}

_CALL_COLUMNS = (
    "key, backend, model, request_id, key_parts, text, input_tokens, output_tokens, latency_s, created_at,"
    " finish_reason"
)
_CALL_UPDATE = (
    " ON CONFLICT (key) DO UPDATE SET backend = EXCLUDED.backend, model = EXCLUDED.model,"
    " request_id = EXCLUDED.request_id, key_parts = EXCLUDED.key_parts, text = EXCLUDED.text,"
    " input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens, latency_s = EXCLUDED.latency_s,"
    " created_at = EXCLUDED.created_at, finish_reason = EXCLUDED.finish_reason"
)
#: The store's SQL (PostgreSQL's dialect: ``%s`` placeholders; a replaced row is an upsert on the key).
POSTGRES_SQL = Statements(
    get="SELECT text, input_tokens, output_tokens, latency_s, {finish} FROM calls WHERE key = %s",
    count_hit="UPDATE calls SET hit_count = hit_count + 1, last_hit_at = %s WHERE key = %s",
    put_call=f"INSERT INTO calls({_CALL_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s){_CALL_UPDATE}",
    put_record=f"INSERT INTO calls({_CALL_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,0,0,0,%s,NULL){_CALL_UPDATE}",
    drop_claim="DELETE FROM claims WHERE key = %s AND owner = %s",
    stored="SELECT 1 FROM calls WHERE key = %s",
    claim_of="SELECT owner, host, pid, pid_started, claimed_at FROM claims WHERE key = %s",
    put_claim="INSERT INTO claims(key, owner, host, pid, pid_started, claimed_at) VALUES (%s,%s,%s,%s,%s,%s)"
    " ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, host = EXCLUDED.host, pid = EXCLUDED.pid,"
    " pid_started = EXCLUDED.pid_started, claimed_at = EXCLUDED.claimed_at",
    stats="SELECT model, backend, COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(latency_s), {hits},"
    " MIN(created_at), MAX(created_at) FROM calls GROUP BY model, backend ORDER BY model",
    entries="SELECT key, model, key_parts, created_at FROM calls WHERE request_id = %s ORDER BY created_at DESC",
    entries_of_model="SELECT key, model, key_parts, created_at FROM calls WHERE request_id = %s AND model = %s"
    " ORDER BY created_at DESC",
    recomputed="SELECT model, request_id, MAX(created_at) AS t FROM calls GROUP BY model, request_id"
    " HAVING COUNT(*) > 1 ORDER BY t DESC LIMIT %s",
    recomputed_of_model="SELECT model, request_id, MAX(created_at) AS t FROM calls WHERE model = %s"
    " GROUP BY model, request_id HAVING COUNT(*) > 1 ORDER BY t DESC LIMIT %s",
)


def url_problem(url: str) -> str | None:
    """Why a ``postgresql://`` URL cannot name a store (a port that is no number or out of range, no
    database), or None. Said before connecting: the driver's own error would be a traceback."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 (urllib checks the port when it is read)
    except ValueError:
        port = parts.netloc.rpartition("@")[2].rpartition(":")[2]
        return f"its port {port!r} is not a number from 1 to 65535"
    if not parts.path.strip("/"):
        return "it names no database (postgresql://user:password@host:port/DATABASE)"
    return None


class _Connection:
    """A psycopg connection with the calls :class:`~socialbench.core.cache_sql.SqlStore` makes
    (``execute``, ``executemany``, ``in_transaction``); the SQL is PostgreSQL's own."""

    def __init__(self, conn: Any):
        self._conn = conn

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql, tuple(args) or None)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(sql, [tuple(r) for r in rows])

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self._conn.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self._conn.close()


class PostgresRequestCache(SqlStore):
    """The request cache in a PostgreSQL database (``postgresql://user:password@host:port/db``).

    One connection per thread, in autocommit mode with explicit transactions for writes, as the
    SQLite store. The database and its user must exist; the tables are created on first use.

    Nodes cannot see each other's processes, so a claim lives by its heartbeat: while this process
    makes its calls it renews its claims every :attr:`heartbeat_s`, and another node takes a claim
    over once it is older than :attr:`claim_ttl_s` (its node died or lost the database)."""

    sql = POSTGRES_SQL
    claim_ttl_s = 300.0
    heartbeat_s = 60.0

    def __init__(self, url: str, *, readonly: bool = False, connect_timeout_s: float = CONNECT_TIMEOUT_S):
        self.url = url
        # libpq's connect_timeout is whole seconds (at least 2 where it is set at all)
        self.connect_timeout_s = max(2, math.ceil(connect_timeout_s))
        self._init_state(redact_url(url), readonly=readonly)  # messages name the store, never its password
        self._opened: list[_Connection] = []  # every thread's connection, all closed by close()
        self._opened_lock = threading.Lock()
        self._beat: _Connection | None = None
        conn = self._conn()
        have = self._calls_columns(conn)
        if readonly:
            self._check_readonly_store(have)
            return
        if have:  # a database with another program's 'calls' table is never written to
            self._refuse_foreign(have)
        try:
            conn.execute("BEGIN")
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in schema_statements(POSTGRES_TYPES):
                conn.execute(statement)
            conn.execute("COMMIT")
        except Exception as exc:
            self.close()
            raise DataError(self.path, f"the request cache tables cannot be created ({exc})") from exc

    @classmethod
    def open_readonly(cls, url: str, connect_timeout_s: float = CONNECT_TIMEOUT_S) -> PostgresRequestCache:
        """The store opened for inspection (``socialbench cache``): read-only sessions, no table created."""
        return cls(url, readonly=True, connect_timeout_s=connect_timeout_s)

    def _calls_columns(self, conn: _Connection) -> set[str]:
        """The columns of the ``calls`` table the session sees (none: there is no such table)."""
        try:
            rows = conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass('calls') AND attnum > 0"
                " AND NOT attisdropped"
            ).fetchall()
        except self._database_errors() as exc:
            self.close()
            raise self._damaged(exc, "cannot be read") from exc
        return {r[0] for r in rows}

    def _check_readonly_store(self, have: set[str]) -> None:
        if not have:
            self.close()
            raise DataError(self.path, "no request cache here yet (a run creates it with its first model call)")
        self._refuse_foreign(have)
        self._columns = have

    _database_name = "a PostgreSQL database"

    def _database_errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.Error,)

    def _begin(self, conn: _Connection) -> None:
        """A transaction that first takes the writers' advisory lock (writers queue, as SQLite's
        ``BEGIN IMMEDIATE`` queues them)."""
        conn.execute("BEGIN")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))

    def _connect(self) -> _Connection:
        import psycopg

        try:
            raw = psycopg.connect(self.url, autocommit=True, connect_timeout=self.connect_timeout_s)
        except psycopg.Error as exc:
            # psycopg's message names host and user, never the password.
            reason = " ".join(str(exc).split())
            raise DataError(
                self.path,
                f"cannot connect to the request cache store within {self.connect_timeout_s} s ({reason});"
                " is the server running? (the wait is waits.connect_s in params)",
            ) from None
        if self.readonly:  # inspection: the server refuses any write of this session
            raw.execute("SET default_transaction_read_only = on")
        conn = _Connection(raw)
        with self._opened_lock:
            self._opened.append(conn)
        return conn

    def _conn(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def _heartbeat_conn(self) -> _Connection:
        """The connection the heartbeats use: one for the cache's life (each share_calls starts a new
        heartbeat thread, and a connection per thread would pile up until close)."""
        if self._beat is None:
            self._beat = self._connect()
        return self._beat

    def close(self) -> None:
        """Close every thread's connection (the runner's worker threads each opened one): a server
        shared by many nodes has a bounded number of connections."""
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self._local = threading.local()
        self._beat = None

    def share_calls(self, keys, call, on_shared, poll_s=CLAIM_POLL_S) -> None:  # type: ignore[override]
        """As :meth:`SqlStore.share_calls`, with this process's claims renewed while it calls."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.heartbeat_s):
                self._heartbeat_conn().execute(
                    "UPDATE claims SET claimed_at = %s WHERE owner = %s", (time.time(), self._owner())
                )

        beating = threading.Thread(target=beat, name="cache-claims-heartbeat", daemon=True)
        beating.start()
        try:
            super().share_calls(keys, call, on_shared, poll_s)
        finally:
            stop.set()
            beating.join()

    def _size_bytes(self) -> int:
        row = (
            self._conn().execute("SELECT pg_total_relation_size('calls') + pg_total_relation_size('claims')").fetchone()
        )
        return int(row[0] or 0)


#: The environment variable naming a shared cache store (``postgresql://user:pw@host/db``); never a param.
CACHE_URL_ENV = "SOCIALBENCH_CACHE_URL"


def cache_store_url(environ: dict[str, str] | None = None) -> str | None:
    """The shared store's URL from the environment; None (the SQLite file of the params) when unset.
    A URL of an unknown kind is an error naming the variable (its value may hold a password)."""
    url = (os.environ if environ is None else environ).get(CACHE_URL_ENV, "").strip()
    if not url:
        return None
    if not url.startswith(("postgresql://", "postgres://")):
        raise SocialbenchError(f"{CACHE_URL_ENV}: must be a postgresql:// URL (or unset for the SQLite file in params)")
    problem = url_problem(url)
    if problem is not None:
        raise SocialbenchError(f"{CACHE_URL_ENV}: {redact_url(url)}: {problem}")
    return url


def open_request_cache(
    path: str | Path, environ: dict[str, str] | None = None, connect_timeout_s: float = CONNECT_TIMEOUT_S
) -> CacheStore:
    """The request cache a run uses: the PostgreSQL store named by :data:`CACHE_URL_ENV` when set
    (a connect bounded by ``connect_timeout_s``, params ``waits.connect_s``), else the SQLite file at
    ``path`` (the default)."""
    url = cache_store_url(environ)
    if url is None:
        return RequestCache(path)
    return PostgresRequestCache(url, connect_timeout_s=connect_timeout_s)
