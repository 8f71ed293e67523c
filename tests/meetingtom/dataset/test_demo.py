"""The embedded demo release (socialbench.meetingtom.dataset.demo): AMI layout, NXT layers that the real
parser reads, media that show what the annotations say, deterministic bytes."""

import io
import wave
import zipfile

import numpy as np

from socialbench.meetingtom.dataset.demo import (
    COLOURS,
    TONES,
    DemoConfig,
    audio_samples,
    frame_states,
    generate,
    plan_meeting,
    release_files,
    zip_bytes,
)
from socialbench.meetingtom.schema.settings import DEMO_ARCHIVE

CFG = DemoConfig(seed=7, corpus=("ES9000a",), seconds=110, fps=4, size=(96, 72), sample_rate=8000)


def parsed(tmp_path, cfg=CFG):
    from socialbench.meetingtom.dataset.ami.nxt import parse_corpus

    scripts = [plan_meeting(m, cfg) for m in cfg.corpus]
    for rel, text in release_files(scripts).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="latin-1")
    return parse_corpus(tmp_path), scripts


def test_the_same_seed_gives_the_same_plan_and_another_seed_another():
    a, b = plan_meeting("ES9000a", CFG), plan_meeting("ES9000a", CFG)
    c = plan_meeting("ES9000a", DemoConfig(seed=8, corpus=("ES9000a",)))
    assert release_files([a]) == release_files([b])
    assert release_files([a]) != release_files([c])


def test_the_participants_sit_on_a_shuffled_camera_each():
    s = plan_meeting("ES9000a", CFG)
    cams = [p.camera for p in s.participants]
    assert sorted(cams) == ["Closeup1", "Closeup2", "Closeup3", "Closeup4"]
    assert cams != ["Closeup1", "Closeup2", "Closeup3", "Closeup4"]  # letters are not cameras, as in the corpus


def test_every_layer_parses_without_an_error(tmp_path):
    corpus, _ = parsed(tmp_path)
    (m,) = corpus.meetings
    assert {
        "words",
        "segments",
        "dialogue_acts",
        "adjacency_pairs",
        "you_usages",
        "decisions",
        "topics",
        "roles",
    } <= m.layers
    assert [p for p in corpus.problems if p.is_error] == []
    assert m.end == 110


def test_each_scene_has_one_you_event_with_the_planned_addressee(tmp_path):
    from socialbench.meetingtom.dataset.ami.you_events import you_events

    corpus, (script,) = parsed(tmp_path)
    planned = [(a.speaker, a.addressee[0]) for a in script.acts if a.yous and a.addressee and len(a.addressee) == 1]
    events = you_events(corpus.meetings)
    assert [(e.speaker, e.addressee) for e in events] == planned
    assert len(events) == 2  # 110 s: two scenes


def test_the_other_yous_are_rejected_each_for_its_reason(tmp_path):
    from collections import Counter

    from socialbench.meetingtom.dataset.ami.you_events import you_candidates

    corpus, _ = parsed(tmp_path)
    reasons = Counter(c.reason for c in you_candidates(corpus.meetings[0]))
    assert reasons == {None: 2, "not_singular": 4, "several_addressees": 2, "no_addressee": 2}


def test_mining_keeps_a_you_window_per_scene_and_a_consensus_window(tmp_path):
    from socialbench.meetingtom.dataset.ami.mining import mine_meeting

    corpus, _ = parsed(tmp_path)
    result = mine_meeting(corpus.meetings[0])
    you = [c for c in result.accepted if c.task == "you"]
    assert len(you) == 2 and all(round(c.end - c.start, 3) == 50 for c in you)
    assert [c.task for c in result.accepted].count("consensus") == 1
    assert any(c.task == "state" for c in result.accepted)


def test_the_speaker_of_an_addressed_act_looks_at_the_addressee_and_the_others_at_the_speaker():
    s = plan_meeting("ES9000a", CFG)
    act = next(a for a in s.acts if a.yous and a.addressee and len(a.addressee) == 1)
    states = frame_states(s, CFG.fps)
    st = states[int((act.start + act.end) / 2 * CFG.fps)]
    assert st.addressed == (act.speaker, act.addressee[0])
    assert st.looking[act.speaker] == act.addressee[0]
    assert all(st.looking[x] == act.speaker for x in "ABCD" if x != act.speaker)


def test_audio_carries_each_speakers_tone_while_they_speak():
    s = plan_meeting("ES9000a", CFG)
    pcm = audio_samples(s, CFG)
    assert pcm.dtype == np.dtype("<i2") and len(pcm) == 110 * CFG.sample_rate
    word = next(t for t in s.tokens["C"] if t.kind == "w" and not t.punc)
    seg = pcm[int(word.start * CFG.sample_rate) : int(word.end * CFG.sample_rate)].astype(float)
    freqs = np.fft.rfftfreq(len(seg), 1 / CFG.sample_rate)
    assert abs(freqs[np.argmax(np.abs(np.fft.rfft(seg)))] - TONES["C"]) < 10


def test_the_archive_is_stored_uncompressed_with_fixed_times_in_name_order():
    data = zip_bytes({"b.txt": "x", "a/c.xml": "y"})
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert [i.filename for i in zf.infolist()] == ["a/c.xml", "b.txt"]
    assert {(i.compress_type, i.date_time) for i in zf.infolist()} == {(zipfile.ZIP_STORED, (1980, 1, 1, 0, 0, 0))}
    assert zip_bytes({"b.txt": "x", "a/c.xml": "y"}) == data


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
