"""The request cache's public face (core.cache): every name others import is there, from the modules
that hold it (core.cache_store, core.cache_sqlite, core.cache_inspect)."""

from __future__ import annotations

import socialbench.core.cache as cache
from socialbench.core import cache_inspect, cache_sqlite, cache_store


def test_the_public_names_come_from_their_topic_modules():
    assert cache.RequestCache is cache_sqlite.RequestCache
    assert cache.CacheStore is cache_store.CacheStore and cache.cache_key is cache_store.cache_key
    assert cache.MissExplanation is cache_inspect.MissExplanation and cache.diff_parts is cache_inspect.diff_parts
    assert all(hasattr(cache, name) for name in cache.__all__)


def test_the_process_start_helper_stays_importable_here_until_it_moves():
    import os

    from socialbench.core.processes import process_started as _process_started

    assert _process_started(os.getpid()) is not None
