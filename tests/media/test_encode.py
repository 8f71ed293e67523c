"""Encoding raw frames with ffmpeg: the frames round-trip, a failing encoder is named."""

import pytest
from PIL import Image

from socialbench.media import errors as E
from socialbench.media.encode import EncodeSettings
from socialbench.media.errors import MediaError
from socialbench.media.synth import read_index
from tests.helpers.media_synth import decode_all_frames
from tests.media.conftest import assert_problem


def test_encode_rgb_frames_round_trips_frame_indices(tmp_path):
    from PIL import ImageDraw

    from socialbench.media.encode import encode_rgb_frames
    from socialbench.media.synth import draw_index

    w, h = 64, 48
    frames = []
    for i in range(12):
        img = Image.new("RGB", (w, h), (90, 90, 90))
        draw_index(ImageDraw.Draw(img), w, h, i)
        frames.append(img.tobytes())
    out = encode_rgb_frames(b"".join(frames), tmp_path / "c.mp4", size=(w, h), fps=6)
    decoded = decode_all_frames(out)
    assert len(decoded) == 12
    assert [read_index(f) for f in decoded] == list(range(12))


def test_an_encoder_that_fails_is_named_with_the_output_and_ffmpegs_reason(tmp_path):
    from socialbench.media.encode import encode_rgb_frames

    with pytest.raises(MediaError) as exc:
        encode_rgb_frames(
            bytes(16 * 16 * 3), tmp_path / "c.mp4", size=(16, 16), fps=6, encode=EncodeSettings(codec="no_such_codec")
        )
    assert_problem(exc, E.FFMPEG_FAILED, tmp_path / "c.mp4")
    assert "no_such_codec" in str(exc.value)


def test_encoded_frames_are_the_same_bytes_whatever_simd_the_cpu_has(tmp_path, without_simd):
    # swscale's SIMD converts RGB to yuv420p with its own rounding unless told bitexact (media.run.SCALE_FLAGS)
    import random

    from socialbench.media.encode import encode_rgb_frames

    rng = random.Random(1)
    raw = bytes(rng.getrandbits(8) for _ in range(64 * 48 * 3 * 4))
    with_simd = encode_rgb_frames(raw, tmp_path / "simd.mp4", size=(64, 48), fps=4).read_bytes()
    without_simd()
    assert encode_rgb_frames(raw, tmp_path / "c.mp4", size=(64, 48), fps=4).read_bytes() == with_simd
