"""``you`` events: a singular deictic "you" (``you_11``) in a dialogue act of the same speaker naming exactly
one other addressee; :func:`you_candidates` keeps every you-usage with the reason it is not one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from fractions import Fraction

from socialbench.meetingtom.dataset.ami.records import DialogueAct, Meeting, YouUsage
from socialbench.meetingtom.schema.mining import YOU_SINGULAR  # noqa: F401 (re-exported)
from socialbench.results.numbers import half_up, percent


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
    """A you-usage, its dialogue act (if any), and its single addressee or why it has none (``reason``)."""

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


def you_candidates(meeting: Meeting, *, you_type: str = YOU_SINGULAR) -> list[YouCandidate]:
    """Every you-usage of the meeting, by start time, with its addressee or why it has none."""
    acts_by_speaker: dict[str, list[DialogueAct]] = {}
    for a in meeting.dialogue_acts:
        acts_by_speaker.setdefault(a.speaker, []).append(a)
    participants = set(meeting.participants) or set(meeting.speakers)
    out = []
    for u in meeting.you_usages:
        # the first act (by start) of its speaker that contains its word
        act = next((a for a in acts_by_speaker.get(u.speaker, []) if a.contains(u.speaker, u.index)), None)
        addressee, reason, detail = None, None, None
        if u.type_id != you_type:
            kind = f"{u.type or 'unknown'} ({u.type_id or 'no type'})"
            reason, detail = "not_singular", f"you type {kind} is not {you_type}"
        elif act is None:
            reason, detail = "outside_act", f"word {u.word_id} lies in no dialogue act of speaker {u.speaker}"
        elif act.addressee is None:
            reason, detail = "no_addressee", f"dialogue act {act.id} has no addressee attribute"
        elif len(act.addressee) != 1:
            names = f"names {len(act.addressee)} addressees ({','.join(act.addressee)})"
            reason, detail = "several_addressees", f"dialogue act {act.id} {names}"
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


#: The you-usages layer's deictic types: singular, and plural with its two sub-types.
YOU_PLURAL = ("you_12", "you_121", "you_122")


def layer_agreement(candidates: Iterable[YouCandidate], *, you_type: str = YOU_SINGULAR) -> dict:
    """How the two AMI layers of the real Task 2.1 gold agree (in place of the paper's human kappa): singular or
    plural "you" against one addressee or a ``group``, as 2x2 counts, the share agreeing and Cohen's kappa."""
    return _agreement(
        ((c.meeting, c.usage.type_id, c.act is not None, c.act.addressee if c.act else None) for c in candidates),
        you_type,
    )


def layer_agreement_records(records: Iterable[dict], *, you_type: str = YOU_SINGULAR) -> dict:
    """:func:`layer_agreement` from the mined ``you`` candidates as written (kept and rejected)."""
    infos = [(r["meeting"], r.get("info") or {}) for r in records if r.get("task") == "you"]
    rows = [(m, i.get("you_type"), i.get("act") is not None, i.get("act_addressee")) for m, i in infos]
    return _agreement(rows, you_type)


def _agreement(rows: Iterable[tuple], you_type: str) -> dict:
    rows = list(rows)
    annotated = {m for m, _, in_act, addressee in rows if in_act and addressee is not None}
    table = {"singular": {"one": 0, "group": 0}, "plural": {"one": 0, "group": 0}}
    for meeting, type_id, in_act, addressee in rows:
        kind = "singular" if type_id == you_type else "plural" if type_id in YOU_PLURAL else None
        if kind is None or not in_act or meeting not in annotated:
            continue
        table[kind]["one" if addressee is not None and len(addressee) == 1 else "group"] += 1
    n = sum(v for row in table.values() for v in row.values())
    agree = table["singular"]["one"] + table["plural"]["group"]
    kappa = None
    if n:
        p_o = Fraction(agree, n)  # exact, so the kappa rounds half-up as every reported number does
        rows_p = {k: Fraction(sum(table[k].values()), n) for k in table}
        cols = {c: Fraction(sum(table[k][c] for k in table), n) for c in ("one", "group")}
        p_e = rows_p["singular"] * cols["one"] + rows_p["plural"] * cols["group"]
        kappa = None if p_e == 1 else half_up((p_o - p_e) / (1 - p_e), 4)
    return {"n": n, "table": table, "agreement": percent(agree, n), "kappa": kappa, "meetings": sorted(annotated)}
