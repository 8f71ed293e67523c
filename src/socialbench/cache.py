"""Content-addressed request cache (sqlite, WAL mode).

The key is sha256 over the backend identity (backend, model id, revision, backend extras), the fully
rendered messages with the content hash of every image or frame, the structured task and the
decoding parameters. Each finished call is committed at once, so a killed run loses only the calls
that were in flight. The cache lives outside DVC outs: DVC deleting a stage's outputs costs no calls.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from socialbench.backends.base import Request, Response
from socialbench.hashing import canonical_json, sha256_bytes

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    request_id TEXT NOT NULL,
    key_parts TEXT NOT NULL,
    text TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_request ON calls(model, request_id);
"""


def key_parts(identity: dict[str, Any], request: Request) -> dict[str, Any]:
    """The named parts of a cache key; kept with each entry so a miss can be explained."""
    parts = {"identity": identity}
    parts.update(request.key())
    return parts


def cache_key(identity: dict[str, Any], request: Request) -> str:
    return sha256_bytes(canonical_json(key_parts(identity, request)).encode("utf-8"))


class RequestCache:
    """Thread-safe sqlite cache; one connection per thread, WAL so readers never block writers."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self.hits = 0
        self.misses = 0
        with self._conn() as conn:
            conn.executescript(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Response | None:
        row = self._conn().execute(
            "SELECT text, input_tokens, output_tokens, latency_s FROM calls WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return Response(text=row[0], input_tokens=row[1], output_tokens=row[2], latency_s=row[3], cached=True)

    def put(self, key: str, identity: dict[str, Any], request: Request, response: Response, model: str) -> None:
        """Store a successful call. Failed calls are not cached, so a rerun tries them again."""
        if response.error is not None:
            return
        self._conn().execute(
            "INSERT OR REPLACE INTO calls(key, backend, model, request_id, key_parts, text, input_tokens,"
            " output_tokens, latency_s, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
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
            ),
        )

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
