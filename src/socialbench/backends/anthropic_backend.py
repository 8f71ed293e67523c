"""``anthropic``: Claude through the Messages API and the official SDK (docs/backends.md).

Images only. JSON output as structured outputs (``json_mode: output_format``) or a forced tool call
(``tool``); JSON mode sends the answer's key schema. No temperature is sent unless ``send_temperature:
true`` (the pinned API version has no sampling parameters). Thinking goes before the answer in ``<think>``."""

from __future__ import annotations

import json
from typing import Any

import anthropic

from socialbench.backends.api import APIBackend, api_key_from_env, credential_guard, is_loopback, sdk_env_hidden
from socialbench.backends.images import ImageLimits, content_blocks, sent_image_parts
from socialbench.backends.retry import MalformedResponse
from socialbench.core.backend import (
    BackendContext,
    ImagePart,
    Message,
    ModelSpec,
    Request,
    Response,
    key_schema,
    think_wrapped,
)
from socialbench.core.errors import ConfigError

JSON_MODES = ("output_format", "tool", "none")
DEFAULT_BASE_URL = "https://api.anthropic.com"
ANSWER_TOOL = "record_answer"

#: ``stop_reason`` as socialbench's finish reason (see base.FINISH_REASONS); others are None.
STOP_REASON_MAP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
}


def finish_reason_of(stop_reason: Any) -> str | None:
    return STOP_REASON_MAP.get(stop_reason) if isinstance(stop_reason, str) else None


#: The Messages API's documented image limits (docs/backends.md, "Image sizes"): 8000 px a side, 2000 in a
#: request of more than 20 images, 5 MB of base64 per image.
ANTHROPIC_IMAGE_LIMITS = ImageLimits(
    max_side=8000, many_images=20, many_max_side=2000, max_base64_bytes=5 * 1024 * 1024
)


class AnthropicBackend(APIBackend):
    default_key_env = "ANTHROPIC_API_KEY"
    image_limits = ANTHROPIC_IMAGE_LIMITS
    # accepts: images (a video as its frames), declared in anthropic_backend.declaration.json.

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        super().__init__(spec, context)
        options = dict(spec.options or {})
        if not spec.model_id:
            raise ConfigError(f"models.{spec.name}.model_id is required (e.g. claude-sonnet-4-6)")
        self.base_url = options.get("base_url")
        self.json_mode = options.get("json_mode", "output_format")
        if self.json_mode not in JSON_MODES:
            raise ConfigError(f"{self.where}.json_mode must be one of {', '.join(JSON_MODES)}")
        self.send_temperature = bool(options.get("send_temperature", False))
        self._api_key = api_key_from_env(
            options, self.default_key_env, self.where, required=not is_loopback(self.base_url), base_url=self.base_url
        )

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["json_mode"] = self.json_mode
        if self.json_mode != "none":
            # JSON mode became the key schema (it sent nothing before): answers without it are not reused
            ident["json_object"] = "key_schema"
        if self.send_temperature:
            ident["send_temperature"] = True
        return ident

    def answer_schema(self, request: Request) -> tuple[dict[str, Any] | None, str]:
        """(the schema sent for the answer's form, its kind in ``core.backend.CONSTRAINTS``): the
        request's schema, else for JSON mode the key schema, else nothing."""
        if self.json_mode == "none":
            return None, "none"
        if request.json_schema is not None:
            return request.json_schema, "json_schema"
        if request.decoding.json_object:
            schema = key_schema(request)
            if schema is not None:
                return schema, "key_schema"
        return None, "none"

    def constraint(self, request: Request) -> str:
        return self.answer_schema(request)[1]

    def _make_client(self) -> anthropic.AsyncAnthropic:
        # Always an explicit key and base URL: the SDK would otherwise read ANTHROPIC_* variables itself.
        base_url = self.base_url or DEFAULT_BASE_URL
        with sdk_env_hidden(self._hide_sdk_env()):  # no ANTHROPIC_* credential or header for another server
            return anthropic.AsyncAnthropic(
                api_key=self._api_key or "loopback",
                timeout=self.timeout_s,
                max_retries=0,
                base_url=base_url,
                # a redirect to another host carries no key (httpx keeps x-api-key across hosts)
                http_client=anthropic.DefaultAsyncHttpxClient(event_hooks=credential_guard(base_url)),
            )

    def _content(self, message: Message, n_images: int = 1) -> list[dict[str, Any]]:
        def image_block(part: ImagePart) -> dict[str, Any]:
            img = self.encode_image(part, n_images)
            return {"type": "image", "source": {"type": "base64", "media_type": img.media_type, "data": img.base64()}}

        return content_blocks(message, image_block)

    def _prepare(self, request: Request) -> dict[str, Any]:
        system = "\n\n".join(m.text() for m in request.messages if m.role == "system")
        n_images = len(sent_image_parts(request))  # the many-image limit holds per request
        messages = [
            {"role": m.role, "content": self._content(m, n_images)} for m in request.messages if m.role != "system"
        ]
        body: dict[str, Any] = {"model": self.spec.model_id, "max_tokens": request.max_tokens, "messages": messages}
        if system:
            body["system"] = system
        schema, _ = self.answer_schema(request)
        if schema is not None and self.json_mode == "output_format":
            body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        elif schema is not None and self.json_mode == "tool":
            body["tools"] = [
                {
                    "name": ANSWER_TOOL,
                    "description": "Record the final answer: one field per required key.",
                    "input_schema": schema,
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": ANSWER_TOOL}
        decoding = request.decoding
        if decoding.stop:
            body["stop_sequences"] = list(decoding.stop)
        if self.send_temperature:
            body["extra_body"] = {"temperature": decoding.temperature}
            if decoding.top_p is not None:
                body["extra_body"]["top_p"] = decoding.top_p
        return body

    async def _send(self, client: anthropic.AsyncAnthropic, payload: dict[str, Any], request: Request) -> Response:
        message = await client.messages.create(**payload)
        blocks = getattr(message, "content", None)
        if not isinstance(blocks, list):
            raise MalformedResponse("no content list in the message")
        text: str | None = None
        if "tools" in payload:
            for block in blocks:
                if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == ANSWER_TOOL:
                    text = json.dumps(getattr(block, "input", None), ensure_ascii=False)
                    break
        thinking = [getattr(b, "thinking", "") for b in blocks if getattr(b, "type", None) == "thinking"]
        reasoning = "\n\n".join(t for t in thinking if isinstance(t, str) and t)
        if text is None:
            texts = [getattr(b, "text", "") for b in blocks if getattr(b, "type", None) == "text"]
            if not texts and not thinking and getattr(message, "stop_reason", None) != "refusal":
                raise MalformedResponse("the message has no text block")
            text = "".join(t for t in texts if isinstance(t, str))
        text = think_wrapped(reasoning, text)  # all thinking and no text: a truncated answer, not a fault
        usage = getattr(message, "usage", None)
        if usage is None:
            raise MalformedResponse("the message has no usage")
        return Response(
            text=text,
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            finish_reason=finish_reason_of(getattr(message, "stop_reason", None)),
        )
