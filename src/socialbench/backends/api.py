"""What the HTTP API backends share: keys from the environment, an async client with bounded
concurrency per model, retries, and failures turned into error responses.

A batch is checked first (:func:`~socialbench.backends.base.check_requests`): a part the backend
cannot take (audio for a backend without audio input, a native video clip for one that takes only
frames) stops it with a ConfigError naming the model, the request and the part, before any call.

Subclasses implement three hooks: :meth:`APIBackend._make_client` (the SDK's async client, built
inside the event loop), :meth:`APIBackend._prepare` (the request body, images read and checked) and
:meth:`APIBackend._send` (one HTTP attempt, raising the SDK's exceptions or
:class:`~socialbench.backends.retry.MalformedResponse`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import logging
import os
import random
import re
import time
from typing import Any, Callable, ClassVar, Mapping, Sequence

from socialbench.backends.base import Backend, BackendContext, ModelSpec, Request, Response, check_requests
from socialbench.backends.images import ImageChanged
from socialbench.backends.retry import Failure, GaveUp, RetryPolicy, call_with_retries
from socialbench.secrets import bad_env_name, holds_secret
from socialbench.errors import ConfigError

log = logging.getLogger("socialbench.backends")

_LOOPBACK = re.compile(r"^https?://(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?(/|$)")


def api_key_from_env(options: Mapping[str, Any], default_env: str | None, where: str, *, required: bool) -> str | None:
    """The API key, read from the environment variable named by ``options.api_key_env``.

    A key written into params.yaml would end up in git, DVC and MLflow, so ``api_key`` (or anything
    that does not look like a variable name) is refused, without echoing the value (the same rules as
    :func:`socialbench.secrets.secret_fields`, which checks params at load). ``api_key_env: null``
    means no key (a server that needs none)."""
    for name, value in options.items():
        if holds_secret(str(name), value):
            raise ConfigError(
                f"{where}.{name}: API keys come only from the environment; set {where}.api_key_env to the"
                " NAME of the environment variable that holds the key"
            )
    env = options.get("api_key_env", default_env)
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

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        super().__init__(spec, context)
        self.where = f"models.{spec.name}.options"
        options = dict(spec.options or {})
        self.policy = RetryPolicy.from_options(options, self.where)
        try:
            self.timeout_s = float(options.get("timeout", 120.0))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{self.where}.timeout must be a number of seconds") from exc
        self.retries = 0  # retries made so far, for the run's accounting
        self.attempts = 0  # HTTP attempts made so far
        self._rng = random.Random(f"{spec.name}:{self.context.seed}")

    # ---- hooks ----------------------------------------------------------------------------------
    def _make_client(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _prepare(self, request: Request) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _send(self, client: Any, payload: Any, request: Request) -> Response:  # pragma: no cover
        raise NotImplementedError

    def _secrets(self) -> list[str]:
        """Values that must never appear in an error message (the API key)."""
        return []

    # ---- shared machinery -----------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["image_size"] = self.spec.image_size  # images are scaled to this before sending
        return ident

    def redact(self, text: str) -> str:
        for secret in self._secrets():
            if secret:
                text = text.replace(secret, "***")
        return text

    def complete(self, request: Request) -> Response:
        out: list[Response] = []
        self.complete_many([request], lambda _i, resp: out.append(resp))
        return out[0]

    def complete_many(self, requests: Sequence[Request], on_result: Callable[[int, Response], None]) -> None:
        """Run all requests with at most ``spec.concurrency`` in flight; ``on_result`` is called (in
        one thread) as each finishes. A request with a part the backend cannot take stops the batch
        with a ConfigError before any call."""
        if not requests:
            return
        check_requests(self, requests)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self._run_all(requests, on_result))
            return
        # Called from inside a running event loop: run ours on a helper thread.
        with cf.ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(asyncio.run, self._run_all(requests, on_result)).result()

    async def _run_all(self, requests: Sequence[Request], on_result: Callable[[int, Response], None]) -> None:
        limit = asyncio.Semaphore(max(1, int(self.spec.concurrency)))
        client = self._make_client()

        async def one(index: int, request: Request) -> None:
            async with limit:
                response = await self._complete_one(client, request)
            on_result(index, response)

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
            await client.close()

    async def _complete_one(self, client: Any, request: Request) -> Response:
        try:
            payload = self._prepare(request)
        except (ImageChanged, OSError, ValueError) as exc:
            error = self.redact(f"could not prepare the request: {exc}")
            return Response(text=None, error=error, finish_reason="error")

        async def attempt() -> Response:
            self.attempts += 1
            started = time.perf_counter()
            response = await self._send(client, payload, request)
            response.latency_s = time.perf_counter() - started
            return response

        def note_retry(failure: Failure, wait: float) -> None:
            self.retries += 1
            log.info("%s %s: %s; retrying in %.2fs", self.spec.name, request.request_id, self.redact(failure.reason), wait)

        try:
            response, _ = await call_with_retries(attempt, self.policy, rng=self._rng, on_retry=note_retry)
        except GaveUp as exc:
            message = self.redact(str(exc))
            log.warning("%s %s failed: %s", self.spec.name, request.request_id, message)
            return Response(text=None, error=message, finish_reason="error")
        return response
