"""Bounded retries with exponential backoff and jitter, for the API backends (the SDKs' own are off).

Rate limits, server errors, timeouts, dropped connections and malformed bodies are retried (as
``Retry-After`` says); anything else fails at once. After ``max_retries`` the call gives up
(:class:`GaveUp`). A failure's ``kind`` says the server cannot be used (api.py stops the run on those)."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from socialbench.core.errors import ConfigError, SocialbenchError

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})  # plus every 5xx (500, 502, 503, 504, 529, ...)


class StopRun(SocialbenchError):
    """The server cannot be used (down, refusing the key, wrong address): stop the whole run now."""


class MalformedResponse(Exception):
    """The server answered 2xx with a body that is not the API's response shape."""


class GaveUp(Exception):
    """A call failed for good: not retryable, or still failing after the last retry."""

    def __init__(self, reason: str, attempts: int):
        super().__init__(f"{reason} (gave up after {attempts} attempt{'s' if attempts != 1 else ''})")
        self.attempts = attempts


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5  # retries after the first attempt; 0 disables retrying
    base_delay_s: float = 1.0  # first backoff; doubles with each retry
    max_delay_s: float = 60.0  # cap on one backoff
    max_retry_after_s: float = 600.0  # cap on an honoured Retry-After

    @classmethod
    def from_options(cls, options: Mapping[str, Any], where: str = "options") -> RetryPolicy:
        try:
            policy = cls(
                max_retries=int(options.get("max_retries", cls.max_retries)),
                base_delay_s=float(options.get("retry_base_delay_s", cls.base_delay_s)),
                max_delay_s=float(options.get("retry_max_delay_s", cls.max_delay_s)),
                max_retry_after_s=float(options.get("retry_after_cap_s", cls.max_retry_after_s)),
            )
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: bad retry setting: {exc}") from exc
        if policy.max_retries < 0 or policy.base_delay_s < 0 or policy.max_delay_s < 0:
            raise ConfigError(f"{where}: retry settings must not be negative")
        return policy

    def worst_case_wait_s(self, failures: int) -> float:
        """The longest a run waits in backoffs until ``failures`` attempts in a row have failed (calls one
        after another, no Retry-After): how long a dead server holds a run up before it stops."""
        total, left = 0.0, failures
        while left > 0:  # calls one after another, each retried up to max_retries times
            n = min(left, self.max_retries + 1)
            total += sum(min(self.max_delay_s, self.base_delay_s * 2.0**r) for r in range(n - 1))
            left -= n
        return total

    def backoff_s(self, retry: int, rng: random.Random) -> float:
        """Wait before retry number ``retry`` (0-based): exponential, capped, half of it uniform jitter."""
        delay = min(self.max_delay_s, self.base_delay_s * (2.0**retry))
        return delay / 2.0 + rng.uniform(0.0, delay / 2.0)


@dataclass(frozen=True)
class Failure:
    retryable: bool
    reason: str
    retry_after_s: float | None = None
    #: ``connection``, ``auth`` or ``not_found`` when the failure says the server cannot be used at all.
    kind: str | None = None


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    for name, per_second in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers.get(name)) / per_second)
        except (TypeError, ValueError):  # absent, or not a number
            pass
    try:
        when = email.utils.parsedate_to_datetime(headers.get("retry-after"))
    except (TypeError, ValueError):  # absent, or not a date
        return None
    return max(0.0, when.timestamp() - time.time())


def classify(exc: BaseException) -> Failure:
    """Whether an exception from an SDK call (OpenAI or Anthropic) is worth retrying, and why."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and name != "APIResponseValidationError":
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        retry_after = parse_retry_after(headers)
        kind = {429: "rate limited", 529: "overloaded", 408: "request timeout"}.get(status, "")
        body = getattr(exc, "body", None)
        err = body.get("error") if isinstance(body, Mapping) else None
        body_type = err.get("type") if isinstance(err, Mapping) and isinstance(err.get("type"), str) else None
        if body_type == "overloaded_error":
            kind = "overloaded"
        reason = f"HTTP {status}" + (f" {kind}" if kind else "") + (f" ({body_type})" if body_type and not kind else "")
        retryable = status in RETRYABLE_STATUS or status >= 500
        if not retryable:  # say what the server objected to; it will not change on a retry
            message = " ".join(str(getattr(exc, "message", "") or "").split())
            reason += f": {message[:300]}" if message else ""
        kind = "auth" if status in (401, 403) else "not_found" if status == 404 else None
        return Failure(retryable, reason, retry_after, kind)
    if "Timeout" in name or isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        # a connect timeout (nothing answers there) is a connection failure; a read timeout a slow answer
        if type(exc.__cause__).__name__ == "ConnectTimeout":
            return Failure(True, "connection timeout", kind="connection")
        return Failure(True, "timeout")
    if name == "APIConnectionError" or isinstance(exc, ConnectionError):
        return Failure(True, "connection error", kind="connection")
    if isinstance(exc, (MalformedResponse, json.JSONDecodeError)) or name == "APIResponseValidationError":
        return Failure(True, f"malformed response: {exc}")
    return Failure(False, f"{name}: {exc}")


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    rng: random.Random | None = None,
    on_retry: Callable[[Failure, float], None] | None = None,
) -> tuple[T, int]:
    """Run ``attempt`` until it succeeds: (result, attempts); :class:`GaveUp` when it cannot."""
    rng = rng or random.Random()
    attempts = 0
    while True:
        attempts += 1
        try:
            return await attempt(), attempts
        except (asyncio.CancelledError, StopRun):
            raise
        except Exception as exc:  # classified below; unknown kinds are not retried
            failure = classify(exc)
            if not failure.retryable or attempts > policy.max_retries:
                raise GaveUp(failure.reason, attempts) from exc
            if failure.retry_after_s is not None:
                wait = min(failure.retry_after_s, policy.max_retry_after_s)
            else:
                wait = policy.backoff_s(attempts - 1, rng)
            if on_retry is not None:
                on_retry(failure, wait)
            await sleep(wait)
