"""The demo mirror (socialbench.meetingtom.dataset.demo.generate): the official AMI layout, byte-identical
from the same seed, media a reader finds where the layout puts them."""

import wave

import numpy as np

from socialbench.meetingtom.dataset.demo import generate
from socialbench.meetingtom.dataset.demo_script import COLOURS, DemoConfig, plan_meeting
from socialbench.meetingtom.schema.settings import DEMO_ARCHIVE


def test_generate_writes_the_official_layout_byte_identically_twice(tmp_path):
    cfg = DemoConfig(seed=7, corpus=("ES9000a",), seconds=55, fps=2, size=(64, 48), sample_rate=8000)
    a, b = tmp_path / "a", tmp_path / "b"
    generate(a, cfg)
    generate(b, cfg)
    files = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert files == sorted(
        [DEMO_ARCHIVE, f"{DEMO_ARCHIVE}.sha256", "amicorpus/ES9000a/audio/ES9000a.Mix-Headset.wav"]
        + [
            f"amicorpus/ES9000a/video/ES9000a.{v}.avi"
            for v in ("Corner", "Closeup1", "Closeup2", "Closeup3", "Closeup4")
        ]
    )
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)


def test_a_closeup_video_shows_its_cameras_participant_with_the_frame_index(demo_mirror, demo_cfg):
    from socialbench.media.frames import extract_frames
    from socialbench.media.probe import video_timeline
    from socialbench.media.synth import read_index

    script = plan_meeting("ES9000a", demo_cfg)
    path = demo_mirror / "amicorpus/ES9000a/video/ES9000a.Closeup2.avi"
    letter = script.letter_of_camera("Closeup2")
    timeline = video_timeline(path)
    assert timeline.frame_count == 110 * demo_cfg.fps
    (frame,) = extract_frames(timeline, [37], path.parent / "tmp-frames")
    from PIL import Image

    img = np.asarray(Image.open(frame.file).convert("RGB"))
    assert read_index(img) == 37
    corner = img[2, 2].astype(int)  # the background: the participant's colour, darkened
    assert np.abs(corner - np.array([c // 3 + 40 for c in COLOURS[letter]])).max() <= 6


def test_the_headset_mix_is_a_mono_wav_of_the_meetings_length(demo_mirror, demo_cfg):
    with wave.open(str(demo_mirror / "amicorpus/ES9000a/audio/ES9000a.Mix-Headset.wav")) as wf:
        assert (wf.getnchannels(), wf.getsampwidth(), wf.getframerate()) == (1, 2, demo_cfg.sample_rate)
        assert wf.getnframes() == 110 * demo_cfg.sample_rate


def test_the_sha256_file_names_the_archive_and_its_hash(demo_mirror):
    from socialbench.core.hashing import sha256_file

    text = (demo_mirror / f"{DEMO_ARCHIVE}.sha256").read_text()
    assert text == f"{sha256_file(demo_mirror / DEMO_ARCHIVE)}  {DEMO_ARCHIVE}\n"
