"""The embedded demo release's media (pure): five views drawn with Pillow, everyone looking at the speaker
(an addressed act's speaker at the addressee: Task 2.1's gaze cue), each frame's index in its bottom band,
and a ``Mix-Headset`` WAV with a tone per speaker."""

from __future__ import annotations

import functools
import io
import wave
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from socialbench.media.synth import BITS, band_height, draw_index
from socialbench.meetingtom.dataset.demo_script import (
    COLOURS,
    LETTERS,
    SEATS,
    TONES,
    DemoConfig,
    MeetingScript,
    hash_text,
)


@dataclass(frozen=True)
class _FrameState:
    speaking: frozenset[str]
    looking: Mapping[str, str]  # letter -> the letter they look at
    addressed: tuple[str, str] | None  # (speaker, addressee) of the addressed act under way


def frame_states(script: MeetingScript, fps: int) -> list[_FrameState]:
    """Who speaks, who looks at whom, and which addressed act is under way, at each frame time."""
    speech = {
        x: [(t.start, t.end) for t in script.tokens[x] if t.kind == "w" and not t.punc and t.end > t.start]
        for x in LETTERS
    }
    n = int(round(script.seconds * fps))
    acts = [a for a in script.acts if a.type != "bck"]
    out = []
    last_speaker = script.participants[0].letter
    for i in range(n):
        t = i / fps
        speaking = frozenset(x for x in LETTERS if any(s <= t < e for s, e in speech[x]))
        current = next((a for a in acts if a.start <= t < a.end), None)
        if current is not None:
            last_speaker = current.speaker
        one = current is not None and current.addressee and len(current.addressee) == 1
        addressed = (current.speaker, current.addressee[0]) if one else None
        looking = {}
        for x in LETTERS:
            if addressed and x == addressed[0]:
                looking[x] = addressed[1]
            elif x == last_speaker:
                looking[x] = LETTERS[(LETTERS.index(x) + 2) % 4]  # the speaker without an addressee looks ahead
            else:
                looking[x] = last_speaker
        out.append(_FrameState(speaking, looking, addressed))
    return out


def _gaze_dx(viewer: str, target: str) -> int:
    """Pupil offset of ``viewer`` looking at ``target`` from the seats: -1 left, 0 ahead, +1 right."""
    d = (LETTERS.index(target) - LETTERS.index(viewer)) % 4
    return {1: -1, 2: 0, 3: 1}.get(d, 0)


def video_frames(script: MeetingScript, view: str, cfg: DemoConfig, states: list[_FrameState] | None = None) -> bytes:
    """Raw RGB24 frames of one view (``Corner`` or ``Closeup1``-``4``) of the meeting (:func:`_frames`)."""
    from PIL import Image, ImageDraw

    w, h = cfg.size
    states = states if states is not None else frame_states(script, cfg.fps)
    scene_h = h - band_height(h)
    scene_bytes = w * scene_h * 3
    if view == "Corner":
        base = Image.new("RGB", (w, h), (70, 70, 80))
        d = ImageDraw.Draw(base)
        d.ellipse([w * 0.3, scene_h * 0.3, w * 0.7, scene_h * 0.68], fill=(150, 120, 90))
        seat = {x: (int(w * sx), int(scene_h * sy)) for x, (sx, sy) in SEATS.items()}
        r = max(4, min(w, h) // 14)

        def corner(addressed: tuple[str, str] | None, speaking: frozenset[str]) -> bytes:
            img = base.copy()
            d = ImageDraw.Draw(img)
            if addressed:
                d.line([seat[addressed[0]], seat[addressed[1]]], fill=(255, 255, 255), width=2)
            for x in LETTERS:
                cx, cy = seat[x]
                grow = 2 if x in speaking else 0
                box = [cx - r - grow, cy - r - grow, cx + r + grow, cy + r + grow]
                d.ellipse(box, fill=COLOURS[x], outline=(255, 255, 255) if x in speaking else None, width=2)
            return img.tobytes()[:scene_bytes]

        keys = [(st.addressed, st.speaking) for st in states]
        return _frames(corner, keys, w, h)
    letter = script.letter_of_camera(view)
    colour = COLOURS[letter]
    base = Image.new("RGB", (w, h), tuple(c // 3 + 40 for c in colour))
    d = ImageDraw.Draw(base)
    cx, cy, fr = w // 2, scene_h // 2, int(min(w, scene_h) * 0.36)
    d.ellipse([cx - fr, cy - fr, cx + fr, cy + fr], fill=colour)
    ex, ey, er = int(fr * 0.4), cy - int(fr * 0.25), max(3, fr // 5)
    for sx in (-1, 1):
        d.ellipse([cx + sx * ex - er, ey - er, cx + sx * ex + er, ey + er], fill=(255, 255, 255))

    def closeup(dx: int, mouth_h: int) -> bytes:
        img = base.copy()
        d = ImageDraw.Draw(img)
        pr = max(1, er // 2)
        for sx in (-1, 1):
            px = cx + sx * ex + dx
            d.ellipse([px - pr, ey - pr, px + pr, ey + pr], fill=(20, 20, 20))
        mouth = [cx - fr // 3, cy + fr // 2 - mouth_h // 2, cx + fr // 3, cy + fr // 2 + mouth_h // 2 + 1]
        d.rectangle(mouth, fill=(60, 20, 20))
        return img.tobytes()[:scene_bytes]

    keys = [
        (
            _gaze_dx(letter, st.looking[letter]) * max(1, er // 2),
            max(2, fr // 4) if letter in st.speaking and i % 3 != 2 else 1,
        )
        for i, st in enumerate(states)
    ]
    return _frames(closeup, keys, w, h)


def _frames(scene, keys: list[tuple], w: int, h: int) -> bytes:
    """Each frame's scene (drawn once per distinct key, as the scenes repeat) above its index band."""
    draw = functools.cache(scene)
    return b"".join(part for i, key in enumerate(keys) for part in (draw(*key), _index_band(w, h, i % INDEX_SPAN)))


#: Frame indexes the band can show; a frame past them shows its index modulo this.
INDEX_SPAN = 1 << BITS


@functools.lru_cache(maxsize=4096)
def _index_band(w: int, h: int, index: int) -> bytes:
    """RGB24 rows of the band ``draw_index`` paints over the bottom of a ``w`` x ``h`` frame."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (w, h))
    draw_index(ImageDraw.Draw(img), w, h, index)
    return img.tobytes()[w * (h - band_height(h)) * 3 :]


def audio_samples(script: MeetingScript, cfg: DemoConfig) -> np.ndarray:
    """Mono int16 headset mix: each participant's tone while they speak, seeded noise for a laugh."""
    sr = cfg.sample_rate
    n = int(round(script.seconds * sr))
    mix = np.zeros(n, dtype=np.float64)
    rng = np.random.default_rng(hash_text(f"{cfg.seed}:{script.meeting}:audio"))
    for x in LETTERS:
        for t in script.tokens[x]:
            a, b = int(round(t.start * sr)), min(n, int(round(t.end * sr)))
            if b <= a:
                continue
            k = np.arange(b - a)
            if t.kind == "w":
                env = np.minimum(1.0, np.minimum(k, b - a - 1 - k) / (0.01 * sr))
                mix[a:b] += 0.25 * env * np.sin(2 * np.pi * TONES[x] * k / sr)
            elif t.kind == "vocalsound":
                mix[a:b] += 0.1 * rng.standard_normal(b - a)
    return np.clip(np.round(mix * 32767), -32768, 32767).astype("<i2")


def wav_bytes(samples: np.ndarray, sample_rate: int) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as wf:
        wf.setnchannels(1)
        wf.setsampwidth(2)
        wf.setframerate(sample_rate)
        wf.writeframes(samples.astype("<i2").tobytes())
    return buf.getvalue()
