"""Images are read once, checked against their content hash, and scaled deterministically."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from socialbench.backends.images import (
    ImageChanged,
    ImageLimits,
    encode_for_api,
    fitted_size,
    images_sent,
    load_pil,
    read_checked,
    sent_image_parts,
)
from socialbench.core.backend import Message, Request, VideoPart
from socialbench.core.hashing import sha256_bytes
from socialbench.media.images import ImageUnreadable
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


@pytest.mark.parametrize(
    "content, why", [(b"", "the file is empty"), (bytes(range(256)) * 4, "not an image format Pillow can read")]
)
def test_undecodable_image_error_names_the_file(tmp_path, content, why):
    from socialbench.core.backend import ImagePart

    path = tmp_path / "broken.png"
    path.write_bytes(content)
    part = ImagePart(path=str(path), sha256=sha256_bytes(content))
    for read in (load_pil, encode_for_api):
        with pytest.raises(ImageUnreadable) as exc:
            read(part)
        assert str(exc.value) == f"{path}: cannot decode the image ({why})" and "BytesIO" not in str(exc.value)
        assert isinstance(exc.value, OSError)  # backends record a request's OSError as that request's error


def test_truncated_pixel_data_error_names_the_file(tmp_path):
    from socialbench.core.backend import ImagePart

    write_png(tmp_path / "full.png", size=(64, 64))
    raw = (tmp_path / "full.png").read_bytes()
    cut = raw[: len(raw) * 2 // 3]
    (tmp_path / "cut.png").write_bytes(cut)
    with pytest.raises(ImageUnreadable, match=r"cut\.png: cannot decode the image"):
        load_pil(ImagePart(path=str(tmp_path / "cut.png"), sha256=sha256_bytes(cut)))


# ---- as the source has it by default; scaled only to a documented limit (issue 40, point 1) --------
def test_by_default_an_image_goes_as_the_source_has_it_however_large(tmp_path):
    part = write_png(tmp_path / "a.png", size=(1200, 900))
    enc = encode_for_api(part)
    assert sha256_bytes(enc.data) == part.sha256 and enc.size == (1200, 900)


def test_fitted_size_scales_the_longest_side_down_never_up():
    assert fitted_size((1200, 900), 448) == (448, 336)
    assert fitted_size((40, 30), 448) == (40, 30)
    assert fitted_size((40, 30), None) == (40, 30)


def test_a_limit_applies_its_many_image_side_only_above_its_image_count():
    limits = ImageLimits(max_side=8000, many_images=20, many_max_side=2000)
    assert limits.side(20) == 8000 and limits.side(21) == 2000
    assert ImageLimits().side(100) is None


def test_an_image_over_the_limits_side_is_scaled_to_it(tmp_path):
    part = write_png(tmp_path / "a.png", size=(300, 100))
    enc = encode_for_api(part, limits=ImageLimits(max_side=8000, many_images=2, many_max_side=150), n_images=3)
    assert enc.size == (150, 50) and Image.open(io.BytesIO(enc.data)).size == (150, 50)
    assert encode_for_api(part, limits=ImageLimits(max_side=8000, many_images=2, many_max_side=150)).size == (300, 100)


def test_an_image_over_the_byte_limit_is_scaled_down_until_its_base64_fits(tmp_path):
    path = tmp_path / "noise.png"
    Image.frombytes("RGB", (200, 200), bytes((i * 7919) % 251 for i in range(200 * 200 * 3))).save(path)
    from socialbench.core.backend import ImagePart
    from socialbench.core.hashing import sha256_file

    part = ImagePart(str(path), sha256_file(path))
    most = len(path.read_bytes())  # its base64 (4/3 of it) is over
    enc = encode_for_api(part, limits=ImageLimits(max_base64_bytes=most))
    assert len(enc.base64()) <= most and max(enc.size) < 200
    assert encode_for_api(part, limits=ImageLimits(max_base64_bytes=most)).data == enc.data  # deterministic


def test_the_images_sent_follow_the_layout_frames_of_a_video_unless_it_goes_natively(tmp_path):
    a = write_png(tmp_path / "a.png", size=(60, 40))
    frames = tuple(write_png(tmp_path / f"f{k}.png", size=(30, 20), timestamp=float(k)) for k in range(2))
    video = VideoPart(path=str(a.path), sha256=a.sha256, frames=frames)
    req = Request("r", (Message("user", (a, "text", video)),), {})
    assert sent_image_parts(req) == [a, *frames]
    assert sent_image_parts(req, native_video=True) == [a]
    sizes = images_sent(req, lambda p, n: encode_for_api(p).size)
    assert sizes == [[60, 40], [30, 20], [30, 20]]
    assert images_sent(Request("t", (Message("user", ("no image",)),), {}), lambda p, n: (0, 0)) is None
