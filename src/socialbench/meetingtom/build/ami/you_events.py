"""``you`` events: singular deictic "you" whose addressee the dialogue-act layer names.

An event is a word of the you-usages layer with type ``you_11`` (``you-types.xml``: SINGULAR, a
child of DEICTIC, "deictic referential") that lies inside a dialogue act of the same speaker whose
``addressee`` attribute names exactly one participant. The addressee is that participant's speaker
letter (``nxt_agent``, A-D), the same letter system as ``speaker`` and the words files.

:func:`you_candidates` keeps every you-usage with the reason it is not an event (the Task 2 miner
reports them); :func:`you_events` keeps the events.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from socialbench.meetingtom.build.ami.nxt import DialogueAct, Meeting, YouUsage

YOU_SINGULAR = "you_11"


@dataclass(frozen=True)
class YouEvent:
    meeting: str
    speaker: str
    word_id: str
    start: float
    end: float
    addressee: str  # a speaker letter (A-D), never the speaker's own

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class YouCandidate:
    """A you-usage, the dialogue act it lies in (if any), and either its single addressee or why it
    has none (``reason`` is None exactly for events)."""

    meeting: str
    usage: YouUsage
    act: DialogueAct | None
    addressee: str | None
    reason: str | None  # a code: not_singular, outside_act, no_addressee, several_addressees, ...
    detail: str | None = None  # the reason in words, with the ids concerned

    def event(self) -> YouEvent | None:
        if self.reason is not None or self.addressee is None:
            return None
        u = self.usage
        return YouEvent(self.meeting, u.speaker, u.word_id, u.start, u.end, self.addressee)


def _act_of(usage: YouUsage, acts: list[DialogueAct]) -> DialogueAct | None:
    """The first act (by start) of the usage's speaker that contains its word."""
    return next((a for a in acts if a.contains(usage.speaker, usage.index)), None)


def you_candidates(meeting: Meeting, *, you_type: str = YOU_SINGULAR) -> list[YouCandidate]:
    """Every you-usage of the meeting, by start time, with its addressee or why it has none."""
    acts_by_speaker: dict[str, list[DialogueAct]] = {}
    for a in meeting.dialogue_acts:
        acts_by_speaker.setdefault(a.speaker, []).append(a)
    participants = set(meeting.participants) or set(meeting.speakers)
    out = []
    for u in meeting.you_usages:
        act = _act_of(u, acts_by_speaker.get(u.speaker, []))
        addressee, reason, detail = None, None, None
        if u.type_id != you_type:
            reason, detail = (
                "not_singular",
                f"you type {u.type or 'unknown'} ({u.type_id or 'no type'}) is not {you_type}",
            )
        elif act is None:
            reason, detail = "outside_act", f"word {u.word_id} lies in no dialogue act of speaker {u.speaker}"
        elif act.addressee is None:
            reason, detail = "no_addressee", f"dialogue act {act.id} has no addressee attribute"
        elif len(act.addressee) != 1:
            reason, detail = (
                "several_addressees",
                f"dialogue act {act.id} names {len(act.addressee)} addressees ({','.join(act.addressee)})",
            )
        elif act.addressee[0] == u.speaker:
            reason, detail = "self_addressed", f"dialogue act {act.id} names its own speaker {u.speaker} as addressee"
        elif act.addressee[0] not in participants:
            reason, detail = "unknown_addressee", f"addressee {act.addressee[0]} is not a participant of {meeting.id}"
        else:
            addressee = act.addressee[0]
        out.append(YouCandidate(meeting.id, u, act, addressee, reason, detail))
    return out


def you_events(meetings: Meeting | Iterable[Meeting], *, you_type: str = YOU_SINGULAR) -> list[YouEvent]:
    """The ``you`` events of one meeting or many, sorted by meeting, start time and word id."""
    meetings = [meetings] if isinstance(meetings, Meeting) else meetings
    events = [e for m in meetings for c in you_candidates(m, you_type=you_type) if (e := c.event()) is not None]
    return sorted(events, key=lambda e: (e.meeting, e.start, e.word_id))
