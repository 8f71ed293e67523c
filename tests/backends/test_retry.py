"""Retry policy: which failures are retried, how long it waits, when it gives up."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time

import pytest

from socialbench.backends.retry import (
    GaveUp,
    MalformedResponse,
    RetryPolicy,
    call_with_retries,
    classify,
    parse_retry_after,
)
from socialbench.core.errors import ConfigError


class _Response:
    def __init__(self, headers):
        self.headers = headers


class StatusError(Exception):
    """Shaped like the SDKs' APIStatusError: status_code, response.headers, body."""

    def __init__(self, status, headers=None, body=None):
        super().__init__(f"Error code: {status}")
        self.status_code = status
        self.response = _Response(headers or {})
        self.body = body
        self.message = f"Error code: {status}"


class APITimeoutError(Exception):
    pass


def _run(attempt, policy, **kw):
    sleeps: list[float] = []

    async def fake_sleep(s):
        sleeps.append(s)

    result = asyncio.run(call_with_retries(attempt, policy, sleep=fake_sleep, rng=random.Random(0), **kw))
    return result, sleeps


def _failing(errors, result="ok"):
    calls = {"n": 0}

    async def attempt():
        calls["n"] += 1
        if errors:
            raise errors.pop(0)
        return result

    return attempt, calls


@pytest.mark.parametrize("status", [429, 500, 502, 503, 529, 408])
def test_rate_limits_server_errors_and_overload_are_retryable(status):
    assert classify(StatusError(status)).retryable


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retryable(status):
    assert not classify(StatusError(status)).retryable


def test_timeouts_and_malformed_bodies_are_retryable():
    assert classify(APITimeoutError()).reason == "timeout"
    assert classify(MalformedResponse("no choices")).retryable
    assert classify(json.JSONDecodeError("x", "doc", 0)).retryable


def test_anthropic_overloaded_body_is_named():
    failure = classify(StatusError(529, body={"type": "error", "error": {"type": "overloaded_error"}}))
    assert failure.retryable and "overloaded" in failure.reason


def test_retry_after_seconds_ms_and_http_date():
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < parse_retry_after({"retry-after": date}) <= 31
    assert parse_retry_after({}) is None


def test_retry_after_header_sets_the_wait():
    attempt, calls = _failing([StatusError(429, {"retry-after": "3"})])
    (result, attempts), sleeps = _run(attempt, RetryPolicy(max_retries=2, base_delay_s=0.01))
    assert (result, attempts, sleeps) == ("ok", 2, [3.0])


def test_backoff_is_exponential_with_jitter_and_capped():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(1)
    waits = [policy.backoff_s(k, rng) for k in range(6)]
    for k, w in enumerate(waits):
        full = min(8.0, 2.0**k)
        assert full / 2 <= w <= full
    assert max(waits) <= 8.0


def test_gives_up_after_max_retries():
    attempt, calls = _failing([StatusError(500) for _ in range(10)])
    with pytest.raises(GaveUp) as info:
        _run(attempt, RetryPolicy(max_retries=3, base_delay_s=0.01))
    assert calls["n"] == 4 and info.value.attempts == 4 and "HTTP 500" in str(info.value)


def test_non_retryable_error_is_not_retried():
    attempt, calls = _failing([StatusError(400)])
    with pytest.raises(GaveUp):
        _run(attempt, RetryPolicy(max_retries=5))
    assert calls["n"] == 1


def test_bad_retry_options_are_config_errors():
    with pytest.raises(ConfigError):
        RetryPolicy.from_options({"max_retries": -1})
    assert RetryPolicy.from_options({"max_retries": 2}).max_retries == 2
