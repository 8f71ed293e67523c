"""The request cache's contract (core.cache_store): the abstract store, the schema check, and stored
answers checked as they are read."""

from __future__ import annotations

import pytest

from socialbench.core.cache_store import CacheStore, check_calls_columns, checked_response
from socialbench.core.errors import DataError


def test_a_store_that_leaves_out_one_operation_cannot_be_made():
    class Partial(CacheStore):
        def get(self, key):
            return None

    with pytest.raises(TypeError, match="abstract"):
        Partial()


def test_the_sqlite_and_postgresql_stores_implement_the_whole_contract():
    from socialbench.core.cache_pg import PostgresRequestCache
    from socialbench.core.cache_sqlite import RequestCache

    assert not RequestCache.__abstractmethods__ and not PostgresRequestCache.__abstractmethods__
    assert issubclass(PostgresRequestCache, CacheStore)


def test_a_calls_table_without_the_cache_columns_is_named_as_not_a_cache():
    with pytest.raises(DataError, match=r"db: is a database but not a request cache \(its 'calls' table lacks"):
        check_calls_columns("db", {"id", "who", "when"})


def test_a_blob_where_the_answer_text_belongs_names_the_entry_and_field():
    with pytest.raises(DataError) as exc:
        checked_response("c.sqlite", "ab" * 32, (b"\x00\x01", 1, 1, 0.1, "stop"))
    assert str(exc.value).startswith("c.sqlite, record key abababababab…, field 'text': holds a BLOB")


def test_token_counts_that_are_not_integers_are_refused():
    with pytest.raises(DataError, match="field 'input_tokens': holds text where the request cache keeps an integer"):
        checked_response("c.sqlite", "k", ("answer", "7", 1, 0.1, None))


def test_a_well_formed_row_is_a_cached_response():
    response = checked_response("c.sqlite", "k", ("answer", 7, 2, 0.5, None))
    assert response.cached and (response.text, response.input_tokens, response.finish_reason) == ("answer", 7, None)
