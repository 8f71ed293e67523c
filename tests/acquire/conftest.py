from __future__ import annotations

import os

import pytest

from tests.acquire.server import FileServer


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """The loopback server must be reached directly, whatever proxy the machine has."""
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server():
    srv = FileServer().start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def payload() -> bytes:
    """300 kB of non-repeating bytes (several chunks at the tests' chunk size)."""
    import hashlib

    out = bytearray()
    counter = 0
    while len(out) < 300_000:
        out += hashlib.sha256(str(counter).encode()).digest()
        counter += 1
    return bytes(out[:300_000])
