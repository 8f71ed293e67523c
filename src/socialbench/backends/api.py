"""What the HTTP API backends share: keys from the environment, an async client with bounded
concurrency per model, retries, and failures turned into error responses.

A run stops (:class:`~socialbench.backends.retry.StopRun`) after ``max_consecutive_failures`` (default 5)
attempts in a row found no usable server (no connection, 401/403, 404). Keys go only where they are
meant (:data:`PROVIDER_KEYS`), and the SDKs' own environment variables are hidden from a client built
for another server. Subclasses implement ``_make_client``, ``_prepare`` and ``_send`` (one attempt)."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar
from urllib.parse import urlsplit

from socialbench.backends.images import NO_LIMITS, EncodedImage, ImageChanged, ImageLimits, encode_for_api, images_sent
from socialbench.backends.retry import Failure, GaveUp, RetryPolicy, StopRun, call_with_retries, classify
from socialbench.core.backend import Backend, BackendContext, ModelSpec, Request, Response, check_requests
from socialbench.core.errors import ConfigError
from socialbench.core.secrets import bad_env_name, holds_secret, redact_text, redact_url

log = logging.getLogger("socialbench.backends")

_LOOPBACK = re.compile(r"^https?://(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?(/|$)")

#: A provider's own key variable -> the only hosts (https) it is sent to when params name no variable.
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "OPENAI_API_KEY": ("api.openai.com",),
    "ANTHROPIC_API_KEY": ("api.anthropic.com",),
}

#: Environment variables the SDK clients read by themselves (keys, tokens, organisation, extra
#: headers, base URL): hidden while a client for a server other than the provider's is built.
SDK_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_CUSTOM_HEADERS",
    "OPENAI_BASE_URL",
    "OPENAI_WEBHOOK_SECRET",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
    "ANTHROPIC_WEBHOOK_SIGNING_KEY",
)
_ENV_LOCK = threading.Lock()

#: Request headers that carry a credential: never sent to a host other than the configured one (a
#: redirect to another host arrives without them; httpx itself drops only Authorization).
CREDENTIAL_HEADERS = (
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-subscription-token",
    "cookie",
)


def credential_guard(base_url: str) -> dict[str, list[Callable[..., Any]]]:
    """httpx ``event_hooks``: a request to another host than ``base_url``'s leaves without credentials."""
    host = (urlsplit(str(base_url)).hostname or "").lower()

    async def strip(request: Any) -> None:
        if (request.url.host or "").lower() != host:
            for name in CREDENTIAL_HEADERS:
                request.headers.pop(name, None)

    return {"request": [strip]}


@contextmanager
def sdk_env_hidden(hide: bool = True) -> Iterator[None]:
    """While an SDK client is built: the SDKs' own environment variables (:data:`SDK_ENV`) removed."""
    if not hide:
        yield
        return
    with _ENV_LOCK:
        saved = {name: os.environ.pop(name) for name in SDK_ENV if name in os.environ}
        try:
            yield
        finally:
            os.environ.update(saved)


def is_provider_host(base_url: str | None, hosts: Sequence[str]) -> bool:
    """Whether ``base_url`` is https on one of ``hosts`` (None: the SDK's default, the provider's)."""
    if base_url is None:
        return True
    parts = urlsplit(str(base_url))
    return parts.scheme == "https" and (parts.hostname or "").lower() in hosts


def key_env_for(options: Mapping[str, Any], default_env: str | None, base_url: str | None) -> str | None:
    """The variable the key is read from: ``options.api_key_env`` when set (null: none), else
    ``default_env`` unless it is a provider's own and ``base_url`` is not that provider's host."""
    if "api_key_env" in options:
        return options["api_key_env"]
    if default_env in PROVIDER_KEYS and not is_provider_host(base_url, PROVIDER_KEYS[default_env]):
        return None
    return default_env


def api_key_from_env(
    options: Mapping[str, Any], default_env: str | None, where: str, *, required: bool, base_url: str | None = None
) -> str | None:
    """The API key from the variable :func:`key_env_for` names; a key written into params is refused, unechoed."""
    for name, value in options.items():
        if holds_secret(str(name), value):
            raise ConfigError(
                f"{where}.{name}: API keys come only from the environment; set {where}.api_key_env to the"
                " NAME of the environment variable that holds the key"
            )
    env = key_env_for(options, default_env, base_url)
    if bad_env_name(env):
        raise ConfigError(f"{where}.api_key_env must be the name of an environment variable (letters, digits, _)")
    if env is None:
        return None
    key = os.environ.get(env)
    if not key and required:
        raise ConfigError(f"{where}: the API key is read from ${env}, which is not set; export it and rerun")
    return key or None


def is_loopback(url: str | None) -> bool:
    return bool(url) and bool(_LOOPBACK.match(str(url)))


class APIBackend(Backend):
    """Async, concurrency-bounded, retrying base of the ``openai_compat`` and ``anthropic`` backends."""

    #: Name of the environment variable that holds the key when params do not say.
    default_key_env: ClassVar[str | None] = None
    #: Where the run is sent (for messages and the key rule); subclasses set it.
    base_url: str | None = None
    #: The key subclasses read (:func:`api_key_from_env`), and whether a temperature is sent.
    _api_key: str | None = None
    send_temperature: bool = True

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        super().__init__(spec, context)
        self.where = f"models.{spec.name}.options"
        options = dict(spec.options or {})
        self.policy = RetryPolicy.from_options(options, self.where)
        try:
            self.timeout_s = float(options.get("timeout", 120.0))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{self.where}.timeout must be a number of seconds") from exc
        try:
            self.fail_after = int(options.get("max_consecutive_failures", 5))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{self.where}.max_consecutive_failures must be a whole number >= 1") from exc
        if self.fail_after < 1:
            raise ConfigError(f"{self.where}.max_consecutive_failures must be a whole number >= 1")
        self.retries = 0  # retries made so far, for the run's accounting
        self.attempts = 0  # HTTP attempts made so far
        self._streak = 0  # attempts in a row that failed because the server cannot be used
        # One event loop (on its own thread) and one SDK client for the backend's lifetime, not per round.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._client: Any = None
        self._rng = random.Random(f"{spec.name}:{self.context.seed}")

    # ---- hooks ----------------------------------------------------------------------------------
    def _make_client(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _prepare(self, request: Request) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _send(self, client: Any, payload: Any, request: Request) -> Response:  # pragma: no cover
        raise NotImplementedError

    def temperature_sent(self) -> bool:
        return self.send_temperature

    def _hide_sdk_env(self) -> bool:
        """Whether the SDK's environment variables are hidden: unless the server is the provider's own."""
        return not is_provider_host(self.base_url, PROVIDER_KEYS.get(self.default_key_env or "", ()))

    def _note_outcome(self, exc: BaseException | None) -> None:
        """Count attempts in a row that failed because the server cannot be used; StopRun at ``fail_after``."""
        failure = classify(exc) if exc is not None else None
        where = redact_url(self.base_url) if self.base_url else "the provider's API"
        if failure is not None and (failure.retry_after_s or 0) > self.policy.max_retry_after_s:
            # A wait longer than params allow fails fast: the server will not answer within the run.
            raise StopRun(
                self.redact(
                    f"models.{self.spec.name}: {where} asks to wait {failure.retry_after_s:.0f} s (Retry-After,"
                    f" {failure.reason}), longer than models.{self.spec.name}.options.retry_after_cap_s"
                    f" ({self.policy.max_retry_after_s:g} s): run again later, or raise the cap. Calls finished"
                    " before are in the cache"
                )
            )
        if failure is None or failure.kind is None:
            self._streak = 0
            return
        self._streak += 1
        if self._streak < self.fail_after:
            return
        hint = {
            "connection": "is the server running, and is base_url right?",
            "auth": f"check the key (models.{self.spec.name}.options.api_key_env).",
            "not_found": "check base_url and model_id.",
        }[failure.kind]
        raise StopRun(
            self.redact(
                f"models.{self.spec.name}: stopped after {self._streak}"
                f" failed attempt{'s' * (self._streak != 1)} in a row"
                f" at {where} ({failure.reason}): {hint} Calls finished before are in the cache;"
                " rerun when it is fixed"
            )
        )

    # ---- shared machinery -----------------------------------------------------------------------
    #: The API's documented limits on one image (docs/backends.md); an image over them is scaled down.
    image_limits: ClassVar[ImageLimits] = NO_LIMITS

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["image_size"] = self.spec.image_size  # None: as the source has it; else scaled to this
        if self.image_limits != NO_LIMITS:
            ident["image_limits"] = self.image_limits.as_dict()
        return ident

    def encode_image(self, part: Any, n_images: int = 1) -> EncodedImage:
        """An image as sent in a request of ``n_images`` images (scaled to ``image_size``/``image_limits``)."""
        return encode_for_api(part, self.spec.image_size, self.image_limits, n_images)

    def native_video(self) -> bool:
        """Whether a video part with its file goes as the clip (else as its sampled frames)."""
        return "video" in self.accepts and "video" in self.takes

    def images_sent(self, request: Request) -> list[list[int]] | None:
        """[width, height] of each image the request sends, as :meth:`encode_image` sends it (memoized)."""
        sizes = self.__dict__.setdefault("_sent_sizes", {})

        def size(part: Any, n_images: int) -> tuple[int, int]:
            key = (part.sha256, n_images if self.image_limits.many_images is not None else 1)
            if key not in sizes:
                sizes[key] = self.encode_image(part, n_images).size
            return sizes[key]

        return images_sent(request, size, self.native_video())

    def redact(self, text: str) -> str:
        """``text`` as it may reach a message, log, trace or prediction: the key and URL credentials redacted."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return redact_text(text)

    def complete(self, request: Request) -> Response:
        out: list[Response] = []
        self.complete_many([request], lambda _i, resp: out.append(resp))
        return out[0]

    def complete_many(self, requests: Sequence[Request], on_result: Callable[[int, Response], None]) -> None:
        """Run all requests, at most ``spec.concurrency`` in flight; ``on_result`` is called as each finishes."""
        if not requests:
            return
        check_requests(self, requests)
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._loop_thread = threading.Thread(
                target=self._loop.run_forever, name=f"{self.spec.name}-api", daemon=True
            )
            self._loop_thread.start()
        future = asyncio.run_coroutine_threadsafe(self._run_all(requests, on_result), self._loop)
        try:
            future.result()
        except BaseException:
            future.cancel()  # an interrupt here: stop the calls still in flight
            raise

    def close(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        client, self._client = self._client, None
        if client is not None:
            try:
                asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=30)
            except Exception:  # noqa: BLE001 - closing connections of a finished run: nothing to save
                log.debug("%s: closing the API client failed", self.spec.name, exc_info=True)
        loop.call_soon_threadsafe(loop.stop)
        if self._loop_thread is not None:
            self._loop_thread.join(timeout=30)
        loop.close()

    async def _run_all(self, requests: Sequence[Request], on_result: Callable[[int, Response], None]) -> None:
        limit = asyncio.Semaphore(max(1, int(self.spec.concurrency)))
        if self._client is None:
            self._client = self._make_client()
        client = self._client

        stopping = False  # set when one call stopped the run: no other call starts after it

        async def one(index: int, request: Request) -> None:
            nonlocal stopping
            async with limit:
                if stopping:
                    return
                try:
                    response = await self._complete_one(client, request)
                    on_result(index, response)
                except BaseException:
                    stopping = True
                    raise

        tasks = [asyncio.create_task(one(i, r)) for i, r in enumerate(requests)]
        try:
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in pending:  # only when a callback raised: stop the rest, then re-raise
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            for task in done:
                task.result()
        finally:
            for task in tasks:
                task.cancel()

    async def _complete_one(self, client: Any, request: Request) -> Response:
        try:
            payload = self._prepare(request)
        except (ImageChanged, OSError, ValueError) as exc:
            error = self.redact(f"could not prepare the request: {exc}")
            return Response(text=None, error=error, finish_reason="error")

        async def attempt() -> Response:
            self.attempts += 1
            started = time.perf_counter()
            try:
                response = await self._send(client, payload, request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._note_outcome(exc)  # StopRun when the server cannot be used at all
                raise
            self._note_outcome(None)
            response.latency_s = time.perf_counter() - started
            return response

        def note_retry(failure: Failure, wait: float) -> None:
            self.retries += 1
            log.info(
                "%s %s: %s; retrying in %.2fs", self.spec.name, request.request_id, self.redact(failure.reason), wait
            )

        try:
            response, _ = await call_with_retries(attempt, self.policy, rng=self._rng, on_retry=note_retry)
        except GaveUp as exc:
            message = self.redact(str(exc))
            log.warning("%s %s failed: %s", self.spec.name, request.request_id, message)
            return Response(text=None, error=message, finish_reason="error")
        return response
