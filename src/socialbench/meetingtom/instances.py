"""Task 2.1 instances (addressee identification, MeetingToM 3.2) and the instance files.

An instance is a mined ``you`` window (non-overlapping within its meeting, B.1) whose anchor is a
``you`` event: the gold addressee comes from the events file (``you_events.jsonl``, AMI's
dialogue-act ``addressee`` of a singular deictic "you"). The question is a fixed template whose
task variables are the speaker, the trigger utterance and the time of the "you" in the clip (B.2);
the candidate addressees are the meeting's other participants (``task2_1.include_speaker`` adds
the speaker), shuffled with ``"{seed}:{id}:options"`` and labelled A, B, C...; the answer is the
label.

What goes to the model (B.4) is only: the transcript window (speaker letters and words, times from
the clip start), the question variables, the options and, per the source's ``modality``, the clip
(files and 0.5 FPS frames). AMI annotations used to build the instance (dialogue-act ids, roles,
the meeting id) live under ``meta`` and never enter a request.

Files (``socialbench meetingtom instances`` / ``consolidate``):

* ``data/processed/meetingtom/<source>/task2_1.jsonl`` (both splits), ``you_events.jsonl``,
  ``candidates.jsonl``, ``report.jsonl`` (candidates that are no instance, with the reason) and
  ``source.json`` (counts; for an absent mirror, the note);
* ``data/processed/meetingtom/tasks/task2_1.jsonl``: every source's test instances of the task
  (B.5's task file); ``test.jsonl`` and ``dev.jsonl``: every task's instances of each split, what
  the shared stages read.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Mapping, Sequence

from socialbench.errors import DataError

TASK = "task2_1"
MODALITIES = ("utterances", "video", "both")
LABELS = "ABCDEFGH"
REQUIRED = {
    "id": str, "task": str, "source": str, "split": str, "modality": str, "speaker": str, "utterance": str,
    "you_time": (int, float), "transcript": str, "turns": list, "options": list, "answer": str, "addressee": str,
}  # fmt: skip


def shuffled_options(participants: Sequence[str], speaker: str, iid: str, seed: int, include_speaker: bool) -> list[dict[str, str]]:
    """The candidate addressees as options: letters A, B... over the participants, shuffled with the
    instance's own seed (so one instance's order never depends on the others)."""
    people = sorted(p for p in participants if include_speaker or p != speaker)
    random.Random(f"{seed}:{iid}:options").shuffle(people)
    return [{"label": LABELS[i], "participant": p, "text": f"Participant {p}"} for i, p in enumerate(people)]


def instance_id(source: str, anchor: str) -> str:
    return f"{source}-{TASK}-{anchor}"


def build_task21(
    candidate: Mapping[str, Any],
    event: Mapping[str, Any],
    participants: Sequence[str],
    words: Sequence[Mapping[str, Any]],
    clip: Mapping[str, Any] | None,
    *,
    source: str,
    split: str,
    modality: str,
    seed: int,
    include_speaker: bool = False,
    utterance_gap: float = 1.0,
    clip_problem: str | None = None,
) -> dict[str, Any]:
    """One Task 2.1 instance (pure). ``clip`` is the candidate's clip record (None: no clip; then
    a modality that needs video marks the instance ``media_error``: it is answered without a model
    call and scored invalid, so N never shrinks silently)."""
    from socialbench.meetingtom.clips import transcript_window

    if modality not in MODALITIES:
        raise ValueError(f"modality must be one of {MODALITIES}, got {modality!r}")
    iid = instance_id(source, candidate["anchor"])
    start, end = candidate["start"], candidate["end"]
    window = transcript_window(words, start, end, utterance_gap)
    options = shuffled_options(participants, event["speaker"], iid, seed, include_speaker)
    answer = next((o["label"] for o in options if o["participant"] == event["addressee"]), None)
    if answer is None:
        raise ValueError(f"{iid}: the addressee {event['addressee']} is not among the options {[o['participant'] for o in options]}")
    inst: dict[str, Any] = {
        "id": iid, "task": TASK, "source": source, "split": split, "modality": modality,
        "speaker": event["speaker"], "utterance": candidate["info"].get("utterance") or "",
        "you_time": round(event["start"] - start, 3), "duration": round(end - start, 3),
        "transcript": window["text"], "turns": window["items"], "options": options,
        "answer": answer, "addressee": event["addressee"],
        "media": None, "media_error": None,
        "meta": {"meeting": candidate["meeting"], "anchor": candidate["anchor"], "word_id": event["word_id"],
                 "act": candidate["info"].get("act"), "candidate": candidate["id"], "window": [start, end]},
    }  # fmt: skip
    if clip is not None:
        inst["media"] = {"videos": clip["videos"], "audio": clip.get("audio"), "frames": clip["frames"], "fps": clip.get("fps")}
    elif modality != "utterances":
        inst["media_error"] = f"no clip for this window ({clip_problem or 'the meeting has no video'})"
    return inst


def build_source(
    meetings: Sequence[Mapping[str, Any]],
    clips: Mapping[str, Sequence[Mapping[str, Any]]],
    clip_reports: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    source: str,
    modality: str,
    seed: int,
    dev_meetings: Sequence[str],
    include_speaker: bool = False,
    utterance_gap: float = 1.0,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Task 2.1 instances of one source and the report of ``you`` candidates that are none.

    ``meetings``: per meeting, the records of :func:`socialbench.meetingtom.extract.read_meeting`;
    ``clips`` / ``clip_reports``: per meeting, its ``clips.jsonl`` / ``report.jsonl`` records."""
    instances, report = [], []
    for m in meetings:
        info = m["meeting.json"]
        mid = info["meeting"]
        events = {(e["meeting"], e["word_id"]): e for e in m["you_events.jsonl"]}
        participants = sorted(info["participants"]) or list(info["speakers"])
        clip_by_id = {c["id"]: c for c in clips.get(mid, [])}
        problem_by_id = {p["id"]: f"{p['problem']}: {p['detail']}" for p in clip_reports.get(mid, [])}
        split = "dev" if mid in dev_meetings else "test"
        for cand in m["candidates.jsonl"]:
            if cand["task"] != "you":
                continue
            event = events.get((mid, cand["info"].get("word_id")))
            if event is None:
                report.append({"id": cand["id"], "meeting": mid, "reason": "no_event",
                               "detail": f"word {cand['info'].get('word_id')} is not among the meeting's you events"})  # fmt: skip
                continue
            instances.append(build_task21(cand, event, participants, m["words.jsonl"], clip_by_id.get(cand["id"]), source=source,
                                          split=split, modality=modality, seed=seed, include_speaker=include_speaker,
                                          utterance_gap=utterance_gap, clip_problem=problem_by_id.get(cand["id"])))  # fmt: skip
            if instances[-1]["media_error"]:
                report.append({"id": cand["id"], "meeting": mid, "reason": "media_error", "detail": instances[-1]["media_error"],
                               "action": "kept, answered without a model call and scored invalid"})  # fmt: skip
    return sorted(instances, key=lambda i: i["id"]), sorted(report, key=lambda r: (r["meeting"], r["id"]))


# --------------------------------------------------------------------------------------------
# Validation (what load_instances checks)


def check_instance(rec: Mapping[str, Any], path: str, line: int | None = None) -> None:
    """A DataError naming the file, record and field for the first thing wrong with ``rec``."""
    rid = str(rec.get("id")) if isinstance(rec.get("id"), str) else f"line {line}"
    for name, kind in REQUIRED.items():
        if name not in rec:
            raise DataError(path, "missing", record=rid, field=name)
        value = rec[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise DataError(path, f"must be {getattr(kind, '__name__', 'a number')}, got {value!r}", record=rid, field=name)
    if rec["task"] != TASK:
        raise DataError(path, f"unknown task {rec['task']!r} (known: {TASK})", record=rid, field="task")
    if rec["split"] not in ("test", "dev"):
        raise DataError(path, f"must be test or dev, got {rec['split']!r}", record=rid, field="split")
    if rec["modality"] not in MODALITIES:
        raise DataError(path, f"must be one of {', '.join(MODALITIES)}, got {rec['modality']!r}", record=rid, field="modality")
    labels = []
    for k, o in enumerate(rec["options"]):
        if not isinstance(o, dict) or not all(isinstance(o.get(f), str) for f in ("label", "participant", "text")):
            raise DataError(path, f"option {k} must have string label, participant and text, got {o!r}", record=rid, field="options")
        labels.append(o["label"])
    if len(labels) < 2 or len(set(labels)) != len(labels):
        raise DataError(path, f"needs at least two options with distinct labels, got {labels}", record=rid, field="options")
    if rec["answer"] not in labels:
        raise DataError(path, f"{rec['answer']!r} is not an option label ({', '.join(labels)})", record=rid, field="answer")
    gold = next(o["participant"] for o in rec["options"] if o["label"] == rec["answer"])
    if gold != rec["addressee"]:
        raise DataError(path, f"option {rec['answer']} is participant {gold}, not the addressee {rec['addressee']}", record=rid, field="answer")
    if rec["modality"] != "utterances" and rec.get("media") is None and not rec.get("media_error"):
        raise DataError(path, f"modality {rec['modality']} needs media (or a media_error saying why there is none)", record=rid, field="media")


def load_instances(path: str | Path) -> list[dict[str, Any]]:
    """Instances from a JSON-lines file, each checked; duplicate ids are an error."""
    from socialbench.io import first_bad_line, read_jsonl_lines

    lines = read_jsonl_lines(path)
    first_bad_line(path, lines)
    seen: dict[str, int] = {}
    out = []
    for jl in lines:
        rec = jl.record
        check_instance(rec, str(path), jl.line)
        if rec["id"] in seen:
            raise DataError(str(path), f"duplicate id (also on line {seen[rec['id']]})", record=rec["id"], field="id")
        seen[rec["id"]] = jl.line
        out.append(rec)
    return out
