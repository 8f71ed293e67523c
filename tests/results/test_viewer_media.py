"""The viewer's media (socialbench.results.viewer_media): thumbnails, frames thinned, and the media
folder where each thumbnail is stored once, named by its sha256, and what cannot be shown is marked."""

from __future__ import annotations

import hashlib
import io

import pytest
from PIL import Image

from socialbench.results.viewer_media import MediaStore, embed_media, pick_frames, thumbnail


def png_bytes(size=(640, 480), mode="RGB", colour=(200, 40, 40)) -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size, colour).save(buf, format="PNG")
    return buf.getvalue()


def store_of(tmp_path, root=None) -> MediaStore:
    return MediaStore(tmp_path / "viewer" / "media", root or tmp_path)


def test_a_thumbnail_is_a_jpeg_scaled_to_fit():
    data, w, h = thumbnail(png_bytes((640, 480)), 256)
    im = Image.open(io.BytesIO(data))
    assert (w, h) == (256, 192) and im.size == (256, 192) and im.format == "JPEG"


def test_a_thumbnail_never_enlarges_a_small_image():
    assert thumbnail(png_bytes((100, 50)), 256)[1:] == (100, 50)


def test_a_transparent_image_is_flattened_on_white():
    data, _, _ = thumbnail(png_bytes((40, 40), "RGBA", (0, 0, 0, 0)), 64)
    assert min(Image.open(io.BytesIO(data)).convert("RGB").getpixel((20, 20))) > 245


def test_bytes_that_are_no_image_are_a_value_error():
    with pytest.raises(ValueError, match="not a readable image"):
        thumbnail(b"not an image", 64)


def test_media_are_stored_by_the_sha256_of_their_thumbnail_and_linked_relatively(tmp_path):
    (tmp_path / "a.png").write_bytes(png_bytes())
    store = store_of(tmp_path)
    rows = [{"id": "x", "media": [{"kind": "image", "path": "a.png"}]}]
    assert embed_media(rows, store, "../media") == []
    (m,) = rows[0]["media"]
    (stored,) = (tmp_path / "viewer" / "media").iterdir()
    assert stored.name == hashlib.sha256(stored.read_bytes()).hexdigest() + ".jpg"
    assert m["src"] == f"../media/{stored.name}" and (m["width"], m["height"]) == (256, 192)


def test_the_same_image_in_two_runs_is_read_once_and_stored_once(tmp_path, monkeypatch):
    from socialbench.results import viewer_media

    (tmp_path / "a.png").write_bytes(png_bytes())
    (tmp_path / "b.png").write_bytes(png_bytes())  # the same bytes under another name: the same thumbnail
    reads = []
    real = viewer_media.read_file_bytes
    monkeypatch.setattr(viewer_media, "read_file_bytes", lambda p, what: reads.append(p) or real(p, what))
    store = store_of(tmp_path)
    for _ in range(2):  # two runs
        embed_media(
            [{"id": "x", "media": [{"kind": "image", "path": "a.png"}, {"kind": "image", "path": "b.png"}]}],
            store,
            "../media",
        )
    assert len(reads) == 2 and len(list((tmp_path / "viewer" / "media").iterdir())) == 1


def test_a_missing_file_is_marked_and_reported(tmp_path):
    rows = [{"id": "x", "media": [{"kind": "image", "path": "gone.png"}]}]
    problems = embed_media(rows, store_of(tmp_path), "../media")
    assert rows[0]["media"][0]["problem"] == "file not found" and problems == ["x: gone.png: file not found"]


def test_a_frame_whose_bytes_differ_from_its_recorded_sha256_is_shown_with_a_warning(tmp_path):
    (tmp_path / "f.png").write_bytes(png_bytes())
    rows = [{"id": "x", "media": [{"kind": "frame", "path": "f.png", "sha256": "0" * 64}]}]
    problems = embed_media(rows, store_of(tmp_path), "../media")
    (m,) = rows[0]["media"]
    assert m["src"] and "sha256 differs" in m["problem"] and len(problems) == 1


def test_a_video_without_frames_is_not_shown_but_named(tmp_path):
    rows = [{"id": "x", "media": [{"kind": "video", "path": "clip.mp4"}]}]
    embed_media(rows, store_of(tmp_path), "../media")
    assert "src" not in rows[0]["media"][0] and "no sampled frames" in rows[0]["media"][0]["problem"]


def test_frames_beyond_the_maximum_are_thinned_evenly_keeping_first_and_last():
    frames = [{"i": k} for k in range(16)]
    assert [f["i"] for f in pick_frames(frames, 4)] == [0, 5, 10, 15]
    assert pick_frames(frames[:3], 8) == frames[:3]


def test_a_thinned_video_says_how_many_frames_it_shows(tmp_path):
    for k in range(5):
        (tmp_path / f"{k}.png").write_bytes(png_bytes((32, 32), colour=(k * 40, 0, 0)))
    rows = [{"id": "x", "media": [{"kind": "frame", "path": f"{k}.png"} for k in range(5)]}]
    embed_media(rows, store_of(tmp_path), "../media", max_frames=2)
    assert [m["path"] for m in rows[0]["media"]] == ["0.png", "4.png"]
    assert ["2 of 5 frames shown", "info"] in rows[0]["badges"]


def test_media_outside_the_media_root_are_marked_and_never_read(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "secret.png").write_bytes(png_bytes())
    (tmp_path / "root" / "link.png").symlink_to(tmp_path / "secret.png")
    rows = [
        {
            "id": "x",
            "media": [
                {"kind": "image", "path": "../secret.png"},
                {"kind": "image", "path": str(tmp_path / "secret.png")},
                {"kind": "image", "path": "link.png"},
            ],
        }
    ]
    problems = embed_media(rows, store_of(tmp_path, tmp_path / "root"), "../media")
    assert len(problems) == 3 and all("src" not in m and "not shown" in m["problem"] for m in rows[0]["media"])
    assert "through a symlink" in rows[0]["media"][2]["problem"]
    assert not (tmp_path / "viewer" / "media").exists()


def test_a_fifo_as_media_is_marked_without_opening_it(tmp_path):
    import os
    import signal

    def hung(*_):
        raise TimeoutError("embed_media opened the FIFO and waited for a writer")

    os.mkfifo(tmp_path / "f.png")
    rows = [{"id": "x", "media": [{"kind": "image", "path": "f.png"}]}]
    old = signal.signal(signal.SIGALRM, hung)  # a broken check fails the test instead of hanging the suite
    signal.alarm(20)
    try:
        problems = embed_media(rows, store_of(tmp_path), "../media")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert problems == [
        "x: f.png: is a FIFO (named pipe), not a media file; refused before opening it (reading it could wait forever)"
    ]
