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
the runner needs (:class:`CacheStore`, abstract); ``core.cache_pg.PostgresRequestCache`` keeps the same tables in
PostgreSQL for many nodes (SQLite in WAL mode is unsafe on network file systems).
``core.cache_pg.open_request_cache`` picks it when ``SOCIALBENCH_CACHE_URL`` holds a ``postgresql://`` URL (from the
environment only: the URL may hold a password, so it is never a param).

The modules, one topic each: ``core.cache_store`` (the contract: tables, keys, claims, the abstract
store), ``core.cache_sqlite`` (the SQLite store), ``core.cache_pg`` (the PostgreSQL store),
``core.cache_inspect`` (stored records checked as read, and explaining misses). This module is the
public face: import the cache's names from here.
"""

from __future__ import annotations

from socialbench.core.cache_inspect import (
    PART_NAMES,
    Change,
    MissExplanation,
    diff_parts,
    nearest_explanation,
)
from socialbench.core.cache_sqlite import SQLITE_TYPES, RequestCache

# Used by other modules until they move to a public helper (issue 30, point 5); kept importable here.
from socialbench.core.cache_store import (
    CLAIM_POLL_S,
    CLAIM_TTL_S,
    CacheFull,
    CacheStore,
    ReplayMiss,
    cache_key,
    claimant_alive,
    key_parts,
    schema_statements,
)

__all__ = [
    "CLAIM_POLL_S",
    "CLAIM_TTL_S",
    "PART_NAMES",
    "SQLITE_TYPES",
    "CacheFull",
    "CacheStore",
    "Change",
    "MissExplanation",
    "ReplayMiss",
    "RequestCache",
    "cache_key",
    "claimant_alive",
    "diff_parts",
    "key_parts",
    "nearest_explanation",
    "schema_statements",
]
