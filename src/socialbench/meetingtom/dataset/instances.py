"""MeetingToM instances of the five subtasks (paper 3.2): a question about one mined clip (B.1) from a fixed
template (B.2), options shuffled per instance. Task 2.1's gold comes from the you events; the other tasks are
*items* given gold by annotation (B.3). AMI annotations live under ``meta``, never shown to the model (B.4)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from socialbench.media.transcript import span_index
from socialbench.meetingtom.dataset.clips import transcript_window
from socialbench.meetingtom.schema.instances import MODALITIES, TASK
from socialbench.meetingtom.schema.questions import meeting_stage, participant_options, question, vocabulary_options


def shuffled_options(
    participants: Sequence[str], speaker: str, iid: str, seed: int, include_speaker: bool
) -> list[dict[str, str]]:
    """Task 2.1's candidate addressees (the speaker only with ``include_speaker``), shuffled per instance."""
    return participant_options(participants, seed, iid, exclude=() if include_speaker else (speaker,))


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def context_of(
    meeting: Mapping[str, Any], start: float, end: float, turns: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The contextual priors of a clip (paper 4.2, Table 4): roles, the meeting ``phase`` from the innermost
    typed ``topic`` at its midpoint and that midpoint's ``position``, and each transcript line's dialogue act."""
    info = meeting["meeting.json"]
    roles = {x: p.get("role") for x, p in sorted((info.get("participants") or {}).items())}
    mid = start + (end - start) / 2
    topics = [
        t
        for t in meeting.get("topics.jsonl", [])
        if t.get("type") and t.get("start") is not None and t["start"] <= mid < t["end"]
    ]
    topic = min(topics, key=lambda t: (t["end"] - t["start"], t["id"]))["type"] if topics else None
    m0, m1 = info.get("start"), info.get("end")
    position = round(min(1.0, max(0.0, (mid - m0) / (m1 - m0))), 4) if m0 is not None and m1 and m1 > m0 else None
    acts = span_index(meeting.get("acts.jsonl", []))
    line_acts = []
    for t in turns:
        t0, t1 = start + t["start"], start + t["end"]
        own = [
            a for a in acts.near(t0, t1) if a["speaker"] == t["speaker"] and _overlap(a["start"], a["end"], t0, t1) > 0
        ]
        best = max(own, key=lambda a: (_overlap(a["start"], a["end"], t0, t1), a["id"]), default=None)
        line_acts.append(best["type"] if best else None)
    return {
        "roles": roles,
        "phase": meeting_stage(topic, position),
        "topic": topic,
        "position": position,
        "acts": line_acts,
    }


def _base(
    meeting: Mapping[str, Any],
    cand: Mapping[str, Any],
    task: str,
    anchor: str,
    clip: Mapping[str, Any] | None,
    variables: Mapping[str, Any],
    options: Callable[[str], list[dict[str, str]]],
    meta: Mapping[str, Any],
    *,
    source: str,
    split: str,
    modality: str,
    utterance_gap: float = 1.0,
    clip_problem: str | None = None,
) -> dict[str, Any]:
    """What every task's instance shares (``shared``: the builders' keywords): the clip, its transcript, media
    (without a clip, a modality needing video marks ``media_error``: answered without a call, scored invalid,
    so N never shrinks silently), priors, the question of ``variables``, the id's ``options`` and ``meta``."""
    if modality not in MODALITIES:
        raise ValueError(f"modality must be one of {MODALITIES}, got {modality!r}")
    start, end = cand["start"], cand["end"]
    iid = f"{source}-{task}-{anchor}"
    window = transcript_window(meeting["words.jsonl"], start, end, utterance_gap)
    variables = {"duration": round(end - start, 3), **variables}
    inst: dict[str, Any] = {
        "id": iid,
        "task": task,
        "source": source,
        "split": split,
        "modality": modality,
        "clip_id": cand["id"],
        "duration": variables["duration"],
        "transcript": window["text"],
        "turns": window["items"],
        "media": None,
        "media_error": None,
        "context": context_of(meeting, start, end, window["items"]),
        "question": question(task, variables),
        "variables": variables,
        "options": options(iid),
        "meta": {"meeting": cand["meeting"], "candidate": cand["id"], **meta, "window": [start, end]},
    }
    if clip is not None:
        inst["media"] = {
            "videos": clip["videos"],
            "audio": clip.get("audio"),
            "frames": clip["frames"],
            "fps": clip.get("fps"),
        }
    elif modality != "utterances":
        inst["media_error"] = f"no clip for this window ({clip_problem or 'the meeting has no video'})"
    return inst


def _you_variables(cand: Mapping[str, Any], event: Mapping[str, Any]) -> dict[str, Any]:
    """The question variables of a "you" window (Tasks 2.1 and 2.2)."""
    return {
        "speaker": event["speaker"],
        "you_time": round(event["start"] - cand["start"], 3),
        "utterance": cand["info"].get("utterance") or "",
    }


def _vocabulary(task: str, seed: int) -> Callable[[str], list[dict[str, str]]]:
    return lambda iid: vocabulary_options(task, seed, iid)


# ---- Task 2.1 (gold from the you events) ----
def build_task21(
    candidate: Mapping[str, Any],
    event: Mapping[str, Any],
    participants: Sequence[str],
    words: Sequence[Mapping[str, Any]],
    clip: Mapping[str, Any] | None,
    *,
    seed: int,
    include_speaker: bool = False,
    meeting: Mapping[str, Any] | None = None,
    **shared: Any,
) -> dict[str, Any]:
    """One Task 2.1 instance (pure); ``meeting``: the meeting's records, for the contextual priors."""
    meeting = meeting or {"meeting.json": {"participants": {}}, "words.jsonl": words}
    variables = _you_variables(candidate, event)
    meta = {"anchor": candidate["anchor"], "word_id": event["word_id"], "act": candidate["info"].get("act")}

    def options(iid: str) -> list[dict[str, str]]:
        return shuffled_options(participants, event["speaker"], iid, seed, include_speaker)

    inst = _base(meeting, candidate, TASK, candidate["anchor"], clip, variables, options, meta, **shared)
    answer = next((o["label"] for o in inst["options"] if o["participant"] == event["addressee"]), None)
    if answer is None:
        shown = [o["participant"] for o in inst["options"]]
        raise ValueError(f"{inst['id']}: the addressee {event['addressee']} is not among the options {shown}")
    inst.update(answer=answer, gold=event["addressee"], addressee=event["addressee"], **variables)
    return inst


# ---- Items of the annotated tasks (Task 1, 2.2, 3.1, 3.2): no answer until the annotation round-trip ----
def item_task1(
    meeting: Mapping[str, Any], cand: Mapping[str, Any], clip, *, seed: int, **shared: Any
) -> dict[str, Any]:
    """Task 1: the mental state of the window's target participant (5 s, their close-up by default)."""
    info, target = cand["info"], cand["target"]
    meta = {
        "target": target,
        **{k: info.get(k) for k in ("role", "act_type", "basis")},
        "speech_s": info.get("speech_s") or {},
        "addressed": info.get("basis") == "addressed",
    }
    variables, options = {"target": target}, _vocabulary("task1", seed)
    inst = _base(meeting, cand, "task1", f"{cand['anchor']}:{target}", clip, variables, options, meta, **shared)
    inst["target"] = target
    return inst


def reply_of(meeting: Mapping[str, Any], act_id: str | None, addressee: str) -> dict[str, Any] | None:
    """The addressee's reply to the act: the first adjacency pair from it to an act of the addressee, or None."""
    acts = {a["id"]: a for a in meeting.get("acts.jsonl", [])}
    for p in meeting.get("pairs.jsonl", []):
        target = acts.get(p.get("target"))
        if p.get("source") == act_id and target is not None and target["speaker"] == addressee:
            return {"act": target["id"], "pair_type": p.get("type")}
    return None


def item_task22(
    meeting: Mapping[str, Any], cand: Mapping[str, Any], event: Mapping[str, Any], clip, *, seed: int, **shared: Any
) -> dict[str, Any]:
    """Task 2.2: the addressee's attitude toward the speaker's statement (the Task 2.1 window)."""
    people = {"speaker": event["speaker"], "addressee": event["addressee"]}
    act = cand["info"].get("act")
    meta = {**people, "act": act, "reply": reply_of(meeting, act, event["addressee"])}
    variables, options = {**_you_variables(cand, event), **people}, _vocabulary("task2_2", seed)
    inst = _base(meeting, cand, "task2_2", cand["anchor"], clip, variables, options, meta, **shared)
    inst.update(people)
    return inst


def items_task3(
    meeting: Mapping[str, Any], cand: Mapping[str, Any], participants: Sequence[str], clip, *, seed: int, **shared: Any
) -> list[dict[str, Any]]:
    """Task 3.1 (consensus kind) and Task 3.2 (dissenters) items of one decision window."""
    info = cand["info"]
    responses = info.get("proposal_responses", [])
    variables = {
        "moment_start": round(info.get("decision_start", cand["anchor_start"]) - cand["start"], 1),
        "moment_end": round(info.get("decision_end", cand["anchor_end"]) - cand["start"], 1),
    }
    meta = {
        "decision": cand["anchor"],
        "participants": sorted(participants),
        "proposers": sorted({r["proposer"] for r in responses}),
        "agreeing": sorted(info.get("agreeing", [])),
        "responses": [{"responder": r["responder"], "type": r.get("type")} for r in responses],
    }
    options = {
        "task3_1": _vocabulary("task3_1", seed),
        "task3_2": lambda iid: participant_options(participants, seed, iid),
    }
    return [_base(meeting, cand, t, cand["anchor"], clip, variables, options[t], meta, **shared) for t in options]


# ---- One source ----
def _entry(rid: str, meeting: str, reason: str, detail: str, **extra: str) -> dict[str, str]:
    return {"id": rid, "meeting": meeting, "reason": reason, "detail": detail, **extra}


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
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """``(task2_1 instances, items, report)`` of one source's meetings (``extract.read_meeting`` records); the
    report lists every candidate that makes nothing and every instance kept without its media."""
    instances: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    report: list[dict[str, Any]] = []
    for m in meetings:
        info = m["meeting.json"]
        mid = info["meeting"]
        events = {(e["meeting"], e["word_id"]): e for e in m["you_events.jsonl"]}
        participants = sorted(info["participants"]) or list(info["speakers"])
        clip_by_id = {c["id"]: c for c in clips.get(mid, [])}
        problem_by_id = {p["id"]: f"{p['problem']}: {p['detail']}" for p in clip_reports.get(mid, [])}
        split = "dev" if mid in dev_meetings else "test"
        for cand in m["candidates.jsonl"]:
            kw = dict(source=source, split=split, modality=modality, seed=seed, utterance_gap=utterance_gap)
            kw["clip_problem"] = problem_by_id.get(cand["id"])
            clip = clip_by_id.get(cand["id"])
            if cand["task"] == "state":
                made = [item_task1(m, cand, clip, **kw)]
            elif cand["task"] == "consensus":
                made = items_task3(m, cand, participants, clip, **kw)
            elif cand["task"] == "you":
                event = events.get((mid, cand["info"].get("word_id")))
                if event is None:
                    word = cand["info"].get("word_id")
                    report.append(
                        _entry(cand["id"], mid, "no_event", f"word {word} is not among the meeting's you events")
                    )
                    continue
                words = m["words.jsonl"]
                made = [
                    build_task21(
                        cand, event, participants, words, clip, include_speaker=include_speaker, meeting=m, **kw
                    )
                ]
                made.append(item_task22(m, cand, event, clip, **kw))
            else:
                report.append(_entry(cand["id"], mid, "unknown_task", f"candidate task {cand['task']!r}"))
                continue
            for inst in made:
                (instances if inst["task"] == TASK else items).append(inst)
                if inst["media_error"]:
                    action = "kept, answered without a model call and scored invalid"
                    report.append(_entry(inst["id"], mid, "media_error", inst["media_error"], action=action))
    return (
        sorted(instances, key=lambda i: i["id"]),
        sorted(items, key=lambda i: i["id"]),
        sorted(report, key=lambda r: (r["meeting"], r["id"])),
    )
