"""Candidate mining for MeetingToM's three task families (paper 3.3, B.1), deterministic: ``state`` (Task 1,
5 s), ``you`` (Task 2, 50-70 s around an addressed "you") and ``consensus`` (Task 3, 50-70 s around an AMI
decision with a proposal-response pair and an agreement marker). Overlaps are resolved greedily (earliest
end first); every candidate not kept comes back with a ``reason`` and a ``detail``."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from socialbench.core.errors import ConfigError
from socialbench.meetingtom.dataset.ami.nxt import gc_paused
from socialbench.meetingtom.dataset.ami.records import DialogueAct, Meeting
from socialbench.meetingtom.dataset.ami.you_events import you_candidates
from socialbench.meetingtom.schema.mining import (  # noqa: F401 (the thresholds' contract, re-exported)
    ConsensusParams,
    MiningParams,
    StateParams,
    WindowRule,
    YouParams,
)

TASKS = ("state", "you", "consensus")
_EPS = 1e-6


@dataclass(frozen=True)
class Candidate:
    """A mined span; ``reason`` (a code) and ``detail`` (in words) say why it was rejected, None when kept."""

    task: str
    id: str
    meeting: str
    anchor: str  # id of the anchoring annotation: a dialogue act, you-usage or decision
    anchor_start: float
    anchor_end: float
    start: float | None = None  # the window (None when none could be placed)
    end: float | None = None
    target: str | None = None  # Task 1: the participant letter the question is about
    info: Mapping[str, Any] = field(default_factory=dict)
    reason: str | None = None
    detail: str | None = None

    def rejected(self, reason: str, detail: str) -> Candidate:
        return dataclasses.replace(self, reason=reason, detail=detail)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class MiningResult:
    accepted: tuple[Candidate, ...] = ()
    rejected: tuple[Candidate, ...] = ()

    @staticmethod
    def combine(results: Iterable[MiningResult]) -> MiningResult:
        results = list(results)
        order = {t: i for i, t in enumerate(TASKS)}
        acc = [c for r in results for c in r.accepted]
        rej = [c for r in results for c in r.rejected]
        acc.sort(key=lambda c: (c.meeting, order.get(c.task, 9), c.start, c.id))
        rej.sort(key=lambda c: (c.meeting, order.get(c.task, 9), c.anchor_start, c.id))
        return MiningResult(tuple(acc), tuple(rej))


class WindowError(ValueError):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def place_window(
    anchor_start: float, anchor_end: float, meeting_end: float, rule: WindowRule, *, meeting_start: float = 0.0
) -> tuple[float, float]:
    """The window for an anchor: ``rule.preferred_s`` long (up to ``max_s`` when the anchor and its context need
    it), centred on it, inside the meeting; times to the millisecond. Raises WindowError with the reason."""
    if anchor_end < anchor_start:
        raise ValueError(f"anchor ends ({anchor_end}) before it starts ({anchor_start})")
    need = anchor_end - anchor_start
    if anchor_start < meeting_start - _EPS or anchor_end > meeting_end + _EPS:
        meeting = f"{meeting_start:.3f}-{meeting_end:.3f} s"
        raise WindowError(
            "anchor_outside", f"anchor {anchor_start:.3f}-{anchor_end:.3f} s lies outside the meeting {meeting}"
        )
    if need > rule.max_s + _EPS:
        why = f"anchor lasts {need:.3f} s, longer than the longest window ({rule.max_s} s)"
        raise WindowError("anchor_too_long", why)
    length = min(max(rule.preferred_s, need + rule.before_s + rule.after_s), rule.max_s)
    span = meeting_end - meeting_start
    if span < length:
        if span < rule.min_s - _EPS:
            why = f"the meeting lasts {span:.3f} s, shorter than the shortest window ({rule.min_s} s)"
            raise WindowError("meeting_too_short", why)
        length = span
    start = anchor_start - rule.before_s - (length - need - rule.before_s - rule.after_s) / 2
    start = min(max(start, anchor_end - length), anchor_start)  # contain the anchor
    start = min(max(start, meeting_start), meeting_end - length)  # stay inside the meeting
    start, length = round(start, 3), round(length, 3)
    return start, round(start + length, 3)


def _result(pool: Sequence[Candidate], rejected: list[Candidate]) -> MiningResult:
    kept, overlapping = select_non_overlapping(pool)
    return MiningResult(tuple(kept), tuple(rejected + overlapping))


def select_non_overlapping(candidates: Sequence[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    """Kept and rejected (``overlap``) candidates: earliest end first, kept unless overlapping the last kept."""
    kept: list[Candidate] = []
    dropped: list[Candidate] = []
    for c in sorted(candidates, key=lambda c: (c.end, c.start, c.anchor_start, c.id)):
        last = kept[-1] if kept else None
        if last is not None and c.start < last.end - _EPS:
            why = f"window {c.start:.3f}-{c.end:.3f} s overlaps kept {last.id} ({last.start:.3f}-{last.end:.3f} s)"
            dropped.append(c.rejected("overlap", why))
        else:
            kept.append(c)
    return kept, dropped


class SpeechTimeline:
    """Seconds of speech (spoken words, the union of their times) per participant in any span."""

    def __init__(self, meeting: Meeting):
        self._starts: dict[str, list[float]] = {}
        self._ends: dict[str, list[float]] = {}
        self._before: dict[str, list[float]] = {}  # speech before interval i (prefix sums)
        for speaker, tokens in meeting.words.items():
            merged: list[list[float]] = []
            for t in sorted((t for t in tokens if t.is_word and t.end > t.start), key=lambda t: t.start):
                if merged and t.start <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], t.end)
                else:
                    merged.append([t.start, t.end])
            self._starts[speaker] = [s for s, _ in merged]
            self._ends[speaker] = [e for _, e in merged]
            self._before[speaker] = list(itertools.accumulate((e - s for s, e in merged), initial=0.0))[:-1]

    @property
    def speakers(self) -> list[str]:
        return sorted(self._starts)

    def seconds(self, speaker: str, start: float, end: float) -> float:
        starts, ends, before = self._starts.get(speaker, []), self._ends.get(speaker, []), self._before.get(speaker, [])
        i = bisect.bisect_right(ends, start)  # first interval ending after start
        j = bisect.bisect_left(starts, end)  # intervals from j on start at or after end
        if i >= j:
            return 0.0
        total = before[j - 1] + (ends[j - 1] - starts[j - 1]) - before[i]
        total -= max(0.0, start - starts[i])  # clip the first and last interval to the span
        total -= max(0.0, ends[j - 1] - end)
        return max(0.0, total)


# ---- Task 1: subject-level state windows ----
def mine_state(
    meeting: Meeting, params: StateParams = StateParams(), *, timeline: SpeechTimeline | None = None
) -> MiningResult:
    """5 s windows with one target participant involved as speaker or listener (module doc)."""
    timeline = timeline or SpeechTimeline(meeting)
    rule = WindowRule(params.window_s, params.window_s, params.window_s, 0.0, 0.0)
    speakers = sorted(set(meeting.speakers) | set(timeline.speakers))
    pool: list[Candidate] = []
    rejected: list[Candidate] = []
    for act in meeting.dialogue_acts:
        anchor_end = round(min(act.end, act.start + params.window_s), 3)
        info = {"act_type": act.type, "act_speaker": act.speaker}
        sid = f"state:{act.id}:{act.speaker}"
        base = Candidate("state", sid, meeting.id, act.id, act.start, anchor_end, target=act.speaker, info=info)
        if act.type in params.skip_act_types:
            rejected.append(base.rejected("act_type", f"{act.type} acts anchor no state window"))
            continue
        listener = act.type in params.listener_act_types
        targets = [("listener", act.speaker, "backchannel") if listener else ("speaker", act.speaker, "act")]
        addressee = act.addressee or ()
        if params.addressed_listeners and len(addressee) == 1 and addressee[0] != act.speaker:
            targets.append(("listener", addressee[0], "addressed"))
        try:
            start, end = place_window(act.start, anchor_end, meeting.end, rule, meeting_start=meeting.start)
        except WindowError as exc:
            for role, target, basis in targets:
                c = dataclasses.replace(
                    base, id=f"state:{act.id}:{target}", target=target, info={**info, "role": role, "basis": basis}
                )
                rejected.append(c.rejected(exc.reason, exc.detail))
            continue
        speech = {s: round(timeline.seconds(s, start, end), 3) for s in speakers}
        for role, target, basis in targets:
            c = dataclasses.replace(base, id=f"state:{act.id}:{target}", start=start, end=end, target=target)
            c = dataclasses.replace(c, info={**info, "role": role, "basis": basis, "speech_s": speech})
            own = speech.get(target, 0.0)
            others = round(sum(v for s, v in speech.items() if s != target), 3)
            said = f"{target} speaks {own:.3f} s in the window"
            if role == "speaker" and own < params.min_speaker_speech_s:
                c = c.rejected("target_silent", f"{said}, less than {params.min_speaker_speech_s} s")
            elif role == "listener" and own > params.max_listener_speech_s:
                c = c.rejected("listener_speaks", f"{said}, more than a listener's {params.max_listener_speech_s} s")
            elif role == "listener" and others < params.min_other_speech_s:
                why = f"the others speak {others:.3f} s in the window, less than {params.min_other_speech_s} s"
                c = c.rejected("nothing_to_hear", why)
            (pool if c.reason is None else rejected).append(c)
    return _result(pool, rejected)


# ---- Task 2: "you" windows ----
def _cut_around(start: float, end: float, focus: float, max_len: float) -> tuple[float, float]:
    """``[start, end]``, or its ``max_len`` part centred on ``focus`` when it is longer."""
    if end - start <= max_len:
        return start, end
    s = round(min(max(focus - max_len / 2, start), end - max_len), 3)
    return s, round(s + max_len, 3)


def mine_you(meeting: Meeting, params: YouParams = YouParams()) -> MiningResult:
    """50-70 s windows around utterances with a singular "you" and a resolvable addressee."""
    pool: list[Candidate] = []
    rejected: list[Candidate] = []
    for yc in you_candidates(meeting, you_type=params.you_type):
        u, act = yc.usage, yc.act
        info: dict[str, Any] = {
            "speaker": u.speaker,
            "addressee": yc.addressee,
            "word_id": u.word_id,
            "word_start": u.start,
            "word_end": u.end,
            "you_type": u.type_id,
            "unsure": u.unsure,
            "act": act.id if act else None,
            "act_addressee": list(act.addressee) if act is not None and act.addressee is not None else None,
        }
        base = Candidate("you", f"you:{u.id}", meeting.id, u.id, u.start, u.end, info=info)
        if yc.reason is not None:
            rejected.append(base.rejected(yc.reason, yc.detail or yc.reason))
            continue
        if params.skip_unsure and u.unsure:
            rejected.append(base.rejected("unsure", "the annotator marked this usage unsure"))
            continue
        a_start, a_end = _cut_around(act.start, act.end, (u.start + u.end) / 2, params.max_anchor_s)
        info["utterance"] = meeting.text(act.spans)
        info["anchor_cut"] = (a_start, a_end) != (act.start, act.end)
        base = dataclasses.replace(base, anchor_start=a_start, anchor_end=a_end, info=info)
        try:
            start, end = place_window(a_start, a_end, meeting.end, params.window, meeting_start=meeting.start)
        except WindowError as exc:
            rejected.append(base.rejected(exc.reason, exc.detail))
            continue
        pool.append(dataclasses.replace(base, start=start, end=end))
    return _result(pool, rejected)


# ---- Task 3: consensus windows ----
def _consensus_evidence(
    meeting: Meeting, inside: list[DialogueAct], pairs, params: ConsensusParams, words: set[str]
) -> dict[str, Any]:
    """Proposal-response pairs and agreement markers among the acts ``inside`` a window."""
    ids = {a.id for a in inside}
    proposal_types = set(params.proposal_act_types)
    agree_types = set(params.agreement_pair_types)
    responses = [
        {
            "pair": p.id,
            "type": p.type,
            "proposal": s.id,
            "proposer": s.speaker,
            "response": t.id,
            "responder": t.speaker,
        }
        for p, s, t in pairs
        if s and t and s.id in ids and t.id in ids and s.type in proposal_types and t.speaker != s.speaker
    ]
    agreed = {
        t.id: p.type
        for p, s, t in pairs
        if t is not None and t.id in ids and p.type in agree_types and (s is None or s.speaker != t.speaker)
    }
    markers, last_proposer = [], None
    for a in inside:
        if a.type in proposal_types:
            last_proposer = a.speaker
            continue
        if last_proposer is None or a.speaker == last_proposer:
            continue  # agreement needs someone else's proposal before it in the window
        # an agreeing pair, else an agreement word among the act's first ``marker_words`` words
        opening = [t.text.lower().strip('.,!?;:"') for t in meeting.tokens(a.spans) if t.is_word]
        word = next((w for w in opening[: params.marker_words] if w in words), None)
        cue = f"pair:{agreed[a.id]}" if a.id in agreed else f"word:{word}" if word else None
        if cue:
            markers.append({"act": a.id, "speaker": a.speaker, "cue": cue})
    return {
        "proposal_responses": responses,
        "agreement_markers": markers,
        "agreeing": sorted({m["speaker"] for m in markers}),
    }


def _lengths(rule: WindowRule, step: float) -> list[float]:
    """The preferred length, then longer ones by ``step`` up to the maximum."""
    out = [rule.preferred_s]
    while step > 0 and out[-1] + step < rule.max_s - _EPS:
        out.append(out[-1] + step)
    if out[-1] < rule.max_s - _EPS and step > 0:
        out.append(rule.max_s)
    return out


def mine_consensus(meeting: Meeting, params: ConsensusParams = ConsensusParams()) -> MiningResult:
    """Windows around decisions with that evidence, grown by ``grow_step_s`` while lacking it."""
    acts = meeting.dialogue_acts
    mids = [(a.start + a.end) / 2 for a in acts]
    order = sorted(range(len(acts)), key=lambda i: mids[i])
    sorted_mids = [mids[i] for i in order]
    words = {w.lower() for w in params.agreement_words}
    pairs = [(p, meeting.act(p.source), meeting.act(p.target)) for p in meeting.adjacency_pairs]
    pool: list[Candidate] = []
    rejected: list[Candidate] = []
    for d in meeting.decisions:
        a_start = round(max(d.start, d.end - params.max_anchor_s), 3)
        info: dict[str, Any] = {"decision_start": d.start, "decision_end": d.end, "anchor_cut": a_start > d.start}
        base = Candidate("consensus", f"consensus:{d.id}", meeting.id, d.id, a_start, d.end, info=info)
        verdict: Candidate | None = None
        tried: set[tuple[float, float]] = set()
        for length in _lengths(params.window, params.grow_step_s):
            rule = dataclasses.replace(params.window, preferred_s=length)
            try:
                start, end = place_window(a_start, d.end, meeting.end, rule, meeting_start=meeting.start)
            except WindowError as exc:
                verdict = base.rejected(exc.reason, exc.detail)
                break
            if (start, end) in tried:
                continue  # the anchor already needed this window; a longer try changes nothing
            tried.add((start, end))
            # Acts of the window: those whose midpoint lies in it, in time order.
            lo, hi = bisect.bisect_left(sorted_mids, start), bisect.bisect_left(sorted_mids, end)
            inside = sorted((acts[order[k]] for k in range(lo, hi)), key=lambda a: (a.start, a.id))
            evidence = _consensus_evidence(meeting, inside, pairs, params, words)
            c = dataclasses.replace(base, start=start, end=end, info={**info, **evidence})
            n_resp, n_mark = len(c.info["proposal_responses"]), len(c.info["agreement_markers"])
            within = f"in the {end - start:.0f} s window"
            if n_resp < params.min_proposal_responses:
                why = f"{n_resp} proposal-response pair(s) {within}, fewer than {params.min_proposal_responses}"
                verdict = c.rejected("no_proposal_response", why)
            elif n_mark < params.min_agreement_markers:
                why = f"{n_mark} agreement marker(s) {within}, fewer than {params.min_agreement_markers}"
                verdict = c.rejected("no_agreement_marker", why)
            else:
                verdict = c
                break
        (pool if verdict.reason is None else rejected).append(verdict)
    return _result(pool, rejected)


# ---- All tasks ----
def mine_meeting(meeting: Meeting, params: MiningParams = MiningParams(), tasks: Sequence[str] = TASKS) -> MiningResult:
    unknown = sorted(set(tasks) - set(TASKS))
    if unknown:
        raise ConfigError(f"unknown task(s) {', '.join(unknown)} (known: {', '.join(TASKS)})")
    miners = {"state": mine_state, "you": mine_you, "consensus": mine_consensus}
    return MiningResult.combine(miners[t](meeting, getattr(params, t)) for t in TASKS if t in tasks)


def mine_corpus(
    meetings: Iterable[Meeting], params: MiningParams = MiningParams(), tasks: Sequence[str] = TASKS
) -> MiningResult:
    """Every meeting mined; kept candidates by meeting, task and start, rejected ones by anchor start."""
    with gc_paused():
        return MiningResult.combine([mine_meeting(m, params, tasks) for m in meetings])
