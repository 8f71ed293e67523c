"""Images are read once, checked against their content hash, and scaled deterministically."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from socialbench.backends.images import ImageChanged, encode_for_api, load_pil, read_checked
from socialbench.hashing import sha256_bytes
from tests.helpers.moca_requests import write_png


def test_changed_file_is_refused(tmp_path):
    part = write_png(tmp_path / "a.png")
    data = bytearray((tmp_path / "a.png").read_bytes())
    data[-20] ^= 0xFF
    (tmp_path / "a.png").write_bytes(bytes(data))
    with pytest.raises(ImageChanged):
        read_checked(part)


def test_small_png_is_sent_as_is(tmp_path):
    part = write_png(tmp_path / "a.png", size=(40, 30))
    enc = encode_for_api(part, max_side=64)
    assert enc.media_type == "image/png" and sha256_bytes(enc.data) == part.sha256


def test_large_image_is_scaled_to_the_longest_side(tmp_path):
    part = write_png(tmp_path / "a.png", size=(200, 100))
    enc = encode_for_api(part, max_side=64)
    assert Image.open(io.BytesIO(enc.data)).size == (64, 32)
    assert encode_for_api(part, max_side=64).data == enc.data  # deterministic re-encoding
    assert load_pil(part, 50).size == (50, 25)
