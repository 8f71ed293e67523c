"""TEST DOUBLE: a loopback HTTP server that speaks the Brave Search API's web search
(``GET /res/v1/web/search?q=...&count=...`` with the ``X-Subscription-Token`` header; answers
``{"type": "search", "query": {...}, "web": {"type": "search", "results": [{title, url, description}]}}``),
in the style of tests/helpers/loopback.py.

It records every request (path, query parameters, headers) and can inject faults: an HTTP status with
the API's error body (``{"type": "ErrorResponse", "error": {id, status, code, detail}}``) and headers
(429 with Retry-After), a redirect to another URL, or a body that is not JSON. A request without the
expected token is answered 401 (SUBSCRIPTION_TOKEN_INVALID), as the API does.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATH = "/res/v1/web/search"
ERROR_CODES = {401: "SUBSCRIPTION_TOKEN_INVALID", 422: "VALIDATION", 429: "RATE_LIMITED", 500: "INTERNAL_ERROR"}


@dataclass
class Fault:
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    redirect: str | None = None  # answer 302 with this Location
    malformed: bool = False


@dataclass
class Recorded:
    path: str
    params: dict[str, str]
    headers: dict[str, str]


def default_results(query: str, count: int) -> list[dict[str, Any]]:
    return [
        {
            "type": "search_result",
            "title": f"Result {i} for <strong>{query}</strong>",
            "url": f"https://example.org/{i}",
            "description": f"About <strong>{query}</strong>: passage {i}.",
            "extra_snippets": [f"more on {query}"],
        }
        for i in range(1, count + 1)
    ]


class BraveServer:
    """``BraveServer(token=...)`` on 127.0.0.1, a free port; ``faults``: answers to the first requests,
    in order; ``results(query, count)`` builds the web results."""

    def __init__(
        self,
        token: str = "test-brave-key",
        faults: list[Fault] | None = None,
        results: Callable[[str, int], list[dict[str, Any]]] = default_results,
    ):
        self.token = token
        self.faults = list(faults or [])
        self.results = results
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{PATH}"

    def __enter__(self) -> BraveServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, path: str, params: dict[str, str], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.requests.append(Recorded(path, params, headers))
            fault = self.faults.pop(0) if self.faults else None
        if fault and fault.redirect:
            return 302, {"Location": fault.redirect}, b""
        if fault and fault.status:
            return fault.status, fault.headers, _error(fault.status)
        if headers.get("x-subscription-token") != self.token:
            return 401, {}, _error(401)
        if path != PATH or not params.get("q"):
            return 422, {}, _error(422)
        if fault and fault.malformed:
            return 200, {}, b"<html>not json</html>"
        count = int(params.get("count", "20"))
        body = {
            "type": "search",
            "query": {"original": params["q"]},
            "web": {"type": "search", "results": self.results(params["q"], count)},
        }
        return 200, {}, json.dumps(body).encode("utf-8")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                params = dict(urllib.parse.parse_qsl(url.query))
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, extra, body = server._answer(url.path, params, headers)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        return Handler


def _error(status: int) -> bytes:
    code = ERROR_CODES.get(status, "ERROR")
    return json.dumps(
        {
            "type": "ErrorResponse",
            "error": {"id": "00000000", "status": status, "code": code, "detail": f"{code.lower()} (loopback)"},
            "time": 0,
        }
    ).encode("utf-8")
