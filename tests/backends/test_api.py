"""API keys come only from the environment, never from params."""

from __future__ import annotations

import pytest

from socialbench.backends.api import api_key_from_env, is_loopback
from socialbench.core.errors import ConfigError


def test_key_is_read_from_the_named_variable(monkeypatch):
    monkeypatch.setenv("MY_KEY", "k-123")
    assert api_key_from_env({"api_key_env": "MY_KEY"}, None, "models.m.options", required=True) == "k-123"


def test_key_in_params_is_refused_without_echoing_it():
    with pytest.raises(ConfigError) as info:
        api_key_from_env({"api_key": "sk-secret-value"}, "X", "models.m.options", required=False)
    assert "sk-secret-value" not in str(info.value) and "environment" in str(info.value)


@pytest.mark.parametrize("name", ["api_key", "token", "hf_token", "Authorization", "client_secret"])
def test_every_secret_option_is_refused_with_the_rules_of_params_validation(name):
    with pytest.raises(ConfigError, match=rf"models\.m\.options\.{name}: API keys come only") as info:
        api_key_from_env({name: "sk-secret-value"}, "X", "models.m.options", required=False)
    assert "sk-secret-value" not in str(info.value)


def test_a_null_key_variable_means_no_key_and_flags_are_not_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k-default")
    options = {"api_key_env": None, "use_auth_token": True, "max_tokens_param": "max_tokens"}
    assert api_key_from_env(options, "OPENAI_API_KEY", "models.m.options", required=True) is None


def test_the_env_name_rule_is_the_one_of_params_validation():
    import socialbench.backends.api as api
    import socialbench.core.secrets as secrets

    assert not hasattr(api, "_ENV_NAME") and api.holds_secret is secrets.holds_secret


def test_env_name_that_looks_like_a_key_is_refused():
    with pytest.raises(ConfigError) as info:
        api_key_from_env({"api_key_env": "sk-ant-123-abc"}, None, "models.m.options", required=False)
    assert "sk-ant-123-abc" not in str(info.value)


def test_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("ABSENT_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"\$ABSENT_KEY"):
        api_key_from_env({"api_key_env": "ABSENT_KEY"}, None, "models.m.options", required=True)


def test_loopback_detection():
    assert is_loopback("http://127.0.0.1:8000/v1") and is_loopback("http://localhost:9/v1")
    assert not is_loopback("https://api.openai.com/v1") and not is_loopback("http://127.0.0.1.evil.com/v1")


@pytest.mark.parametrize("api,backend_name", [("openai", "openai_compat"), ("anthropic", "anthropic")])
def test_key_never_reaches_logs_errors_or_the_cache(api, backend_name, monkeypatch, tmp_path, caplog):
    import logging

    from socialbench.core.backend import ModelSpec, create_backend
    from socialbench.core.cache import RequestCache
    from tests.helpers.loopback import Fault, LoopbackServer
    from tests.helpers.moca_requests import moca_request, run_through_cache

    secret = "sk-SENTINEL-5f3a9c-never-write-me"
    monkeypatch.setenv("SENTINEL_KEY", secret)
    with LoopbackServer(api, api_key=secret) as srv:
        srv.scripted.extend([Fault(status=429), Fault(status=500), Fault(status=500)])  # one call fails for good
        spec = ModelSpec(
            name="m",
            backend=backend_name,
            model_id="x",
            options={"base_url": srv.url, "api_key_env": "SENTINEL_KEY", "max_retries": 1, "retry_base_delay_s": 0.01},
        )
        cache = RequestCache(tmp_path / "cache.sqlite")
        with caplog.at_level(logging.DEBUG):
            out, called = run_through_cache(create_backend(spec), [moca_request(0), moca_request(1)], cache)
        cache.close()
        received = [r.headers for r in srv.completions()]
    assert called == 2 and any(r.error for r in out) and any(r.error is None for r in out)
    assert any(secret in str(h) for h in received)  # the key was used...
    written = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert secret.encode() not in written  # ...but is not in the cache files,
    assert all(secret not in (r.error or "") for r in out)  # the errors,
    assert all(secret not in rec.getMessage() for rec in caplog.records)  # or the logs


# ---- fail fast on a dead or misconfigured server (issue 12, point 7) ---------------------------------
def dead_port() -> int:
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api_spec(backend_name: str, base_url: str, **options):
    from socialbench.core.backend import ModelSpec

    return ModelSpec(
        name="m",
        backend=backend_name,
        model_id="x",
        concurrency=1,
        options={"base_url": base_url, "retry_base_delay_s": 0.01, **options},
    )


@pytest.mark.parametrize("backend_name", ["openai_compat", "anthropic"])
def test_a_dead_server_stops_the_run_after_five_attempts_in_a_row(backend_name, tmp_path):
    from socialbench.backends.retry import StopRun
    from socialbench.core.backend import create_backend
    from socialbench.core.cache import RequestCache
    from tests.helpers.moca_requests import moca_request, run_through_cache

    url = f"http://127.0.0.1:{dead_port()}" + ("/v1" if backend_name == "openai_compat" else "")
    backend = create_backend(api_spec(backend_name, url))
    with pytest.raises(StopRun) as exc:
        run_through_cache(backend, [moca_request(i) for i in range(30)], RequestCache(tmp_path / "c.sqlite"))
    assert backend.attempts == 5  # not 30 instances x 6 attempts
    message = str(exc.value)
    assert message.startswith(f"models.m: stopped after 5 failed attempts in a row at {url} (connection error)")
    assert "\n" not in message and "is the server running" in message


def test_with_the_default_retry_settings_a_dead_server_holds_a_run_up_for_seconds():
    from socialbench.backends.retry import RetryPolicy

    # five refused connections in a row: backoffs of at most 1 + 2 + 4 + 8 s (was 6 attempts x 72 instances)
    assert RetryPolicy().worst_case_wait_s(5) == 15.0


def test_a_refused_key_stops_the_run_and_says_to_check_it(monkeypatch, tmp_path):
    from socialbench.backends.retry import StopRun
    from socialbench.core.backend import create_backend
    from socialbench.core.cache import RequestCache
    from tests.helpers.loopback import LoopbackServer
    from tests.helpers.moca_requests import moca_request, run_through_cache

    monkeypatch.setenv("WRONG_KEY", "sk-wrong")
    with LoopbackServer("openai", api_key="sk-right") as srv:
        backend = create_backend(api_spec("openai_compat", srv.url, api_key_env="WRONG_KEY"))
        with pytest.raises(StopRun, match=r"HTTP 401.*check the key \(models\.m\.options\.api_key_env\)"):
            run_through_cache(backend, [moca_request(i) for i in range(20)], RequestCache(tmp_path / "c.sqlite"))
        assert len(srv.completions()) == 5


def test_an_answer_between_failures_resets_the_count(tmp_path):
    from socialbench.core.backend import create_backend
    from socialbench.core.cache import RequestCache
    from tests.helpers.loopback import Fault, LoopbackServer
    from tests.helpers.moca_requests import moca_request, run_through_cache

    with LoopbackServer("openai") as srv:
        srv.scripted.extend([Fault(status=404)] * 4 + [Fault()] + [Fault(status=404)] * 4)
        backend = create_backend(api_spec("openai_compat", srv.url))
        out, _ = run_through_cache(backend, [moca_request(i) for i in range(12)], RequestCache(tmp_path / "c.sqlite"))
    assert sum(r.error is not None for r in out) == 8  # recorded as failed calls; the run went on


@pytest.mark.parametrize("backend_name", ["openai_compat", "anthropic"])
def test_a_retry_after_longer_than_the_cap_stops_the_run_at_once_naming_the_host_and_the_advice(backend_name, tmp_path):
    from socialbench.backends.retry import StopRun
    from socialbench.core.backend import create_backend
    from socialbench.core.cache import RequestCache
    from tests.helpers.loopback import Fault, LoopbackServer
    from tests.helpers.moca_requests import moca_request, run_through_cache

    api = "openai" if backend_name == "openai_compat" else "anthropic"
    with LoopbackServer(api) as srv:
        srv.scripted.extend([Fault(status=429, headers={"Retry-After": "3600"})] * 3)
        backend = create_backend(api_spec(backend_name, srv.url, retry_after_cap_s=60))
        with pytest.raises(StopRun) as exc:
            run_through_cache(backend, [moca_request(i) for i in range(5)], RequestCache(tmp_path / "c.sqlite"))
        assert len(srv.completions()) == 1  # no wait, no retry: the first answer says the server is busy for an hour
    message = str(exc.value)
    assert "asks to wait 3600 s (Retry-After" in message and srv.url.split("//")[1].split("/")[0] in message
    assert "retry_after_cap_s (60 s): run again later" in message and "\n" not in message


def test_the_bound_is_an_option_and_must_be_at_least_one():
    from socialbench.core.backend import create_backend

    assert (
        create_backend(api_spec("openai_compat", "http://127.0.0.1:9/v1", max_consecutive_failures=2)).fail_after == 2
    )
    with pytest.raises(ConfigError, match=r"max_consecutive_failures must be a whole number >= 1"):
        create_backend(api_spec("openai_compat", "http://127.0.0.1:9/v1", max_consecutive_failures=0))


# ---- keys go only where they are meant (issue 12, point 9) -------------------------------------------
PLANTED = {
    "OPENAI_API_KEY": "sk-planted-openai-key",
    "OPENAI_ADMIN_KEY": "sk-planted-admin-key",
    "OPENAI_ORG_ID": "org-planted",
    "OPENAI_PROJECT_ID": "proj-planted",
    "OPENAI_CUSTOM_HEADERS": "X-Planted: planted-openai-header",
    "ANTHROPIC_API_KEY": "sk-ant-planted-key",
    "ANTHROPIC_AUTH_TOKEN": "planted-anthropic-token",
    "ANTHROPIC_CUSTOM_HEADERS": "X-Planted: planted-anthropic-header",
}


@pytest.fixture
def planted(monkeypatch):
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    return PLANTED


@pytest.mark.parametrize("api,backend_name", [("openai", "openai_compat"), ("anthropic", "anthropic")])
def test_no_planted_key_or_header_reaches_a_loopback_server_without_api_key_env(api, backend_name, planted):
    from socialbench.core.backend import create_backend
    from tests.helpers.loopback import LoopbackServer
    from tests.helpers.moca_requests import moca_request

    with LoopbackServer(api) as srv:
        resp = create_backend(api_spec(backend_name, srv.url)).complete(moca_request(0))
        (received,) = srv.completions()
    assert resp.error is None
    sent = " ".join(f"{k}: {v}" for k, v in received.headers.items())
    assert not [name for name, value in planted.items() if value.split(": ")[-1] in sent], sent


@pytest.mark.parametrize("api,backend_name", [("openai", "openai_compat"), ("anthropic", "anthropic")])
def test_a_configured_key_variable_is_sent_to_the_configured_server(api, backend_name, planted, monkeypatch):
    from socialbench.core.backend import create_backend
    from tests.helpers.loopback import LoopbackServer
    from tests.helpers.moca_requests import moca_request

    monkeypatch.setenv("MY_SERVER_KEY", "sk-for-my-server")
    with LoopbackServer(api, api_key="sk-for-my-server") as srv:
        resp = create_backend(api_spec(backend_name, srv.url, api_key_env="MY_SERVER_KEY")).complete(moca_request(0))
        (received,) = srv.completions()
    assert resp.error is None and "sk-for-my-server" in str(received.headers)
    assert not any(
        v in str(received.headers) for v in ("sk-planted-openai-key", "sk-ant-planted-key", "planted-anthropic-token")
    )


def test_the_sdk_variables_are_back_in_the_environment_after_the_client_is_built(planted):
    import os

    from socialbench.core.backend import create_backend
    from tests.helpers.moca_requests import moca_request

    resp = create_backend(api_spec("openai_compat", f"http://127.0.0.1:{dead_port()}/v1", max_retries=0)).complete(
        moca_request(0)
    )
    assert resp.error is not None  # the client was built (and used)
    assert {k: os.environ.get(k) for k in planted} == planted


@pytest.mark.parametrize(
    "backend_name, base_url, expected",
    [
        ("openai_compat", "https://api.openai.com/v1", "sk-planted-openai-key"),
        ("openai_compat", "https://my-vllm.example.org/v1", None),
        ("openai_compat", "http://api.openai.com/v1", None),  # not https: not the provider's API
        ("openai_compat", "https://api.openai.com.evil.example/v1", None),
        ("anthropic", None, "sk-ant-planted-key"),  # the SDK's default host
        ("anthropic", "https://api.anthropic.com", "sk-ant-planted-key"),
        ("anthropic", "https://gateway.example.org", None),
    ],
)
def test_a_provider_key_is_read_by_default_only_for_the_providers_own_host(backend_name, base_url, expected, planted):
    from socialbench.core.backend import ModelSpec, create_backend

    options = {"base_url": base_url} if base_url else {}
    backend = create_backend(ModelSpec(name="m", backend=backend_name, model_id="x", options=options))
    assert backend._api_key == expected


def test_the_provider_rule_is_a_pure_function_of_the_options_and_the_url():
    from socialbench.backends.api import key_env_for

    assert key_env_for({}, "OPENAI_API_KEY", "https://api.openai.com/v1") == "OPENAI_API_KEY"
    assert key_env_for({}, "OPENAI_API_KEY", "http://127.0.0.1:8000/v1") is None
    assert (
        key_env_for({"api_key_env": "OPENAI_API_KEY"}, "OPENAI_API_KEY", "http://127.0.0.1:8000/v1") == "OPENAI_API_KEY"
    )
    assert key_env_for({}, "VLLM_API_KEY", "https://gpu-box.example/v1") == "VLLM_API_KEY"  # vLLM's own variable


# ---- a redirect to another host carries no credential (issue 33, class 2) --------------------------------
class _Recorder:
    """TEST DOUBLE: two loopback HTTP servers; the first answers every request with a 307 redirect to the
    second under another host name (localhost instead of 127.0.0.1), which records the headers it got."""

    def __enter__(self):
        import http.server
        import threading

        got: list[dict[str, str]] = []
        self.got = got

        class Target(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                got.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.target = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Target)
        port = self.target.server_address[1]

        class Redirect(Target):
            def do_POST(self):  # noqa: N802
                self.send_response(307)
                self.send_header("Location", f"http://localhost:{port}{self.path}")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
        for server in (self.target, self.origin):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.origin.server_address[1]}/v1"
        return self

    def __exit__(self, *exc):
        for server in (self.target, self.origin):
            server.shutdown()
            server.server_close()


@pytest.mark.parametrize("backend_name", ["openai_compat", "anthropic"])
def test_a_redirect_to_another_host_carries_no_key(backend_name, monkeypatch):
    from socialbench.core.backend import ModelSpec, create_backend
    from tests.helpers.moca_requests import moca_request

    monkeypatch.setenv("SB_TEST_KEY", "sentinel-api-key")
    with _Recorder() as servers:
        options = {"base_url": servers.url, "api_key_env": "SB_TEST_KEY", "max_retries": 0, "timeout": 5}
        backend = create_backend(ModelSpec(name="m", backend=backend_name, model_id="x", options=options))
        try:
            response = backend.complete(moca_request(0))
        finally:
            backend.close()
    assert response.error and servers.got, "the redirect was followed to the other host"
    assert not any("sentinel-api-key" in value for headers in servers.got for value in headers.values())


def test_the_credential_guard_strips_credential_headers_from_a_request_to_another_host_only():
    import asyncio

    import httpx

    from socialbench.backends.api import credential_guard

    (strip,) = credential_guard("https://gateway.example/v1")["request"]
    headers = {"x-api-key": "k", "Authorization": "Bearer k", "Cookie": "c", "accept": "application/json"}
    away = httpx.Request("POST", "https://elsewhere.example/v1/messages", headers=headers)
    home = httpx.Request("POST", "https://gateway.example/v1/messages", headers=headers)
    for request in (away, home):
        asyncio.run(strip(request))
    assert not {"x-api-key", "authorization", "cookie"} & set(away.headers) and away.headers["accept"]
    assert home.headers["x-api-key"] == "k" and home.headers["authorization"] == "Bearer k"
