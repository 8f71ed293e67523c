"""The retriever plug-in kind (socialbench.core.retrieval): registry, lazy import, searches through the
request cache."""

from __future__ import annotations

import pytest

from socialbench.core import retrieval
from socialbench.core.cache import RequestCache
from socialbench.core.errors import ConfigError, MissingDependency
from socialbench.core.retrieval import Passage, Retriever, cached_search, create_retriever, get_retriever_class


class Counting(Retriever):
    """Answers every query with one passage naming it, and counts its searches."""

    name = "counting"

    def __init__(self, options=None, where="retrieval"):
        super().__init__(options, where)
        self.searches: list[tuple[str, int]] = []

    def search(self, query, k):
        self.searches.append((query, k))
        return [Passage(doc_id=f"d{i}", text=f"{query} {i}", score=1.0 / (i + 1)) for i in range(k)]


def test_an_unknown_retriever_is_a_config_error_listing_the_known_ones():
    with pytest.raises(
        ConfigError, match=r"moca.retrieval.retriever: unknown retriever 'google'; available: none, bm25, web"
    ):
        create_retriever("google", {}, "moca.retrieval")


def test_none_selects_no_retriever():
    assert create_retriever("none") is None


def test_a_retriever_whose_package_is_missing_names_the_extra_to_install(monkeypatch):
    monkeypatch.setitem(
        retrieval.RETRIEVERS.entries, "ghost", ("socialbench_no_such_module.ghost", "Ghost", "retrieval")
    )
    with pytest.raises(MissingDependency, match=r"pip install 'socialbench\[retrieval\]'"):
        get_retriever_class("ghost")


def test_a_registered_class_that_is_no_retriever_is_refused(monkeypatch):
    monkeypatch.setitem(retrieval.RETRIEVERS.entries, "json", ("json", "JSONDecoder", None))
    with pytest.raises(ConfigError, match="is not a socialbench.core.retrieval.Retriever subclass"):
        get_retriever_class("json")


def test_a_stored_search_is_replayed_by_a_resumed_run_without_searching_again(tmp_path):
    first = Counting()
    stored = cached_search(first, "the referee", 2, RequestCache(tmp_path / "c.sqlite"))
    again = Counting()  # a new process: a new retriever and cache object on the same file
    replayed = cached_search(again, "the referee", 2, RequestCache(tmp_path / "c.sqlite"))
    assert again.searches == [] and replayed.cached and not stored.cached
    assert replayed.passages == stored.passages and replayed.key == stored.key


@pytest.mark.parametrize(
    "query, k, options", [("the referee?", 2, {}), ("the referee", 3, {}), ("the referee", 2, {"x": 1})]
)
def test_the_cache_key_holds_query_k_and_the_retrievers_settings(tmp_path, query, k, options):
    cache = RequestCache(tmp_path / "c.sqlite")
    cached_search(Counting(), "the referee", 2, cache)
    other = Counting(options)
    result = cached_search(other, query, k, cache)
    assert not result.cached and other.searches == [(query, k)]


def test_without_a_cache_every_search_is_made():
    r = Counting()
    cached_search(r, "q", 1, None)
    cached_search(r, "q", 1, None)
    assert len(r.searches) == 2


def test_passages_keep_their_fields_through_the_cache(tmp_path):
    class One(Counting):
        def search(self, query, k):
            return [Passage("a.md#1", "text", title="T", source="a.md", score=0.5)]

    cache = RequestCache(tmp_path / "c.sqlite")
    cached_search(One(), "q", 1, cache)
    assert cached_search(One(), "q", 1, cache).passages == [Passage("a.md#1", "text", "T", "a.md", 0.5)]


class Failing(Retriever):
    """TEST DOUBLE: a search service that fails the searches named in ``fail`` (all when None)."""

    name = "failing"

    def __init__(self, fail=None, fail_after=3):
        super().__init__({}, "moca.retrieval")
        self.fail, self.fail_after = fail, fail_after

    def search(self, query, k):
        if self.fail is None or query in self.fail:
            raise retrieval.RetrievalError(f"web search: search.test could not be reached ({query})")
        return [Passage(doc_id="d", text=query)]


def test_searches_are_counted_made_cached_and_failed(tmp_path):
    from socialbench.core.runner import counting_searches

    cache = RequestCache(tmp_path / "c.sqlite")
    r = Failing(fail={"bad"})
    with counting_searches() as counts:
        cached_search(r, "good", 1, cache)
        cached_search(r, "good", 1, cache)
        with pytest.raises(retrieval.RetrievalError):
            cached_search(r, "bad", 1, cache)
    assert (counts.searches, counts.cached, counts.errors) == (3, 1, 1)
    assert "search.test could not be reached (bad)" in counts.error_examples[0]


def test_failed_searches_in_a_row_stop_the_run_in_one_line():
    r = Failing(fail_after=3)
    for query in ("a", "b"):
        with pytest.raises(retrieval.RetrievalError):
            cached_search(r, query, 1, None)
    with pytest.raises(retrieval.SearchesStopped) as err:
        cached_search(r, "c", 1, None)
    assert not isinstance(err.value, retrieval.RetrievalError)  # no method takes it for one instance's error
    message = str(err.value)
    assert message.startswith("retriever failing: stopped after 3 failed searches in a row") and "\n" not in message


def test_a_search_that_answers_resets_the_count_of_failures_in_a_row():
    r = Failing(fail={"a", "b", "d", "e"}, fail_after=3)
    for query in ("a", "b", "c", "d", "e"):
        try:
            cached_search(r, query, 1, None)
        except retrieval.RetrievalError:
            pass
    assert r.failures_in_a_row == 2


def test_retriever_options_schemas_are_read_without_importing_the_provider():
    import sys

    sys.modules.pop("socialbench.retrievers.web", None)
    schema = retrieval.RETRIEVERS.options_schema("web")
    assert "max_wait_s" in schema["properties"] and schema["additionalProperties"] is False
    assert "socialbench.retrievers.web" not in sys.modules
    assert retrieval.RETRIEVERS.options_schema("bm25")["required"] == ["corpus"]
