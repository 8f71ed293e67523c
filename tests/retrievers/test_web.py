"""The web-search client (socialbench.retrievers.web, the Brave Search API) against a loopback server
speaking the API's protocol (tests/helpers/brave_loopback.py)."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from socialbench.core.cache import RequestCache
from socialbench.core.errors import ConfigError
from socialbench.core.retrieval import RetrievalError, SearchesStopped, cached_search, create_retriever
from socialbench.retrievers.web import retry_after_s
from tests.helpers.brave_loopback import BraveServer, Fault

KEY = "test-brave-key-5f1c"
ENV = "SB_TEST_BRAVE_KEY"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    return KEY


def web(server_url, **options):
    return create_retriever("web", {"api_key_env": ENV, "base_url": server_url, "max_retries": 2, **options})


def test_results_come_back_as_passages_in_the_apis_order_without_markup(key):
    with BraveServer(token=KEY) as server:
        hits = web(server.url).search("the referee", 2)
    assert [p.doc_id for p in hits] == ["https://example.org/1", "https://example.org/2"]
    assert hits[0].text == "About the referee: passage 1." and hits[0].title == "Result 1 for the referee"


def test_the_request_speaks_the_apis_protocol(key):
    with BraveServer(token=KEY) as server:
        web(server.url, country="GB").search("the referee", 3)
    (req,) = server.requests
    assert req.path == "/res/v1/web/search"
    assert req.params == {"q": "the referee", "count": "3", "text_decorations": "false", "country": "GB"}
    assert req.headers["x-subscription-token"] == KEY and req.headers["accept"] == "application/json"


def test_a_missing_key_is_a_one_line_config_error_naming_the_variable(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(ConfigError) as err:
        create_retriever("web", {"api_key_env": ENV}, "moca.retrieval")
    assert ENV in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith("moca.retrieval: retriever web needs a Brave Search API key")


def test_a_redirect_is_not_followed_so_the_key_never_reaches_another_host(key):
    with BraveServer(token=KEY) as other, BraveServer(token=KEY, faults=[Fault(redirect=other.url)]) as server:
        with pytest.raises(RetrievalError, match="redirect"):
            web(server.url).search("q", 1)
    assert other.requests == []


def test_a_plain_http_url_is_refused_unless_it_is_loopback(key):
    with pytest.raises(ConfigError, match="must be an https URL"):
        web("http://search.example.org/res/v1/web/search")


def test_a_refused_key_stops_the_run_and_the_message_holds_no_key(key):
    with BraveServer(token="another-key") as server:
        with pytest.raises(ConfigError, match=r"key was refused by 127.0.0.1 \(HTTP 401") as err:
            web(server.url).search("q", 1)
    assert KEY not in str(err.value)


def test_a_rate_limited_search_is_retried(key):
    faults = [Fault(status=429, headers={"Retry-After": "0"})]
    with BraveServer(token=KEY, faults=faults) as server:
        hits = web(server.url).search("q", 1)
    assert len(server.requests) == 2 and len(hits) == 1


def test_a_client_error_is_a_retrieval_error_with_the_apis_detail(key):
    with BraveServer(token=KEY, faults=[Fault(status=422)]) as server:
        with pytest.raises(RetrievalError, match="HTTP 422 from 127.0.0.1: validation"):
            web(server.url).search("q", 1)
    assert len(server.requests) == 1


def test_an_answer_that_is_not_json_is_a_retrieval_error(key):
    with BraveServer(token=KEY, faults=[Fault(malformed=True)]) as server:
        with pytest.raises(RetrievalError, match="not JSON"):
            web(server.url).search("q", 1)


def test_the_key_is_in_no_identity_cache_entry_repr_or_log(key, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "c.sqlite"
    with BraveServer(token=KEY) as server:
        r = web(server.url)
        cached_search(r, "the referee", 2, RequestCache(path))
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert KEY.encode() not in stored and b"the referee" in stored
    assert KEY not in repr(r) and KEY not in str(r.identity()) and KEY not in caplog.text


def test_the_key_variables_name_does_not_change_the_identity(key, monkeypatch):
    monkeypatch.setenv("SB_OTHER_KEY", KEY)
    with BraveServer(token=KEY) as server:
        a = web(server.url)
        b = create_retriever("web", {"api_key_env": "SB_OTHER_KEY", "base_url": server.url, "max_retries": 2})
    assert a.identity() == b.identity()


def test_the_brave_key_is_not_sent_to_another_host_unless_params_name_its_variable(monkeypatch):
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "sentinel-brave-key")
    with pytest.raises(ConfigError, match="127.0.0.1 is not the Brave Search API") as exc:
        create_retriever("web", {"base_url": "http://127.0.0.1:9/search"}, "moca.retrieval")
    assert "moca.retrieval.options.api_key_env" in str(exc.value) and "sentinel" not in str(exc.value)
    named = create_retriever("web", {"base_url": "http://127.0.0.1:9/s", "api_key_env": "BRAVE_SEARCH_API_KEY"})
    assert named.host == "127.0.0.1"  # params name both the host and the variable: the user's choice
    assert create_retriever("web", {}).host == "api.search.brave.com"


def test_a_base_url_with_credentials_is_never_shown(monkeypatch):
    monkeypatch.setenv(ENV, "k")
    with pytest.raises(ConfigError) as exc:
        create_retriever("web", {"api_key_env": ENV, "base_url": "ftp://u:sentinel-pw@h/s?token=sentinel-tok"})
    assert "sentinel" not in str(exc.value)
    retriever = create_retriever(
        "web", {"api_key_env": ENV, "base_url": "https://u:sentinel-pw@h/s?token=sentinel-tok"}
    )
    assert "sentinel" not in repr(retriever)


def test_a_retry_after_longer_than_the_ceiling_stops_the_run_at_once_naming_host_and_advice(key):
    faults = [Fault(status=429, headers={"Retry-After": "3600"})]
    started = time.monotonic()
    with BraveServer(token=KEY, faults=faults) as server:
        with pytest.raises(SearchesStopped) as err:
            web(server.url).search("q", 1)
    assert time.monotonic() - started < 5 and len(server.requests) == 1
    message = str(err.value)
    assert "127.0.0.1 answered HTTP 429 and asks to wait 3600 s (Retry-After)" in message
    assert "longer than retrieval.options.max_wait_s (60 s)" in message and "Rerun later" in message
    assert "\n" not in message and KEY not in message


def test_a_retry_after_within_the_ceiling_is_waited_for(key, monkeypatch):
    waits = []
    monkeypatch.setattr("socialbench.retrievers.web.time.sleep", waits.append)
    faults = [Fault(status=429, headers={"Retry-After": "7"})]
    with BraveServer(token=KEY, faults=faults) as server:
        web(server.url, max_wait_s=10).search("q", 1)
    assert waits == [7.0] and len(server.requests) == 2


def test_the_backoff_is_capped_at_max_wait_s(key, monkeypatch):
    waits = []
    monkeypatch.setattr("socialbench.retrievers.web.time.sleep", waits.append)
    faults = [Fault(status=500), Fault(status=500), Fault(status=500)]
    with BraveServer(token=KEY, faults=faults) as server:
        web(server.url, max_retries=3, max_wait_s=1.5).search("q", 1)
    assert waits == [1.0, 1.5, 1.5]


def test_retry_after_is_read_as_seconds_or_an_http_date():
    assert retry_after_s("3600") == 3600.0 and retry_after_s(" 2.5 ") == 2.5
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_s("soon") is None and retry_after_s(None) is None


def test_a_closed_port_fails_within_seconds_naming_the_host(key):
    with socket.socket() as s:  # a port nobody listens on: bound, then closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(RetrievalError, match=r"web search: 127.0.0.1 could not be reached"):
        web(f"http://127.0.0.1:{port}/res/v1/web/search", max_retries=1, max_wait_s=0.5, timeout_s=2).search("q", 1)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("option", "value"),
    [("timeout_s", 0), ("max_retries", -1), ("max_wait_s", "a minute"), ("max_consecutive_failures", 0)],
)
def test_a_bad_waiting_option_is_a_config_error_naming_it(key, option, value):
    with pytest.raises(ConfigError, match=rf"^moca.retrieval.options.{option}: expected"):
        create_retriever("web", {"api_key_env": ENV, option: value}, "moca.retrieval")
