"""TEST DOUBLE: loopback HTTP servers that speak the wire formats of the OpenAI chat-completions API
and the Anthropic Messages API, so the official SDK clients can be pointed at them.

They record every request (path, headers, JSON body, sha256 of each base64 image, video clip and
audio file received) and can inject faults: HTTP error statuses with the APIs' error bodies and
headers (429 with Retry-After, 500, 529 overloaded), delays longer than the client's timeout, and
malformed bodies; or answer normally with a scripted finish reason (OpenAI ``finish_reason``,
Anthropic ``stop_reason``) or an OpenAI refusal. Answers are built from the request's JSON schema
(the first enum value of each property), so they are valid answers.

Also used by perf/bench_backends.py and the vLLM stand-in executable (fake_vllm_serve.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Fault:
    """What to do instead of (or before) answering one request."""

    status: int | None = None  # answer with this HTTP error status and the API's error body
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # sleep first (longer than the client timeout: a timeout)
    malformed: bool = False  # 200 with a body that is not JSON
    wrong_shape: bool = False  # 200 with JSON that lacks the response's fields
    finish_reason: str | None = None  # answer normally, with this finish_reason / stop_reason
    refusal: str | None = None  # OpenAI: answer with this refusal and no content
    text: str | None = None  # answer with this text instead of the schema's answer
    reasoning: str | None = None  # OpenAI: the message's reasoning field; Anthropic: a thinking block first
    reasoning_field: str = "reasoning_content"  # OpenAI: its name (vLLM >= 0.10: "reasoning")
    no_content: bool = False  # OpenAI: content null; Anthropic: no text block (a reasoning model cut short)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any
    image_sha256: list[str]
    at: float
    video_sha256: list[str] = field(default_factory=list)
    audio_sha256: list[str] = field(default_factory=list)


def schema_answer(schema: dict[str, Any] | None, fallback: str = "ok") -> Any:
    """A valid instance of the answer schema: the first enum value (or a string) per property."""
    if not schema:
        return fallback
    out = {}
    for name, sub in (schema.get("properties") or {}).items():
        enum = sub.get("enum") if isinstance(sub, dict) else None
        out[name] = enum[0] if enum else f"{name}-value"
    return out


def _media_in(obj: Any) -> dict[str, list[str]]:
    """sha256 of each base64 image, video and audio in an OpenAI or Anthropic request body, by kind:
    ``data:`` URLs by their media type, Anthropic base64 sources (images), OpenAI ``input_audio``."""
    found: dict[str, list[str]] = {"image": [], "video": [], "audio": []}

    def digest(data: str) -> str:
        return hashlib.sha256(base64.b64decode(data)).hexdigest()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            url = node.get("url")
            if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
                kind = url[len("data:") :].split("/", 1)[0]
                found.setdefault(kind, []).append(digest(url.split(";base64,", 1)[1]))
            if node.get("type") == "base64" and isinstance(node.get("data"), str):
                found["image"].append(digest(node["data"]))
            audio = node.get("input_audio")
            if node.get("type") == "input_audio" and isinstance(audio, dict) and isinstance(audio.get("data"), str):
                found["audio"].append(digest(audio["data"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(obj)
    return found


def _images_in(obj: Any) -> list[str]:
    """sha256 of each base64 image in an OpenAI or Anthropic request body."""
    return _media_in(obj)["image"]


class LoopbackServer:
    """A threaded HTTP/1.1 server on 127.0.0.1 speaking ``api`` ("openai" or "anthropic")."""

    def __init__(
        self,
        api: str,
        *,
        latency_s: float = 0.0,
        api_key: str | None = None,
        fault_for: Callable[[int, Any], Fault | None] | None = None,
        port: int = 0,
    ):
        if api not in ("openai", "anthropic"):
            raise ValueError(api)
        self.api = api
        self.latency_s = latency_s
        self.api_key = api_key
        self.fault_for = fault_for
        self.requests: list[Recorded] = []
        self.scripted: list[Fault] = []  # consumed in order, one per request, before fault_for
        self.ready = True  # False: /health answers 503 (used by the vLLM stand-in while "loading")
        self._lock = threading.Lock()
        self._count = 0
        self.in_flight = 0
        self.max_in_flight = 0  # most model calls being served at once
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        # http.server listens with a backlog of 5: more clients connecting at once would have their
        # SYNs dropped and retried by the kernel after 1 s, a stall real servers do not have.
        self._httpd.socket.listen(128)
        self._thread: threading.Thread | None = None

    # ---- lifecycle ------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """Base URL as each SDK expects it (OpenAI: with /v1; Anthropic: the root)."""
        root = f"http://127.0.0.1:{self.port}"
        return root + "/v1" if self.api == "openai" else root

    def start(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.05)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- queries --------------------------------------------------------------------------------
    def completions(self) -> list[Recorded]:
        """Recorded model calls (not health checks)."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith(("/chat/completions", "/messages"))]

    # ---- wire format ----------------------------------------------------------------------------
    def _answer(self, body: dict[str, Any], fault: Fault | None = None) -> tuple[int, dict[str, str], bytes]:
        finish = fault.finish_reason if fault else None
        if self.api == "openai":
            schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
            answer = schema_answer(schema)
            text = json.dumps(answer) if isinstance(answer, dict) else answer
            text = fault.text if fault and fault.text is not None else text
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if fault and fault.reasoning is not None:
                message[fault.reasoning_field] = fault.reasoning
            if fault and fault.no_content:
                message["content"], text = None, ""
            if fault and fault.refusal:
                message = {"role": "assistant", "content": None, "refusal": fault.refusal}
                text = ""
            doc = {
                "id": "chatcmpl-loopback",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "?"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish or "stop", "logprobs": None}],
                "usage": {
                    "prompt_tokens": len(json.dumps(body)) // 4,
                    "completion_tokens": len(text) // 4 + 1,
                    "total_tokens": len(json.dumps(body)) // 4 + len(text) // 4 + 1,
                },
            }
        else:
            tools = body.get("tools") or []
            if tools:
                answer = schema_answer(tools[0].get("input_schema"))
                content = [{"type": "tool_use", "id": "toolu_loopback", "name": tools[0]["name"], "input": answer}]
                text = json.dumps(answer)
                stop = "tool_use"
            else:
                schema = ((body.get("output_config") or {}).get("format") or {}).get("schema")
                answer = schema_answer(schema)
                text = json.dumps(answer) if isinstance(answer, dict) else answer
                text = fault.text if fault and fault.text is not None else text
                content = [] if fault and fault.no_content else [{"type": "text", "text": text}]
                stop = "end_turn"
            if fault and fault.reasoning is not None:
                content.insert(0, {"type": "thinking", "thinking": fault.reasoning, "signature": "loopback"})
            doc = {
                "id": "msg_loopback",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "?"),
                "content": content,
                "stop_reason": finish or stop,
                "stop_sequence": None,
                "usage": {"input_tokens": len(json.dumps(body)) // 4, "output_tokens": len(text) // 4 + 1},
            }
        return 200, {}, json.dumps(doc).encode()

    def _error(self, status: int) -> bytes:
        if self.api == "anthropic":
            kind = {
                429: "rate_limit_error",
                529: "overloaded_error",
                401: "authentication_error",
                400: "invalid_request_error",
            }.get(status, "api_error")
            return json.dumps({"type": "error", "error": {"type": kind, "message": f"loopback {status}"}}).encode()
        kind = {429: "rate_limit_exceeded", 401: "invalid_api_key", 400: "invalid_request_error"}.get(
            status, "server_error"
        )
        return json.dumps({"error": {"message": f"loopback {status}", "type": kind, "code": kind}}).encode()

    def _authorised(self, headers: dict[str, str]) -> bool:
        if self.api_key is None:
            return True
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()
        return given == self.api_key

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16  # headers and body leave in one write (flushed after each request)
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and went away

            def do_GET(self) -> None:
                with server._lock:
                    server.requests.append(Recorded(self.path, dict(self.headers), None, [], time.time()))
                if self.path.rstrip("/") == "/health":
                    self._send(200 if server.ready else 503, b"{}")
                elif self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200, json.dumps({"object": "list", "data": [{"id": "loopback", "object": "model"}]}).encode()
                    )
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    number = server._count
                    server._count += 1
                    media = _media_in(body)
                    server.requests.append(
                        Recorded(self.path, headers, body, media["image"], time.time(), media["video"], media["audio"])
                    )
                    fault = server.scripted.pop(0) if server.scripted else None
                if fault is None and server.fault_for is not None:
                    fault = server.fault_for(number, body)
                if not server._authorised(headers):
                    self._send(401, server._error(401))
                    return
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._serve(fault, body)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _serve(self, fault: Fault | None, body: Any) -> None:
                delay = server.latency_s + (fault.delay_s if fault else 0.0)
                if delay:
                    time.sleep(delay)
                if fault and fault.status:
                    self._send(fault.status, server._error(fault.status), fault.headers)
                elif fault and fault.malformed:
                    self._send(200, b'{"choices": [ this is not json', fault.headers)
                elif fault and fault.wrong_shape:
                    self._send(200, b'{"unexpected": true}', fault.headers)
                else:
                    status, extra, payload = server._answer(body if isinstance(body, dict) else {}, fault)
                    self._send(status, payload, extra)

        return Handler
