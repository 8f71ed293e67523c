"""API keys come only from the environment, never from params."""

from __future__ import annotations

import pytest

from socialbench.backends.api import api_key_from_env, is_loopback
from socialbench.errors import ConfigError


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
    import socialbench.secrets as secrets

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

    from socialbench.backends.base import ModelSpec, create_backend
    from socialbench.cache import RequestCache
    from tests.helpers.loopback import Fault, LoopbackServer
    from tests.helpers.moca_requests import moca_request, run_through_cache

    secret = "sk-SENTINEL-5f3a9c-never-write-me"
    monkeypatch.setenv("SENTINEL_KEY", secret)
    with LoopbackServer(api, api_key=secret) as srv:
        srv.scripted.extend([Fault(status=429), Fault(status=500), Fault(status=500)])  # one call fails for good
        spec = ModelSpec(name="m", backend=backend_name, model_id="x", options={
            "base_url": srv.url, "api_key_env": "SENTINEL_KEY", "max_retries": 1, "retry_base_delay_s": 0.01})  # fmt: skip
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
