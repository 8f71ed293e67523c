"""The embedded demo release written as a local mirror in the official AMI layout: the scripted meetings'
annotations archive, its ``.sha256`` and their media, bit-exact (same seed, same bytes)."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from socialbench.core.hashing import sha256_bytes
from socialbench.media.encode import EncodeSettings, encode_rgb_frames
from socialbench.meetingtom.dataset.acquire import VIDEO_VIEWS, media_relpath
from socialbench.meetingtom.dataset.demo_media import audio_samples, frame_states, video_frames, wav_bytes
from socialbench.meetingtom.dataset.demo_script import DemoConfig, plan_meeting, release_files, zip_bytes
from socialbench.meetingtom.schema.settings import DEMO_ARCHIVE


def generate(out_dir: str | Path, cfg: DemoConfig) -> dict[str, list[str]]:
    """Write the demo mirror into ``out_dir``; return ``{"meetings", "files"}`` (same config, same bytes)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    scripts = [plan_meeting(m, cfg) for m in cfg.corpus]
    archive = zip_bytes(release_files(scripts))
    (out / DEMO_ARCHIVE).write_bytes(archive)
    (out / f"{DEMO_ARCHIVE}.sha256").write_text(f"{sha256_bytes(archive)}  {DEMO_ARCHIVE}\n", encoding="utf-8")
    written = [DEMO_ARCHIVE, f"{DEMO_ARCHIVE}.sha256"]
    # A keyframe every second (clips are cut seeking from the keyframe before); ultrafast: no B-frames,
    # so the demo's bytes stay what they were.
    enc = EncodeSettings(preset="ultrafast", keyframe_interval_s=1.0)
    # Each view is encoded (by ffmpeg, one thread) while the next one is drawn.
    with ThreadPoolExecutor(max_workers=1) as pool:
        encoding: Future | None = None
        for s in scripts:
            states = frame_states(s, cfg.fps)
            for view in VIDEO_VIEWS:
                rel = media_relpath(s.meeting, view)
                raw = video_frames(s, view, cfg, states)
                if encoding is not None:
                    encoding.result()
                encoding = pool.submit(encode_rgb_frames, raw, out / rel, size=cfg.size, fps=cfg.fps, encode=enc)
                written.append(rel)
            rel = media_relpath(s.meeting, "Mix-Headset")
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(wav_bytes(audio_samples(s, cfg), cfg.sample_rate))
            written.append(rel)
        if encoding is not None:
            encoding.result()
    return {"meetings": list(cfg.corpus), "files": written}
