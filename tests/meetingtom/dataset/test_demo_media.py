"""The demo's media (socialbench.meetingtom.dataset.demo_media): frames and sound that show what the
annotations say."""

import numpy as np

from socialbench.meetingtom.dataset.demo_media import audio_samples, frame_states
from socialbench.meetingtom.dataset.demo_script import TONES, DemoConfig, plan_meeting

CFG = DemoConfig(seed=7, corpus=("ES9000a",), seconds=110, fps=4, size=(96, 72), sample_rate=8000)


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


def test_a_frame_past_the_bands_4096_indexes_shows_its_index_modulo_4096():
    # the paper-size benchmark's meetings (clips_per_task 10: 550 s at 10 fps) have 5,500 frames
    from socialbench.media.synth import read_index
    from socialbench.meetingtom.dataset.demo_media import video_frames

    cfg = DemoConfig(seed=7, corpus=("ES9000a",), seconds=165, fps=25, size=(48, 36), clips_per_task=3)
    raw = video_frames(plan_meeting("ES9000a", cfg), "Closeup1", cfg)
    w, h = cfg.size
    frames = np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)
    assert len(frames) == 165 * 25
    assert [read_index(frames[i]) for i in (4095, 4096, 4100)] == [4095, 0, 4]
