from __future__ import annotations

import os

import pytest


@pytest.fixture
def server():
    """TEST DOUBLE: the loopback static-file HTTP server of tests/acquire (Range, faults)."""
    from tests.acquire.server import FileServer

    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        os.environ.pop(name, None)  # the loopback server must be reached directly
    srv = FileServer().start()
    try:
        yield srv
    finally:
        srv.stop()
