"""Images are read once, checked against their content hash, and scaled deterministically."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from socialbench.backends.images import ImageChanged, encode_for_api, load_pil, read_checked
from socialbench.core.hashing import sha256_bytes
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
    from socialbench.backends.images import ImageUnreadable
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
    from socialbench.backends.images import ImageUnreadable
    from socialbench.core.backend import ImagePart

    write_png(tmp_path / "full.png", size=(64, 64))
    raw = (tmp_path / "full.png").read_bytes()
    cut = raw[: len(raw) * 2 // 3]
    (tmp_path / "cut.png").write_bytes(cut)
    with pytest.raises(ImageUnreadable, match=r"cut\.png: cannot decode the image"):
        load_pil(ImagePart(path=str(tmp_path / "cut.png"), sha256=sha256_bytes(cut)))


def test_verify_image_file_accepts_a_png_and_refuses_a_video(tmp_path):
    from socialbench.backends.images import ImageUnreadable, verify_image_file
    from tests.helpers.media_synth import generate_indexed_video

    write_png(tmp_path / "a.png")
    verify_image_file(tmp_path / "a.png")
    clip = generate_indexed_video(tmp_path / "clip.mp4", frames=2, fps=5)
    with pytest.raises(ImageUnreadable, match=r"clip\.mp4: cannot decode the image"):
        verify_image_file(clip)


def _noisy_jpeg(path, size=(256, 192)):
    import random

    rng = random.Random(0)
    Image.frombytes("RGB", size, bytes(rng.randrange(256) for _ in range(size[0] * size[1] * 3))).save(path, quality=90)
    return path


def test_verify_decodes_jpeg_scan_data_so_a_cut_jpeg_is_refused(tmp_path):
    from PIL import ImageFile

    from socialbench.backends.images import ImageUnreadable, verify_image_file

    raw = _noisy_jpeg(tmp_path / "full.jpg").read_bytes()
    verify_image_file(tmp_path / "full.jpg")  # a whole JPEG passes
    (tmp_path / "cut.jpg").write_bytes(raw[: len(raw) * 8 // 10])  # headers intact, scan data cut
    with Image.open(tmp_path / "cut.jpg") as img:
        img.verify()  # what the check used to stop at: Pillow's verify() does not see the cut
    with pytest.raises(ImageUnreadable, match=r"cut\.jpg: cannot decode the image \(OSError: image file is truncated"):
        verify_image_file(tmp_path / "cut.jpg")
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False
