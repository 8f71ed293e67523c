"""What the SQL stores share (core.cache_sql): each store is a SqlStore of its own, with its own SQL in
its own dialect, and the same statements."""

from __future__ import annotations

import dataclasses
import re

import pytest

from socialbench.core.cache_pg import POSTGRES_SQL, PostgresRequestCache
from socialbench.core.cache_sql import SqlStore, Statements
from socialbench.core.cache_sqlite import SQLITE_SQL, RequestCache

NAMES = [f.name for f in dataclasses.fields(Statements)]


def test_each_store_is_a_sql_store_of_its_own_not_a_subclass_of_the_other():
    assert issubclass(RequestCache, SqlStore) and issubclass(PostgresRequestCache, SqlStore)
    assert not issubclass(PostgresRequestCache, RequestCache) and not issubclass(RequestCache, PostgresRequestCache)
    assert RequestCache.sql is SQLITE_SQL and PostgresRequestCache.sql is POSTGRES_SQL


@pytest.mark.parametrize("name", NAMES)
def test_each_statement_takes_the_same_arguments_in_both_dialects(name):
    sqlite, postgres = getattr(SQLITE_SQL, name), getattr(POSTGRES_SQL, name)
    assert "%s" not in sqlite and "?" not in postgres
    assert sqlite.count("?") == postgres.count("%s")


def test_only_sqlite_writes_insert_or_replace():
    assert any("INSERT OR REPLACE" in getattr(SQLITE_SQL, n) for n in NAMES)
    assert not any(re.search(r"INSERT OR REPLACE", getattr(POSTGRES_SQL, n)) for n in NAMES)


def test_a_store_that_gives_no_connection_cannot_be_made():
    class NoConnection(SqlStore):
        sql = SQLITE_SQL

    with pytest.raises(TypeError, match="abstract"):
        NoConnection()
