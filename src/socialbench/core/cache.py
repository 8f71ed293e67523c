"""Content-addressed request cache: the public face (import the cache's names from here).

The key is sha256 over the backend identity, the rendered messages with every media file's content hash,
the task and the decoding; retriever searches are stored too. Each call is committed on arrival with its
finish reason; calls in flight are shared across processes through claims; a full disk is :class:`CacheFull`.
Modules: ``core.cache_store`` (contract), ``core.cache_sqlite`` (the default), ``core.cache_pg`` (PostgreSQL,
chosen by ``SOCIALBENCH_CACHE_URL``, never a param: it may hold a password), ``core.cache_inspect``."""

from __future__ import annotations

from socialbench.core.cache_inspect import MissExplanation, diff_parts
from socialbench.core.cache_sqlite import RequestCache
from socialbench.core.cache_store import CLAIM_TTL_S, CacheFull, CacheStore, ReplayMiss, cache_key, claimant_alive

__all__ = [
    "CLAIM_TTL_S",
    "CacheFull",
    "CacheStore",
    "MissExplanation",
    "ReplayMiss",
    "RequestCache",
    "cache_key",
    "claimant_alive",
    "diff_parts",
]
