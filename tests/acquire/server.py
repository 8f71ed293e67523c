"""TEST DOUBLE: a loopback static-file HTTP server with Range support and injectable faults.

Files are served from a dict (path -> bytes). Every request is recorded (path, headers, status).
Faults are queued per path and used once each, in order:

* ``"drop"``: send the headers (full Content-Length) and half of the body, then close the connection;
* ``"wrong"``: serve other bytes of the same length (a corrupted mirror);
* ``"ignore-range"``: answer 200 with the whole file even when a Range was asked for;
* ``"slow"``: sleep ``slow_s`` before answering (longer than the client's timeout);
* an int: answer with that HTTP status (e.g. 500, 503, 404).

String faults combine with ``+`` (``"drop+ignore-range"``).
"""

from __future__ import annotations

import re
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_RANGE = re.compile(r"bytes=(\d+)-$")


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    status: int | None = None


class FileServer:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.faults: dict[str, deque] = defaultdict(deque)
        self.requests: list[Request] = []
        self.slow_s = 1.0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control
    def add(self, path: str, data: bytes) -> str:
        self.files[path] = data
        return self.url(path)

    def fault(self, path: str, *faults) -> None:
        self.faults[path].extend(faults)

    def url(self, path: str) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{path}"

    def requests_for(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    def start(self) -> FileServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a timeout test): expected

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                rec = Request(self.path, {k: v for k, v in self.headers.items()})
                with server._lock:
                    server.requests.append(rec)
                    queue = server.faults.get(self.path)
                    fault = queue.popleft() if queue else None
                flags = set(fault.split("+")) if isinstance(fault, str) else set()
                data = server.files.get(self.path)
                if "slow" in flags:
                    time.sleep(server.slow_s)
                if isinstance(fault, int):
                    rec.status = fault
                    self._send(fault, b"error\n", {"Content-Type": "text/plain"})
                    return
                if data is None:
                    rec.status = 404
                    self._send(404, b"not found\n", {"Content-Type": "text/plain"})
                    return
                if "wrong" in flags:
                    data = bytes((b ^ 0xFF) for b in data)
                total = len(data)
                m = _RANGE.match(self.headers.get("Range", ""))
                if m and "ignore-range" not in flags:
                    start = int(m.group(1))
                    if start >= total:
                        rec.status = 416
                        self._send(416, b"", {"Content-Range": f"bytes */{total}"})
                        return
                    status, body = 206, data[start:]
                    headers = {"Content-Range": f"bytes {start}-{total - 1}/{total}"}
                else:
                    status, body, headers = 200, data, {}
                headers["Accept-Ranges"] = "bytes"
                headers["Content-Type"] = "application/octet-stream"
                rec.status = status
                if "drop" in flags:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self._send(status, body, headers)

            def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="loopback-files", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = None
