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
