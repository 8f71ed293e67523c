"""The request cache in one SQLite file (WAL mode), the default store: a connection per thread, writers
queue on ``BEGIN IMMEDIATE``, a full disk is :class:`~socialbench.core.cache_store.CacheFull`, a damaged
file a DataError naming the file and entry."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from filelock import FileLock

from socialbench.core.cache_sql import SqlStore, Statements
from socialbench.core.cache_store import (
    CALL_COLUMNS,
    CALLS_ADDED,
    CALLS_FIRST,
    CacheFull,
    column_sql,
    damaged_entry,
    schema_statements,
)
from socialbench.core.errors import DataError
from socialbench.core.paths import refuse_special

SQLITE_TYPES = {"text": "TEXT", "int": "INTEGER", "real": "REAL"}
_TYPEOF_NAMES = {"text": "'text'", "int": "'integer'", "real": "'real', 'integer'"}
_KINDS = {name: kind for name, kind, _ in CALLS_FIRST}
_SQLITE_MAGIC = b"SQLite format 3\x00"

SQLITE_SQL = Statements(
    get="SELECT text, input_tokens, output_tokens, latency_s, {finish} FROM calls WHERE key = ?",
    count_hit="UPDATE calls SET hit_count = hit_count + 1, last_hit_at = ? WHERE key = ?",
    put_call=f"INSERT OR REPLACE INTO calls({CALL_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    put_record=f"INSERT OR REPLACE INTO calls({CALL_COLUMNS}) VALUES (?,?,?,?,?,?,0,0,0,?,NULL)",
    drop_claim="DELETE FROM claims WHERE key = ? AND owner = ?",
    stored="SELECT 1 FROM calls WHERE key = ?",
    claim_of="SELECT owner, host, pid, pid_started, claimed_at FROM claims WHERE key = ?",
    put_claim="INSERT OR REPLACE INTO claims(key, owner, host, pid, pid_started, claimed_at) VALUES (?,?,?,?,?,?)",
    stats="SELECT model, backend, COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(latency_s), {hits},"
    " MIN(created_at), MAX(created_at) FROM calls GROUP BY model, backend ORDER BY model",
    entries="SELECT key, model, key_parts, created_at FROM calls WHERE request_id = ? ORDER BY created_at DESC",
    entries_of_model="SELECT key, model, key_parts, created_at FROM calls WHERE request_id = ? AND model = ?"
    " ORDER BY created_at DESC",
    recomputed="SELECT model, request_id, MAX(created_at) AS t FROM calls GROUP BY model, request_id"
    " HAVING COUNT(*) > 1 ORDER BY t DESC LIMIT ?",
    recomputed_of_model="SELECT model, request_id, MAX(created_at) AS t FROM calls WHERE model = ?"
    " GROUP BY model, request_id HAVING COUNT(*) > 1 ORDER BY t DESC LIMIT ?",
)


def _is_full(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("full" in text or "disk i/o" in text)


class RequestCache(SqlStore):
    """The SQLite request cache (WAL: readers never block writers); ``open_readonly`` changes nothing."""

    sql = SQLITE_SQL
    _database_name = "an SQLite database"

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self._init_state(Path(path), readonly)
        if readonly:
            self._check_readonly()
            return
        self._refuse_foreign_file()  # before the lock file beside it is made: a refusal changes nothing
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # parallel jobs opening a new cache race to set WAL and make tables, and SQLite answers the loser
        # "database is locked" without waiting: a file lock serialises the set-up (later use needs none)
        with FileLock(f"{self.path}.lock", timeout=300):
            try:
                conn = self._conn()
                for statement in schema_statements(SQLITE_TYPES):
                    conn.execute(statement)
                have = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}  # old files gain added columns
                for column in CALLS_ADDED:
                    if column[0] not in have:
                        conn.execute(f"ALTER TABLE calls ADD COLUMN {column_sql(column, SQLITE_TYPES)}")
            except sqlite3.DatabaseError as exc:
                self.close()
                if _is_full(exc):
                    raise CacheFull(self.path, str(exc)) from exc
                raise DataError(
                    str(self.path),
                    f"the request cache cannot be opened ({exc}); it only saves model calls,"
                    " so move it aside (the next run starts a new one and repeats the calls)",
                ) from exc

    @classmethod
    def open_readonly(cls, path: str | Path) -> RequestCache:
        """An existing request cache for reading only; a DataError naming the path otherwise."""
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
        """Before anything changes (even the journal mode): another program's ``calls`` table is never written."""
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

    def _readonly_conn(self) -> sqlite3.Connection:
        # with a writer present, share its -wal and -shm files; without one, open immutable (all data is
        # in the main file), as a read-only connection would otherwise create both and leave them behind
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

    def _begin(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")

    def _database_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.DatabaseError,)

    def _is_full(self, exc: BaseException) -> bool:
        return _is_full(exc)

    #: SQLite's type names each ``calls`` column may hold, by its declared type (a damaged file may hold others).
    _TYPEOF = {name: _TYPEOF_NAMES[kind] + ("" if constraint else ", 'null'") for name, kind, constraint in CALLS_FIRST}

    def _check_records(self) -> None:
        """Once, before inspecting: a value of a type the cache never writes is a DataError naming it."""
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
            expected = {"text": "text", "int": "an integer", "real": "a number"}[_KINDS[name]]
            found = "a BLOB" if found == "blob" else found
            raise damaged_entry(str(self.path), key, name, f"holds {found} where the request cache keeps {expected}")
        self._records_checked = True

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
