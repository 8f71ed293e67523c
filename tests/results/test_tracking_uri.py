"""Which tracking store a command opens and whether it is reachable (socialbench.results.tracking_uri)."""

import os
import socket

import pytest


def closed_port() -> int:
    """A port nobody listens on: bound, then closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("scheme", ["http", "postgresql+psycopg"])
def test_a_tracking_store_on_a_closed_port_fails_within_seconds_naming_it_redacted(scheme, monkeypatch):
    import time

    from socialbench.core.errors import ConfigError
    from socialbench.results.tracking_uri import tracking_store_uri

    uri = f"{scheme}://user:hunter2@127.0.0.1:{closed_port()}/db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    started = time.monotonic()
    with pytest.raises(ConfigError) as err:
        tracking_store_uri({"mlflow": {"tracking_uri": "sqlite:///mlflow.db"}, "waits": {"connect_s": 2}})
    assert time.monotonic() - started < 5
    message = str(err.value)
    assert message.startswith(f"MLflow tracking store {scheme}://***@127.0.0.1:") and "hunter2" not in message
    assert "cannot connect to 127.0.0.1:" in message and "waits.connect_s" in message


def test_mlflows_http_client_gets_the_timeout_and_retries_of_params(monkeypatch, tmp_path):
    from socialbench.results.tracking_uri import tracking_store_uri

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "7")
    waits = {"connect_s": 5, "mlflow_http_timeout_s": 30, "mlflow_http_retries": 1}
    tracking_store_uri({"mlflow": {"tracking_uri": f"sqlite:///{tmp_path}/m.db"}, "waits": waits})
    assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "30" and os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == "1"


def test_a_postgresql_store_gets_a_connect_timeout_unless_it_names_one():
    from socialbench.results.tracking_uri import with_connect_timeout

    assert with_connect_timeout("postgresql+psycopg://u@h/db", 4.2) == "postgresql+psycopg://u@h/db?connect_timeout=5"
    assert with_connect_timeout("postgresql://u@h/db?connect_timeout=9", 4) == "postgresql://u@h/db?connect_timeout=9"
    assert with_connect_timeout("http://h:5000", 4) == "http://h:5000"


@pytest.mark.parametrize(
    ("uri", "endpoint"),
    [
        ("http://h", ("h", 80)),
        ("https://h:8443/x", ("h", 8443)),
        ("postgresql+psycopg://u:p@db/x", ("db", 5432)),
        ("sqlite:///mlflow.db", None),
        ("mlruns", None),
    ],
)
def test_store_endpoint_names_host_and_port_of_a_network_store(uri, endpoint):
    from socialbench.results.tracking_uri import store_endpoint

    assert store_endpoint(uri) == endpoint


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("ftp://h/store", "MLflow has no tracking store for the scheme 'ftp'"),
        ("sqlite://x.db", "a sqlite store is sqlite:///"),
        ("file:///tmp/mlruns", "names MLflow's file store"),
    ],
)
def test_the_environments_tracking_uri_is_checked_as_params_is_naming_the_variable(uri, says, monkeypatch):
    """Issue 38: MLFLOW_TRACKING_URI=ftp://... was a traceback of MLflow's."""
    from socialbench.core.errors import ConfigError
    from socialbench.results.tracking_uri import resolve_tracking_uri

    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    with pytest.raises(ConfigError, match=r"^MLFLOW_TRACKING_URI: ") as err:
        resolve_tracking_uri({"tracking_uri": "sqlite:///mlflow.db"})
    assert says in str(err.value)


def test_a_file_store_in_the_environment_is_taken_where_mlflows_opt_in_is_set(monkeypatch):
    from socialbench.results.tracking_uri import resolve_tracking_uri

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "file:///tmp/mlruns")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    assert resolve_tracking_uri({"tracking_uri": "sqlite:///mlflow.db"}) == "file:///tmp/mlruns"
