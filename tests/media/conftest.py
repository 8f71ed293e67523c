"""Generated clips whose frames encode their own index (socialbench.media.synth), shared per session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from socialbench.media.encode import EncodeSettings
from socialbench.media.synth import read_index
from tests.helpers.media_synth import decode_all_frames, generate_indexed_video

CLIP_FRAMES = 50
CLIP_FPS = 10


@pytest.fixture(scope="session")
def media_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="session")
def clip_mp4(media_dir) -> Path:
    """50 frames at 10 fps, 160x120, H.264 with B-frames and a keyframe every 12 frames."""
    return generate_indexed_video(media_dir / "clip.mp4", frames=CLIP_FRAMES, fps=CLIP_FPS, gop=12)


@pytest.fixture(scope="session")
def clip_mkv(media_dir) -> Path:
    """The same clip in Matroska, which records no frame count."""
    return generate_indexed_video(media_dir / "clip.mkv", frames=CLIP_FRAMES, fps=CLIP_FPS, gop=12)


@pytest.fixture(scope="session")
def preroll_mkv(media_dir) -> Path:
    """Matroska with AAC audio: the container starts 21 ms before the video (audio preroll)."""
    return generate_indexed_video(media_dir / "preroll.mkv", frames=CLIP_FRAMES, fps=CLIP_FPS, gop=12, audio=True)


@pytest.fixture(scope="session")
def vfr_mkv(media_dir) -> Path:
    """30 frames: 0.1 s apart, but frames 20.. are shown one second later (a 1.1 s gap)."""
    return generate_indexed_video(media_dir / "vfr.mkv", frames=30, fps=CLIP_FPS, setpts="N/(10*TB)+gte(N,20)/TB")


@pytest.fixture(scope="session")
def five_views(media_dir) -> list[Path]:
    """A corner view and four close-ups of one 'recording': 60 frames at 25 fps each; the
    close-ups are flat red, green, blue and yellow so mosaic quadrants can be told apart."""
    backgrounds = ["testsrc2", "red", "green", "blue", "yellow"]
    return [
        generate_indexed_video(media_dir / f"view{i}.mp4", frames=60, fps=25, background=bg, gop=25, audio=(i == 0))
        for i, bg in enumerate(backgrounds)
    ]


# x264's default preset and CRF: B-frames (x264 "medium": 3, pyramid), the case AVI cannot time.
X264_DEFAULT = EncodeSettings(preset="medium", crf=23, keyframe_interval_s=None)
AVI_FRAMES = 400  # 16 s at 25 fps
AVI_FPS = 25


@pytest.fixture(scope="session")
def bframes_avis(media_dir) -> list[Path]:
    """Five views of one 'recording' in AVI (which stores no presentation times), 16 s at 25 fps,
    160x120, encoded at x264's default preset (B-frames) with a keyframe every 100 frames; the
    corner view moves, the four close-ups are flat red, green, blue and yellow."""
    backgrounds = ["testsrc2", "red", "green", "blue", "yellow"]
    return [
        generate_indexed_video(
            media_dir / f"bframes{i}.avi", frames=AVI_FRAMES, fps=AVI_FPS, background=bg, encode=X264_DEFAULT, gop=100
        )
        for i, bg in enumerate(backgrounds)
    ]


@pytest.fixture(scope="session")
def ultrafast_avi(media_dir) -> Path:
    """AVI as the MeetingToM demo encodes it: x264 ultrafast (no B-frames), 10 fps, a keyframe a second."""
    return generate_indexed_video(
        media_dir / "ultrafast.avi",
        frames=300,
        fps=10,
        encode=EncodeSettings(preset="ultrafast", keyframe_interval_s=1.0),
    )


def image_index(path: Path) -> int:
    with Image.open(path) as im:
        return read_index(np.asarray(im.convert("RGB")))


def video_indices(path: Path) -> list[int]:
    return [read_index(frame) for frame in decode_all_frames(path)]


def truncate(src: Path, dst: Path, fraction: float = 0.5) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * fraction)])
    return dst


def assert_problem(excinfo, problem: str, path: Path) -> None:
    assert excinfo.value.problem == problem
    assert str(path) in str(excinfo.value)


@pytest.fixture
def without_simd(tmp_path, monkeypatch):
    """Switch ffmpeg (the pinned build) to its plain C code for what the test runs in it: ``-cpuflags 0``."""
    from socialbench.core.tools import executable
    from socialbench.media.run import ffmpeg_path

    wrapper = tmp_path / "ffmpeg-without-simd"
    wrapper.write_text(f'#!/bin/sh\nexec "{ffmpeg_path()}" -cpuflags 0 "$@"\n')
    wrapper.chmod(0o755)

    def switch():
        monkeypatch.setenv("SOCIALBENCH_FFMPEG", str(wrapper))
        executable.cache_clear()

    yield switch
    monkeypatch.delenv("SOCIALBENCH_FFMPEG", raising=False)
    executable.cache_clear()
