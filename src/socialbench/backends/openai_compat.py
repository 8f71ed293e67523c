"""``openai_compat``: any OpenAI-compatible chat-completions server (``vllm serve``, SGLang, OpenAI...).

docs/backends.md describes the parts, decoding fields, JSON mode and finish reasons. Reasoning returned
apart goes before the answer in ``<think>`` tags; a message with reasoning and no content is a truncated
answer, not a server fault. ``OPENAI_API_KEY`` is read only for api.openai.com."""

from __future__ import annotations

from typing import Any

import openai

from socialbench.backends.api import APIBackend, api_key_from_env, credential_guard, is_loopback, sdk_env_hidden
from socialbench.backends.images import content_blocks, encode_audio
from socialbench.backends.retry import MalformedResponse
from socialbench.core.backend import (
    AudioPart,
    BackendContext,
    ImagePart,
    Message,
    ModelSpec,
    Request,
    Response,
    VideoPart,
    key_schema,
    think_wrapped,
)
from socialbench.core.errors import ConfigError
from socialbench.core.resources import server_url_problem

JSON_MODES = ("json_schema", "json_object", "key_schema", "none")
#: Where a server returns a reasoning parser's output beside the answer (vLLM: ``reasoning_content``,
#: ``reasoning`` from 0.10 on; other OpenAI-compatible servers: either).
REASONING_FIELDS = ("reasoning_content", "reasoning")

#: The API's finish reasons as socialbench's (see base.FINISH_REASONS); others are None (unknown).
FINISH_REASON_MAP = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
    "tool_calls": "stop",
    "function_call": "stop",
}


def finish_reason_of(value: Any, refused: bool = False) -> str | None:
    if refused:
        return "refusal"
    return FINISH_REASON_MAP.get(value) if isinstance(value, str) else None


class OpenAICompatBackend(APIBackend):
    default_key_env = "OPENAI_API_KEY"
    default_max_tokens_param = "max_tokens"
    # accepts: images (a video as its frames) and audio, declared in openai_compat.declaration.json.

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None, *, base_url: str | None = None):
        super().__init__(spec, context)
        options = dict(spec.options or {})
        self.base_url = base_url or options.get("base_url")
        if not self.base_url:
            raise ConfigError(f"{self.where}.base_url is required (the server's root, e.g. http://127.0.0.1:8000/v1)")
        problem = server_url_problem(self.base_url) if base_url is None else None  # a subclass checks its own
        if problem:
            raise ConfigError(f"{self.where}.base_url: {problem}")
        self.json_mode = options.get("json_mode", "json_schema")
        if self.json_mode not in JSON_MODES:
            raise ConfigError(f"{self.where}.json_mode must be one of {', '.join(JSON_MODES)}")
        self.max_tokens_param = options.get("max_tokens_param", self.default_max_tokens_param)
        if self.max_tokens_param not in ("max_tokens", "max_completion_tokens"):
            raise ConfigError(f"{self.where}.max_tokens_param must be max_tokens or max_completion_tokens")
        self.send_temperature = bool(options.get("send_temperature", True))
        self.extra_body = dict(options.get("extra_body") or {})
        self.served_model = spec.model_id or spec.name
        self._api_key = api_key_from_env(
            options, self.default_key_env, self.where, required=not is_loopback(self.base_url), base_url=self.base_url
        )

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["json_mode"] = self.json_mode
        if self.extra_body:
            ident["extra_body"] = self.extra_body
        if not self.send_temperature:
            ident["send_temperature"] = False
        return ident

    def response_format(self, request: Request) -> tuple[dict[str, Any] | None, str]:
        """(the ``response_format`` sent, its kind in ``core.backend.CONSTRAINTS``)."""
        decoding = request.decoding
        if self.json_mode == "none" or (decoding.json_schema is None and not decoding.json_object):
            return None, "none"
        schema, kind = decoding.json_schema, "json_schema"
        if schema is None and self.json_mode == "key_schema":
            schema, kind = key_schema(request), "key_schema"
        if schema is not None and self.json_mode in ("json_schema", "key_schema"):
            return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}, kind
        if self.json_mode == "key_schema":
            return None, "none"  # a server without JSON-object mode, and a request that names no keys
        return {"type": "json_object"}, "json_object"

    def constraint(self, request: Request) -> str:
        return self.response_format(request)[1]

    def _make_client(self) -> openai.AsyncOpenAI:
        with sdk_env_hidden(self._hide_sdk_env()):  # no OPENAI_* credential or header for another server
            return openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key or "EMPTY",  # loopback servers ignore it; the SDK wants a value
                timeout=self.timeout_s,
                max_retries=0,  # retry.py is the one retry policy
                # a redirect to another host carries no key (the SDK's own client follows redirects)
                http_client=openai.DefaultAsyncHttpxClient(event_hooks=credential_guard(self.base_url)),
            )

    def image_block(self, part: ImagePart) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": self.encode_image(part).data_url()}}

    def audio_block(self, part: AudioPart) -> dict[str, Any]:
        return {"type": "input_audio", "input_audio": {"data": encode_audio(part).base64(), "format": part.format}}

    def video_block(self, part: VideoPart) -> dict[str, Any]:  # pragma: no cover - only backends that take video
        raise ValueError("native video is not part of the OpenAI chat-completions API")

    def content(self, message: Message) -> list[dict[str, Any]]:
        return content_blocks(
            message,
            self.image_block,
            video=self.video_block if self.native_video() else None,  # else as frames
            audio=self.audio_block if "audio" in self.accepts and "audio" in self.takes else None,
        )

    def messages_payload(self, request: Request) -> list[dict[str, Any]]:
        return [{"role": m.role, "content": self.content(m) if m.media() else m.text()} for m in request.messages]

    def _prepare(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.served_model,
            "messages": self.messages_payload(request),
            self.max_tokens_param: request.max_tokens,
        }
        decoding = request.decoding
        if self.send_temperature:
            body["temperature"] = decoding.temperature
            if decoding.top_p is not None:
                body["top_p"] = decoding.top_p
        if decoding.stop:
            body["stop"] = list(decoding.stop)
        if decoding.seed is not None:
            body["seed"] = decoding.seed
        response_format, _ = self.response_format(request)
        if response_format is not None:
            body["response_format"] = response_format
        if self.extra_body:
            body["extra_body"] = self.extra_body
        return body

    async def _send(self, client: openai.AsyncOpenAI, payload: dict[str, Any], request: Request) -> Response:
        completion = await client.chat.completions.create(**payload)
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise MalformedResponse("no choices in the chat completion")
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None)
        refusal = getattr(message, "refusal", None)
        refused = isinstance(refusal, str) and bool(refusal)
        reasoning = next(
            (r for r in (getattr(message, f, None) for f in REASONING_FIELDS) if isinstance(r, str) and r), None
        )
        if not isinstance(text, str):
            if refused or reasoning:
                text = ""  # a refusal is an answer (scored incorrect); all reasoning, a truncated one
            else:
                raise MalformedResponse("the first choice has no message content")
        text = think_wrapped(reasoning, text)
        usage = getattr(completion, "usage", None)
        return Response(
            text=text,
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            finish_reason=finish_reason_of(getattr(choices[0], "finish_reason", None), refused),
        )
