"""The request cache in PostgreSQL (``psycopg``), for many nodes sharing one cache (SQLite's WAL needs shared
memory, which a network file system lacks): the SQLite store's tables, keys and claims with SQL in
PostgreSQL's dialect (:data:`POSTGRES_SQL`), writers queued on an advisory lock. The URL
(:data:`CACHE_URL_ENV`) may hold a password: messages show it masked."""

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
from socialbench.core.cache_store import CALL_COLUMNS, CLAIM_POLL_S, CacheStore, schema_statements
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.secrets import redact_url

#: Advisory lock keys: the writers', and creating the tables (CREATE TABLE IF NOT EXISTS races).
_WRITE_LOCK = 0x50C1A1BE
_SCHEMA_LOCK = 0x50C1A1BF

#: Seconds a connect may take unless params ``waits.connect_s`` say (docs/security.md, "Waits").
CONNECT_TIMEOUT_S = 5.0

#: The dialect's names of the neutral column types.
POSTGRES_TYPES = {"text": "TEXT", "int": "BIGINT", "real": "DOUBLE PRECISION"}

_CALL_UPDATE = " ON CONFLICT (key) DO UPDATE SET " + ", ".join(
    f"{c} = EXCLUDED.{c}" for c in CALL_COLUMNS.replace(",", " ").split()[1:]
)
#: The store's SQL (``%s`` placeholders; a replaced row is an upsert on the key).
POSTGRES_SQL = Statements(
    get="SELECT text, input_tokens, output_tokens, latency_s, {finish} FROM calls WHERE key = %s",
    count_hit="UPDATE calls SET hit_count = hit_count + 1, last_hit_at = %s WHERE key = %s",
    put_call=f"INSERT INTO calls({CALL_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s){_CALL_UPDATE}",
    put_record=f"INSERT INTO calls({CALL_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,0,0,0,%s,NULL){_CALL_UPDATE}",
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
    """Why a ``postgresql://`` URL cannot name a store, or None (said before the driver's traceback)."""
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
    """A psycopg connection with the calls :class:`~socialbench.core.cache_sql.SqlStore` makes."""

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
    """The request cache in an existing PostgreSQL database (``postgresql://user:password@host:port/db``), tables
    created on first use. Nodes cannot see each other's processes, so a claim lives by its heartbeat: renewed
    every :attr:`heartbeat_s` while calling, taken over by another node after :attr:`claim_ttl_s`."""

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
        try:  # the ``calls`` table's columns (none: no such table)
            rows = conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass('calls') AND attnum > 0"
                " AND NOT attisdropped"
            ).fetchall()
        except self._database_errors() as exc:
            self.close()
            raise self._damaged(exc, "cannot be read") from exc
        have = {r[0] for r in rows}
        if readonly:
            if not have:
                self.close()
                raise DataError(self.path, "no request cache here yet (a run creates it with its first model call)")
            self._refuse_foreign(have)
            self._columns = have
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
        """For inspection (``socialbench cache``): read-only sessions, no table created."""
        return cls(url, readonly=True, connect_timeout_s=connect_timeout_s)

    _database_name = "a PostgreSQL database"

    def _database_errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.Error,)

    def _begin(self, conn: _Connection) -> None:
        """A transaction holding the writers' advisory lock (writers queue)."""
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

    def close(self) -> None:
        """Close every thread's connection (a shared server has a bounded number)."""
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self._local = threading.local()
        self._beat = None

    def share_calls(self, keys, call, on_shared, poll_s=CLAIM_POLL_S) -> None:  # type: ignore[override]
        """:meth:`SqlStore.share_calls`, renewing this process's claims while it calls."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.heartbeat_s):
                self._beat = self._beat or self._connect()  # one for every heartbeat of the cache's life
                self._beat.execute("UPDATE claims SET claimed_at = %s WHERE owner = %s", (time.time(), self._owner()))

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


#: The environment variable naming a shared store (``postgresql://user:pw@host/db``); never a param.
CACHE_URL_ENV = "SOCIALBENCH_CACHE_URL"


def cache_store_url(environ: dict[str, str] | None = None) -> str | None:
    """The shared store's URL from the environment, or None; errors name the variable, not the value."""
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
    """The PostgreSQL store named by :data:`CACHE_URL_ENV` when set, else the SQLite file at ``path``."""
    url = cache_store_url(environ)
    return RequestCache(path) if url is None else PostgresRequestCache(url, connect_timeout_s=connect_timeout_s)
