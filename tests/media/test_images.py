"""Image files checked before a data stage keeps them (socialbench.media.images): decoded whole, an
undecodable one named with why."""

from __future__ import annotations

import random

import pytest
from PIL import Image, ImageFile

from socialbench.media.images import ImageUnreadable, open_image, unreadable, verify_image_file
from tests.helpers.media_synth import generate_indexed_video
from tests.helpers.moca_requests import write_png


def test_verify_image_file_accepts_a_png_and_refuses_a_video(tmp_path):
    write_png(tmp_path / "a.png")
    verify_image_file(tmp_path / "a.png")
    clip = generate_indexed_video(tmp_path / "clip.mp4", frames=2, fps=5)
    with pytest.raises(ImageUnreadable, match=r"clip\.mp4: cannot decode the image"):
        verify_image_file(clip)


def _noisy_jpeg(path, size=(256, 192)):
    rng = random.Random(0)
    Image.frombytes("RGB", size, bytes(rng.randrange(256) for _ in range(size[0] * size[1] * 3))).save(path, quality=90)
    return path


def test_verify_decodes_jpeg_scan_data_so_a_cut_jpeg_is_refused(tmp_path):
    raw = _noisy_jpeg(tmp_path / "full.jpg").read_bytes()
    verify_image_file(tmp_path / "full.jpg")  # a whole JPEG passes
    (tmp_path / "cut.jpg").write_bytes(raw[: len(raw) * 8 // 10])  # headers intact, scan data cut
    with Image.open(tmp_path / "cut.jpg") as img:
        img.verify()  # what the check used to stop at: Pillow's verify() does not see the cut
    with pytest.raises(ImageUnreadable, match=r"cut\.jpg: cannot decode the image \(OSError: image file is truncated"):
        verify_image_file(tmp_path / "cut.jpg")
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False


@pytest.mark.parametrize(
    "content, why", [(b"", "the file is empty"), (bytes(range(256)) * 4, "not an image format Pillow can read")]
)
def test_open_image_names_the_file_and_why(tmp_path, content, why):
    with pytest.raises(ImageUnreadable) as exc:
        open_image(content, tmp_path / "broken.png")
    assert str(exc.value) == f"{tmp_path / 'broken.png'}: cannot decode the image ({why})"


def test_an_empty_or_special_file_is_refused_as_unreadable(tmp_path):
    (tmp_path / "empty.png").write_bytes(b"")
    with pytest.raises(ImageUnreadable, match=r"empty\.png: cannot decode the image \(the file is empty\)"):
        verify_image_file(tmp_path / "empty.png")
    with pytest.raises(ImageUnreadable):
        verify_image_file(tmp_path)  # a folder is no image


def test_unreadable_is_an_os_error_naming_the_exception():
    err = unreadable("x.png", ValueError("bad header"))
    assert isinstance(err, OSError) and str(err) == "x.png: cannot decode the image (ValueError: bad header)"
