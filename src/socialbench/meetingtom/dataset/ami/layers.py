"""Pure parsing of the NITE XML layers of one AMI meeting into records (:mod:`.records`) and Problem entries,
hrefs between files resolved through a :class:`LayerContext`; :mod:`.nxt` reads the files."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from socialbench.meetingtom.dataset.ami.records import (
    AdjacencyPair,
    Decision,
    DialogueAct,
    MeetingInfo,
    OntologyType,
    Participant,
    Problem,
    RoleSpan,
    Segment,
    Span,
    Token,
    Topic,
    YouUsage,
)

NITE_NS = "http://nite.sourceforge.net/"
_NID = f"{{{NITE_NS}}}id"
_CHILD = f"{{{NITE_NS}}}child"
_POINTER = f"{{{NITE_NS}}}pointer"
# file#id(X) or file#id(X)..id(Y): the only href forms the release uses.
_HREF = re.compile(r"^([^#\s]+)#id\(([^()\s]+)\)(?:\.\.id\(([^()\s]+)\))?$")
# Times in the release have two or three decimals; anything below this is rounding noise.
TIME_EPS = 1e-6

MEETINGS_XML = "corpusResources/meetings.xml"


class _Bad(Exception):
    """An element that cannot be resolved: ``args`` are the kind and message of its Problem."""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_href(href: str) -> tuple[str, str, str]:
    """``file#id(X)`` or ``file#id(X)..id(Y)`` -> ``(file, X, Y)`` (``Y == X`` for a single id)."""
    m = _HREF.match(href.strip())
    if m is None:
        raise ValueError(f"not a NITE href: {href!r}")
    return m.group(1), m.group(2), m.group(3) or m.group(2)


def parse_ontology(root: ET.Element) -> dict[str, OntologyType]:
    """Every element of an ontology file with a ``nite:id`` (the root included), with its parent."""
    out: dict[str, OntologyType] = {}

    def walk(el: ET.Element, parent: str | None) -> None:
        nid = el.get(_NID)
        if nid is not None:
            out[nid] = OntologyType(nid, el.get("name", nid), el.get("gloss"), parent)
        for child in el:
            walk(child, nid if nid is not None else parent)

    walk(root, None)
    return out


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        f = float(value)
    except ValueError:
        return None
    return f if f == f and abs(f) != float("inf") else None


def parse_meetings_xml(root: ET.Element, file: str = MEETINGS_XML) -> tuple[dict[str, MeetingInfo], list[Problem]]:
    """``corpusResources/meetings.xml``: per meeting (``observation``), its speaker letters."""
    meetings: dict[str, MeetingInfo] = {}
    problems: list[Problem] = []
    for el in root:
        if _local(el.tag) != "meeting":
            continue
        mid = el.get("observation")
        nid = el.get(_NID, "")
        if not mid:
            problems.append(Problem("", file, nid or None, "missing_id", "<meeting> without an observation attribute"))
            continue
        participants: dict[str, Participant] = {}
        for sp in el:
            if _local(sp.tag) != "speaker":
                continue
            letter = sp.get("nxt_agent")
            if not letter or letter in participants:
                why = f"speaker letter {letter} listed twice" if letter else "<speaker> without an nxt_agent letter"
                problems.append(Problem(mid, file, sp.get(_NID), "duplicate_id" if letter else "missing_id", why))
                continue
            participants[letter] = Participant(
                letter, sp.get("global_name"), sp.get(_NID, ""), sp.get("role"), sp.get("channel"), sp.get("camera")
            )
        meetings[mid] = MeetingInfo(mid, nid, el.get("type"), _float(el.get("duration")), participants)
    return meetings, problems


def parse_words(root: ET.Element, *, meeting: str, speaker: str, file: str) -> tuple[tuple[Token, ...], list[Problem]]:
    """The elements of one words file, in order; one without usable times gets its neighbour's (``timed=False``).
    Each such case is a Problem."""
    problems: list[Problem] = []
    raw: list[tuple[ET.Element, str, float | None, float | None]] = []
    seen: set[str] = set()
    prev_timed: tuple[str, float] | None = None  # id and end of the last timed element

    def bad(nid: str | None, kind: str, message: str) -> None:
        problems.append(Problem(meeting, file, nid, kind, message))

    for el in root:
        nid = el.get(_NID)
        if nid is None:
            bad(None, "missing_id", f"<{_local(el.tag)}> without nite:id (element {len(raw) + 1}) left out")
            continue
        if nid in seen:
            bad(nid, "duplicate_id", "id used twice in the file; the later element is left out")
            continue
        seen.add(nid)
        s_attr, e_attr = el.get("starttime"), el.get("endtime")
        start, end = _float(s_attr), _float(e_attr)
        kind = None
        if (s_attr is not None and start is None) or (e_attr is not None and end is None):
            kind, why = "bad_time", f"times starttime={s_attr!r} endtime={e_attr!r} are not numbers;"
        elif start is None or end is None:
            kind, why = "untimed_word", "no starttime/endtime;"
        elif end < start - TIME_EPS:
            kind, why = "reversed_times", f"ends at {end} s before it starts at {start} s; times"
        if kind is not None:
            bad(nid, kind, f"{why} taken from the neighbours")
            start = end = None
        else:
            if prev_timed is not None and start < prev_timed[1] - TIME_EPS:
                previous = f"the previous element {prev_timed[0]} ends at {prev_timed[1]} s"
                bad(nid, "overlapping_times", f"starts at {start} s, before {previous}")
            prev_timed = (nid, end)
        raw.append((el, nid, start, end))

    tokens: list[Token] = []
    for i, (el, nid, start, end) in enumerate(raw):
        timed = start is not None and end is not None
        if not timed:
            if tokens:
                start = end = tokens[-1].end
            else:
                nxt = next((s for _, _, s, e in raw[i + 1 :] if s is not None and e is not None), None)
                start = end = nxt if nxt is not None else 0.0
        kind = _local(el.tag)
        text = (el.text or "").strip() if kind == "w" else (el.get("type", "") if kind == "vocalsound" else "")
        punc, trunc = el.get("punc") == "true", el.get("trunc") == "true"
        tokens.append(Token(nid, speaker, i, kind, text, start, end, timed, punc, trunc))
    return tuple(tokens), problems


@dataclass
class LayerContext:
    """What resolving hrefs of one meeting needs, and where its problems go."""

    meeting: str
    words: Mapping[str, Sequence[Token]]  # words file name -> tokens
    positions: Mapping[str, Mapping[str, int]]  # words file name -> id -> index
    speaker_of: Mapping[str, str]  # words file name -> letter
    ontologies: Mapping[str, Mapping[str, OntologyType]]
    problems: list[Problem] = field(default_factory=list)

    def problem(self, file: str, element: str | None, kind: str, message: str) -> None:
        self.problems.append(Problem(self.meeting, file, element, kind, message))

    def span(self, href: str) -> Span:
        try:
            wfile, first_id, last_id = parse_href(href)
        except ValueError as exc:
            raise _Bad("bad_href", str(exc)) from None
        pos = self.positions.get(wfile)
        if pos is None:
            raise _Bad("dangling_href", f"href {href!r} points into {wfile}, which was not read (absent or unreadable)")
        for i in (first_id, last_id):
            if i not in pos:
                raise _Bad("dangling_href", f"href {href!r}: {wfile} has no element {i}")
        a, b = pos[first_id], pos[last_id]
        if b < a:
            raise _Bad("reversed_range", f"href {href!r}: {last_id} comes before {first_id} in {wfile}")
        toks = self.words[wfile][a : b + 1]
        start, end = min(t.start for t in toks), max(t.end for t in toks)
        return Span(self.speaker_of[wfile], a, b, first_id, last_id, start, end)

    def type_of(self, href: str) -> OntologyType:
        try:
            ofile, tid, _ = parse_href(href)
        except ValueError as exc:
            raise _Bad("bad_href", str(exc)) from None
        types = self.ontologies.get(ofile)
        if types is None:
            raise _Bad("dangling_href", f"href {href!r} points into ontology {ofile}, which was not read")
        if tid not in types:
            raise _Bad("dangling_href", f"href {href!r}: {ofile} has no type {tid}")
        return types[tid]


def _children(el: ET.Element) -> list[str]:
    return [c.get("href", "") for c in el if c.tag == _CHILD]


def _pointers(el: ET.Element) -> list[tuple[str, str]]:
    return [(p.get("role", ""), p.get("href", "")) for p in el if p.tag == _POINTER]


def _spans(ctx: LayerContext, el: ET.Element, file: str, nid: str) -> list[Span]:
    """The element's child ranges; a bad one is reported and left out."""
    out = []
    for href in _children(el):
        try:
            out.append(ctx.span(href))
        except _Bad as bad:
            ctx.problem(file, nid, *bad.args)
    return out


def _elements(ctx: LayerContext, root: ET.Element, tag: str, file: str) -> Iterable[tuple[ET.Element, str]]:
    """``tag`` children of ``root`` with their ids; one without an id is reported and skipped."""
    seen: set[str] = set()
    for n, el in enumerate(root, 1):
        if _local(el.tag) != tag:
            continue
        nid = el.get(_NID)
        if nid is None:
            ctx.problem(file, None, "missing_id", f"<{tag}> number {n} has no nite:id; left out")
            continue
        if nid in seen:
            ctx.problem(file, nid, "duplicate_id", "id used twice in the file; the later element is left out")
            continue
        seen.add(nid)
        yield el, nid


def parse_segments(ctx: LayerContext, root: ET.Element, *, speaker: str, file: str) -> list[Segment]:
    out = []
    for el, nid in _elements(ctx, root, "segment", file):
        spans = _spans(ctx, el, file, nid)
        start, end = _float(el.get("transcriber_start")), _float(el.get("transcriber_end"))
        if start is None or end is None:
            if not spans:
                ctx.problem(
                    file, nid, "bad_time", "segment with neither transcriber times nor resolvable words; left out"
                )
                continue
            start, end = min(s.start for s in spans), max(s.end for s in spans)
        out.append(Segment(nid, speaker, start, end, el.get("channel"), tuple(spans)))
    return out


def _addressee(ctx: LayerContext, value: str | None, file: str, nid: str, known: set[str]) -> tuple[str, ...] | None:
    if value is None:
        return None
    letters = tuple(sorted({x.strip() for x in value.split(",") if x.strip()}))
    unknown = [x for x in letters if x not in known]
    if unknown:
        why = f"addressee {value!r} names {', '.join(unknown)}, not a speaker of the meeting"
        ctx.problem(file, nid, "unknown_addressee", f"{why} ({', '.join(sorted(known))})")
    return letters


def _ontology_type(ctx: LayerContext, el: ET.Element, role: str, file: str, nid: str):
    """The ontology type an element's ``role`` pointer names, or None (a bad pointer is reported)."""
    type_ = None
    for r, href in _pointers(el):
        if r == role:
            try:
                type_ = ctx.type_of(href)
            except _Bad as bad:
                ctx.problem(file, nid, *bad.args)
    return type_


def _anchored_spans(ctx: LayerContext, el: ET.Element, file: str, nid: str, what: str) -> list:
    """The word spans of an element that must have words; none (dangling hrefs reported) leaves it out."""
    spans = _spans(ctx, el, file, nid)
    if not spans and not _children(el):
        ctx.problem(file, nid, "dangling_href", f"{what}; left out")
    return spans


def parse_dialogue_acts(
    ctx: LayerContext, root: ET.Element, *, speaker: str, file: str, speakers: set[str]
) -> tuple[list[DialogueAct], set[str]]:
    """The acts of one speaker's file with words, and every act id it holds (adjacency pairs point to them)."""
    out, ids = [], set()
    for el, nid in _elements(ctx, root, "dact", file):
        ids.add(nid)
        spans = _anchored_spans(ctx, el, file, nid, "dialogue act without words")
        if not spans:
            continue
        type_ = _ontology_type(ctx, el, "da-aspect", file, nid)
        name, tid = (type_.name, type_.id) if type_ else (None, None)
        addressee = _addressee(ctx, el.get("addressee"), file, nid, speakers)
        start, end = min(s.start for s in spans), max(s.end for s in spans)
        out.append(DialogueAct(nid, speaker, start, end, tuple(spans), name, tid, addressee))
    return out, ids


def parse_adjacency_pairs(
    ctx: LayerContext, root: ET.Element, *, file: str, act_ids: Mapping[str, set[str]]
) -> list[AdjacencyPair]:
    """Pairs; a pointer to an act that its file does not hold is reported and left None."""
    out = []
    for el, nid in _elements(ctx, root, "adjacency-pair", file):
        found: dict[str, str | None] = {"type": None, "source": None, "target": None}
        for role, href in _pointers(el):
            if role not in found:
                continue
            try:
                if role == "type":
                    found[role] = ctx.type_of(href).name
                    continue
                afile, aid, _ = parse_href(href)
                if afile not in act_ids:
                    raise _Bad("dangling_href", f"{role} href {href!r} points into {afile}, which was not read")
                if aid not in act_ids[afile]:
                    raise _Bad("dangling_href", f"{role} href {href!r}: {afile} has no dialogue act {aid}")
                found[role] = aid
            except ValueError as exc:
                ctx.problem(file, nid, "bad_href", str(exc))
            except _Bad as bad:
                ctx.problem(file, nid, *bad.args)
        out.append(AdjacencyPair(nid, found["type"], found["source"], found["target"]))
    return out


def parse_you_usages(ctx: LayerContext, root: ET.Element, *, speaker: str, file: str) -> list[YouUsage]:
    out = []
    for el, nid in _elements(ctx, root, "you-usage", file):
        spans = _anchored_spans(ctx, el, file, nid, "you-usage without a word")
        if not spans:
            continue
        type_ = _ontology_type(ctx, el, "type", file, nid)
        tid, name = (type_.id, type_.name) if type_ else (None, None)
        unsure = None if el.get("unsure") is None else el.get("unsure") == "true"
        w = ctx.words[f"{ctx.meeting}.{spans[0].speaker}.words.xml"][spans[0].first]
        out.append(YouUsage(nid, speaker, w.id, w.index, w.start, w.end, tid, name, unsure))
    return out


def parse_decisions(ctx: LayerContext, root: ET.Element, *, file: str) -> list[Decision]:
    out = []
    for el, nid in _elements(ctx, root, "decision", file):
        spans = _anchored_spans(ctx, el, file, nid, "decision without words")
        if not spans:
            continue
        external = None if el.get("external") is None else el.get("external") == "true"
        out.append(Decision(nid, min(s.start for s in spans), max(s.end for s in spans), tuple(spans), external))
    return out


def parse_topics(ctx: LayerContext, root: ET.Element, *, file: str) -> list[Topic]:
    """Topics in document order, sub-topics after their parent, each with its ``parent``."""
    out: list[Topic] = []
    seen: set[str] = set()

    def walk(el: ET.Element, parent: str | None) -> tuple[float | None, float | None]:
        nid = el.get(_NID)
        if nid is None or nid in seen:
            kind = "missing_id" if nid is None else "duplicate_id"
            ctx.problem(file, nid, kind, "topic without a unique nite:id; left out")
            return None, None
        seen.add(nid)
        spans = _spans(ctx, el, file, nid)
        type_ = _ontology_type(ctx, el, "scenario_topic_type", file, nid)
        at = len(out)
        out.append(None)  # type: ignore[arg-type]  # placeholder: the parent comes before its sub-topics
        times = [(s.start, s.end) for s in spans]
        times += [t for sub in el if _local(sub.tag) == "topic" and (t := walk(sub, nid))[0] is not None]
        start, end = (min(s for s, _ in times), max(e for _, e in times)) if times else (None, None)
        name = type_.name if type_ else None
        out[at] = Topic(nid, parent, start, end, tuple(spans), name, el.get("other_description"))
        return start, end

    for el in root:
        if _local(el.tag) == "topic":
            walk(el, None)
    return [t for t in out if t is not None]


def parse_roles(ctx: LayerContext, root: ET.Element, *, speaker: str, file: str) -> list[RoleSpan]:
    out = []
    for el, nid in _elements(ctx, root, "role", file):
        start, end = _float(el.get("starttime")), _float(el.get("endtime"))
        if start is None or end is None or end < start - TIME_EPS:
            why = f"role times {el.get('starttime')!r}..{el.get('endtime')!r} unusable; left out"
            ctx.problem(file, nid, "bad_time", why)
            continue
        out.append(RoleSpan(nid, speaker, start, end, el.get("type", "")))
    return out
