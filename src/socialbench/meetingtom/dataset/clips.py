"""Clips per candidate (MeetingToM 3.3, B.1, B.5): the Corner view, close-ups named by participant letter
(through ``meetings.xml``'s cameras), their mosaic, audio and transcript, all cut with the same ``[start,
end)``, and frames at ``media.meeting_fps``; clips not made go to ``report.jsonl`` (``media.on_error``)."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from socialbench.core.hashing import sha256_file
from socialbench.core.io import write_json, write_jsonl
from socialbench.core.paths import remove_inside, resolve_inside
from socialbench.media.cache import FrameCache
from socialbench.media.clips import Mosaic, cut_views, extract_audio
from socialbench.media.encode import EncodeSettings
from socialbench.media.errors import MediaError
from socialbench.media.probe import probe
from socialbench.media.sampling import to_fraction
from socialbench.media.transcript import Word, format_transcript, span_index, window_words, words_to_utterances

log = logging.getLogger(__name__)

CLOSEUPS = ("Closeup1", "Closeup2", "Closeup3", "Closeup4")
CLIPS_FILE = "clips.jsonl"
REPORT_FILE = "report.jsonl"
SUMMARY_FILE = "summary.json"
FRAMES_DIR = "frames"


def clip_dir_name(candidate_id: str) -> str:
    """A folder name for a candidate id (``you:ES2002a.B.you.3`` -> ``you_ES2002a.B.you.3``)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in candidate_id)


def view_plan(participants: Mapping[str, Mapping[str, Any]], fetched: Mapping[str, Any]) -> dict[str, Any]:
    """Which fetched files become which clip: ``{"videos": [(name, relpath)], "mosaic": [4 names] or None,
    "audio": relpath or None}``, names ``corner`` and ``closeup_<letter>`` (through the letter's camera)."""
    views = fetched.get("views") or {}
    cams = {x: p.get("camera") for x, p in sorted(participants.items())}
    closeups = [(f"closeup_{x}", views[cam]["path"]) for x, cam in cams.items() if cam in CLOSEUPS and cam in views]
    videos = ([("corner", views["Corner"]["path"])] if "Corner" in views else []) + closeups
    mosaic = [name for name, _ in closeups] if len(closeups) == 4 else None
    audio = views["Mix-Headset"]["path"] if "Mix-Headset" in views else None
    return {"videos": videos, "mosaic": mosaic, "audio": audio}


def transcript_window(words: Sequence[Mapping[str, Any]], start: float, end: float, gap: float) -> dict[str, Any]:
    """The transcript of ``[start, end)`` in lines per speaker, times relative to ``start`` (media.transcript)."""
    near = span_index(words).near(start, end)  # the meeting's words that may have their midpoint inside
    items = words_to_utterances(
        window_words([Word(w["speaker"], w["start"], w["end"], w["text"]) for w in near], start, end), gap
    )
    return {
        "start": start,
        "end": end,
        "items": [
            {"speaker": i.speaker, "start": i.start, "end": i.end, "text": i.text, "partial": i.partial} for i in items
        ],
        "text": format_transcript(items),
    }


def frame_aligned(start: float, end: float, fps) -> tuple[Fraction, Fraction]:
    """The window on the video's frame grid (``ceil(t * fps) / fps``): the same frames as ``[start, end)``,
    so the clip's first frame is at time 0 and ``video_window`` records frame times."""
    rate = to_fraction(fps)
    return (Fraction(math.ceil(to_fraction(start) * rate)) / rate, Fraction(math.ceil(to_fraction(end) * rate)) / rate)


def make_clips(
    meeting: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]],
    words: Sequence[Mapping[str, Any]],
    fetched: Mapping[str, Any],
    out_dir: str | Path,
    *,
    tasks: Sequence[str],
    settings,
    utterance_gap: float = 1.0,
    root: str | Path = ".",
    source: str = "fetched.json",
) -> dict[str, Any]:
    """Cut every clip of one meeting into ``out_dir``, write its records (module doc) and return the summary."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    root = Path(root)
    media_root = Path(fetched.get("root") or ".")
    plan = view_plan(meeting.get("participants") or {}, fetched)
    note = None if plan["videos"] else fetched.get("note") or "no video views fetched for this meeting: no clips"
    todo = [c for c in candidates if plan["videos"] and c["task"] in tasks and c.get("start") is not None]
    records, problems = [], []
    cache = FrameCache(out / FRAMES_DIR)
    sampling = settings.meeting_sampling()
    encode = EncodeSettings(preset=settings.clip_preset, crf=settings.clip_crf)
    names = [n for n, _ in plan["videos"]]
    # the views' paths are data (``source``): each must lead into the fetched root, never elsewhere
    sources = [
        resolve_inside(media_root, rel, source, record=f"views of {name}", field="path", what="video")
        for name, rel in plan["videos"]
    ]
    audio_path = (
        resolve_inside(media_root, plan["audio"], source, record="views of audio", field="path", what="audio")
        if plan["audio"]
        else None
    )
    for c in todo:
        clip = {"id": c["id"], "task": c["task"], "meeting": meeting["meeting"]}
        folder = out / clip_dir_name(c["id"])
        outputs = [folder / f"{n}.mp4" for n in names]
        mosaic = None
        if plan["mosaic"]:
            mosaic = Mosaic(
                output=folder / "mosaic.mp4",
                views=tuple(names.index(n) for n in plan["mosaic"]),
                labels=tuple(n.rsplit("_", 1)[1] for n in plan["mosaic"]),
                panel=settings.mosaic_panel,
                font=settings.label_font,
            )
        try:
            fps = probe(sources[0]).fps
            start, end = frame_aligned(c["start"], c["end"], fps) if fps else (c["start"], c["end"])
            skew = settings.max_view_skew_frames
            cut_views(sources, start, end, outputs, mosaic=mosaic, encode=encode, max_skew_frames=skew)
            audio = folder / "audio.wav" if audio_path is not None else None
            if audio is not None:
                extract_audio(audio_path, audio, start=c["start"], end=c["end"])
            files = dict(zip(names, outputs)) | ({"mosaic": Path(mosaic.output)} if mosaic is not None else {})
            frames = {n: cache.frames(p, sampling).records(root) for n, p in files.items()}
        except MediaError as err:
            action = "failed" if settings.on_error == "fail" else "no clip"
            problems.append({**clip, "path": err.path, "problem": err.problem, "detail": err.detail, "action": action})
            remove_inside(folder, out, missing_ok=True)  # inside the clips folder only; a link goes as a link
            if settings.on_error == "fail":
                _finish(out, records, problems, note, cache)
                raise
            log.warning("clips: %s: no clip for %s: %s", meeting["meeting"], c["id"], err)
            continue
        write_json(folder / "transcript.json", transcript_window(words, c["start"], c["end"], utterance_gap))
        records.append(
            {
                **clip,
                "start": c["start"],
                "end": c["end"],
                "video_window": [float(start), float(end)],  # the window on the video's frame grid (same frames)
                "videos": {n: _file(p, root) for n, p in files.items()},
                "audio": _file(audio, root) if audio else None,
                "transcript": _file(folder / "transcript.json", root),
                "frames": frames,
                "fps": float(sampling.fps) if sampling.fps is not None else None,
            }
        )
    return _finish(out, records, problems, note, cache)


def _file(p: Path, root: Path) -> dict[str, str]:
    """A file's record: its path (relative to ``root`` where it lies inside) and its hash."""
    try:
        path = p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        path = p.resolve().as_posix()
    return {"path": path, "sha256": sha256_file(p)}


def _finish(out: Path, records: list, problems: list, note: str | None, cache) -> dict[str, Any]:
    write_jsonl(out / CLIPS_FILE, sorted(records, key=lambda r: r["id"]))
    write_jsonl(out / REPORT_FILE, sorted(problems, key=lambda r: r["id"]))
    # The cache's locks and temporary folders are bookkeeping, not data: the folder DVC versions
    # holds the frames alone, so the same clips give the same bytes.
    for name in (".locks", ".tmp"):
        remove_inside(cache.root / name, out, missing_ok=True)
    summary = {"clips": len(records), "failed": len(problems), "note": note}
    write_json(out / SUMMARY_FILE, summary)
    return summary
