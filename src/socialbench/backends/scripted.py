"""A deterministic scripted backend for tests (a test double, not a model): options in
scripted.options.json (a list of responses is consumed call by call, to script retries)."""

from __future__ import annotations

import threading
from typing import Any

from socialbench.core.backend import FINISH_REASONS, Backend, Request, Response
from socialbench.core.errors import ConfigError


class ScriptedBackend(Backend):
    # takes every part (it reads none): declared in scripted.declaration.json
    answers_from_code = True  # a test double: this module's code is its behaviour (in the identity)

    def __init__(self, spec, context=None):
        super().__init__(spec, context)
        opts = spec.options or {}
        self._responses: dict[str, Any] = {
            k: (list(v) if isinstance(v, list) else v) for k, v in opts.get("responses", {}).items()
        }
        self._default = opts.get("default")
        self._fail = set(opts.get("fail_ids", []))
        self._finish = dict(opts.get("finish_reasons") or {})
        bad = sorted({str(v) for v in self._finish.values()} - set(FINISH_REASONS))
        if bad:
            raise ConfigError(
                f"models.{spec.name}.options.finish_reasons: {', '.join(bad)} not one of {', '.join(FINISH_REASONS)}"
            )
        self._lock = threading.Lock()
        self.calls: list[str] = []

    def identity(self) -> dict[str, Any]:
        # Injected failures are transient, like a network error: not part of what the model answers.
        script = {k: v for k, v in (self.spec.options or {}).items() if k != "fail_ids"}
        return {**super().identity(), "script": script}

    def complete(self, request: Request) -> Response:
        with self._lock:
            self.calls.append(request.request_id)
            if request.request_id in self._fail:
                return Response(text=None, error="scripted failure", finish_reason="error")
            value = self._responses.get(request.request_id, self._default)
            if isinstance(value, list):
                value = value.pop(0) if value else self._default
        if value is None:
            return Response(text=None, error="no scripted response", finish_reason="error")
        return Response(
            text=str(value),
            input_tokens=len(request.messages),
            output_tokens=1,
            finish_reason=self._finish.get(request.request_id, "stop"),
        )
