"""Which MLflow tracking store a command opens, and whether it can be reached: params'
``mlflow.tracking_uri`` or ``MLFLOW_TRACKING_URI``, shown with its secrets masked, a network store's
connect bounded by params ``waits`` (docs/security.md, "Waits")."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

from socialbench.core.config import tracking_uri_problem
from socialbench.core.errors import ConfigError
from socialbench.core.secrets import redact_url, url_has_secret

#: The environment variable that overrides params' ``mlflow.tracking_uri`` (MLflow's own name).
TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"
#: MLflow's own opt-in to its file store (in maintenance mode): a file store in the environment's URI is
#: taken only with it set; params never name one (core.config.tracking_uri_problem).
FILE_STORE_ENV = "MLFLOW_ALLOW_FILE_STORE"


def resolve_tracking_uri(mlflow_params: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> str:
    """The tracking store: ``MLFLOW_TRACKING_URI``, else params' ``mlflow.tracking_uri`` (no password: git has it)."""
    env = os.environ if environ is None else environ
    from_env = (env.get(TRACKING_URI_ENV) or "").strip()
    if from_env:  # checked as params' is at load (core.config.tracking_uri_problem), naming the variable
        allowed = (env.get(FILE_STORE_ENV) or "").strip().lower() in ("1", "true", "yes", "on")
        problem = tracking_uri_problem(from_env, allow_file_store=allowed)
        if problem:
            opt_out = f"; or set {FILE_STORE_ENV}=true to open it anyway" if "file store" in problem else ""
            raise ConfigError(f"{TRACKING_URI_ENV}: {problem}{opt_out}")
        return from_env
    uri = str(mlflow_params["tracking_uri"])
    if url_has_secret(uri):
        raise ConfigError(
            f"params mlflow.tracking_uri: holds a password ({redact_url(uri)}); params are tracked by git and"
            f" DVC, so give a store with a password in the environment ({TRACKING_URI_ENV}) instead"
        )
    return uri


#: Tracking stores behind a network connection, by scheme (before any ``+driver``): their default port.
NETWORK_STORES = {"http": 80, "https": 443, "postgresql": 5432, "postgres": 5432, "mysql": 3306, "mssql": 1433}


def store_endpoint(uri: str) -> tuple[str, int] | None:
    """(host, port) a tracking store is reached at, or None for a local one (a file, sqlite) (pure)."""
    import urllib.parse

    parts = urllib.parse.urlsplit(uri)
    default = NETWORK_STORES.get(parts.scheme.lower().split("+", 1)[0])
    if default is None or not parts.hostname:
        return None
    try:
        return parts.hostname, parts.port or default
    except ValueError:  # a port that is not a number: MLflow's own message says so
        return None


def with_connect_timeout(uri: str, timeout_s: float) -> str:
    """A PostgreSQL store's URI with libpq's ``connect_timeout`` (whole seconds) unless it sets one, so
    MLflow's SQLAlchemy engine gives up on a server that does not answer (pure)."""
    import math
    import urllib.parse

    parts = urllib.parse.urlsplit(uri)
    if parts.scheme.lower().split("+", 1)[0] not in ("postgresql", "postgres"):
        return uri
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    if any(k == "connect_timeout" for k, _ in query):
        return uri
    query.append(("connect_timeout", str(max(1, math.ceil(timeout_s)))))
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def check_store_reachable(uri: str, timeout_s: float) -> None:
    """A TCP connect to a network tracking store within ``timeout_s``, else a one-line ConfigError naming
    the store (redacted), before MLflow's client, which retries for minutes, opens it."""
    endpoint = store_endpoint(uri)
    if endpoint is None:
        return
    try:
        socket.create_connection(endpoint, timeout=timeout_s).close()
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise ConfigError(
            f"MLflow tracking store {redact_url(uri)}: cannot connect to {endpoint[0]}:{endpoint[1]} within"
            f" {timeout_s:g} s ({reason}); is the server running, and is the URI right? (the wait is"
            " waits.connect_s in params)"
        ) from None


def tracking_store_uri(params: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> str:
    """The tracking store a command opens (:func:`resolve_tracking_uri`), its waits (MLflow's HTTP timeout
    and retries, libpq's ``connect_timeout``, a first TCP connect) bounded by params ``waits``."""
    uri = resolve_tracking_uri(params["mlflow"], environ)
    waits = params.get("waits") or {}
    connect_s = float(waits.get("connect_s", 5))
    # MLflow reads these at each request (its own defaults retry for minutes); the process is a command's.
    os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] = str(int(max(1, waits.get("mlflow_http_timeout_s", 60))))
    os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] = str(int(waits.get("mlflow_http_retries", 2)))
    check_store_reachable(uri, connect_s)
    return with_connect_timeout(uri, connect_s)
