"""Reader for the AMI manual annotations in NITE XML (NXT), laid out as in the official release.

I/O stays at the edges: :func:`load_resources`, :func:`parse_meeting` and :func:`parse_corpus` read
files; the per-layer functions (:func:`parse_words`, :func:`parse_ontology`, ...) take parsed XML
elements and return dataclasses plus a list of :class:`Problem`.

Nothing about one meeting is fatal: a missing layer, a file that is not well-formed XML, a NITE
href that names no element, reversed or overlapping word times, a speaker letter that
``corpusResources/meetings.xml`` does not list all become :class:`Problem` entries (meeting, file,
element id, kind, message) and the rest of the meeting is kept. ``strict=True`` turns the first
problem of an error kind into a :class:`~socialbench.core.errors.DataError` instead.

Layers and what they become (paths relative to the AMI folder, ``M`` the meeting, ``X`` a speaker
letter A-D, called ``nxt_agent`` in meetings.xml):

* ``words/M.X.words.xml``            -> :class:`Token` (words, punctuation, vocal sounds,
  disfluency markers, gaps) in file order, times in seconds;
* ``segments/M.X.segments.xml``      -> :class:`Segment`;
* ``dialogueActs/M.X.dialog-act.xml`` -> :class:`DialogueAct` (type from ``ontologies/da-types.xml``,
  the ``addressee`` attribute as letters);
* ``dialogueActs/M.adjacency-pairs.xml`` -> :class:`AdjacencyPair` (type from ``ap-types.xml``);
* ``youUsages/M.X.you.xml``          -> :class:`YouUsage` (type from ``you-types.xml``);
* ``decision/manual/M.decision.xml`` -> :class:`Decision` (word ranges turned into time spans);
* ``topics/M.topic.xml``             -> :class:`Topic` (nested topics flattened, ``parent`` kept);
* ``participantRoles/M.X.role.xml``  -> :class:`RoleSpan`;
* ``corpusResources/meetings.xml``   -> :class:`Participant` per letter, and the meeting's duration.
"""

from __future__ import annotations

import gc
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

from socialbench.core.errors import DataError
from socialbench.media.transcript import Word as TranscriptWord

NITE_NS = "http://nite.sourceforge.net/"
_NID = f"{{{NITE_NS}}}id"
_CHILD = f"{{{NITE_NS}}}child"
_POINTER = f"{{{NITE_NS}}}pointer"

MEETING_ID = re.compile(r"^[A-Z]{2}\d{4}[a-z]?$")
SPEAKER_LETTER = re.compile(r"^[A-Z]$")
# file#id(X) or file#id(X)..id(Y): the only href forms the release uses.
_HREF = re.compile(r"^([^#\s]+)#id\(([^()\s]+)\)(?:\.\.id\(([^()\s]+)\))?$")
# Times in the release have two or three decimals; anything below this is rounding noise.
TIME_EPS = 1e-6

MEETINGS_XML = "corpusResources/meetings.xml"
ONTOLOGY_FILES = ("da-types.xml", "ap-types.xml", "you-types.xml", "default-topics.xml")

# Per-speaker layers (one file per letter) and per-meeting layers.
SPEAKER_LAYERS = {
    "words": "words/{meeting}.{speaker}.words.xml",
    "segments": "segments/{meeting}.{speaker}.segments.xml",
    "dialogue_acts": "dialogueActs/{meeting}.{speaker}.dialog-act.xml",
    "you_usages": "youUsages/{meeting}.{speaker}.you.xml",
    "roles": "participantRoles/{meeting}.{speaker}.role.xml",
}
MEETING_LAYERS = {
    "adjacency_pairs": "dialogueActs/{meeting}.adjacency-pairs.xml",
    "decisions": "decision/manual/{meeting}.decision.xml",
    "topics": "topics/{meeting}.topic.xml",
}

# Problem kinds that mean the data contradicts itself (``strict`` raises on these); the others
# (a missing layer, an untimed word) are how the release is.
ERROR_KINDS = frozenset(
    {
        "malformed_xml",
        "unreadable",
        "bad_href",
        "dangling_href",
        "reversed_range",
        "bad_time",
        "reversed_times",
        "overlapping_times",
        "unknown_speaker",
        "unknown_addressee",
        "duplicate_id",
        "missing_id",
    }
)


# --------------------------------------------------------------------------------------------
# Records


@dataclass(frozen=True)
class Problem:
    """One report entry: what is wrong (``kind``, ``message``), in which meeting, file (relative to
    the AMI folder) and element (its ``nite:id``, when it has one)."""

    meeting: str
    file: str
    element: str | None
    kind: str
    message: str

    @property
    def is_error(self) -> bool:
        return self.kind in ERROR_KINDS

    def error(self, ami_dir: str | Path | None = None) -> DataError:
        path = Path(ami_dir) / self.file if ami_dir is not None else self.file
        return DataError(str(path), f"meeting {self.meeting}: {self.message}", record=self.element)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class OntologyType:
    id: str
    name: str
    gloss: str | None
    parent: str | None


@dataclass(frozen=True)
class Participant:
    """A speaker letter of one meeting, from ``corpusResources/meetings.xml``."""

    letter: str  # nxt_agent: A-D, the letter of the words files and of addressee attributes
    participant: str | None  # global_name: the person (e.g. FEE005), constant across meetings
    speaker_id: str  # the <speaker> element's nite:id, e.g. ES2002a_1
    role: str | None  # PM, ME, UI, ID in scenario meetings
    channel: str | None = None
    camera: str | None = None


@dataclass(frozen=True)
class MeetingInfo:
    id: str
    element: str  # nite:id of the <meeting> element
    type: str | None
    duration: float | None
    participants: Mapping[str, Participant]


@dataclass(frozen=True)
class Token:
    """One element of a words file, in file order: a word (``kind="w"``, punctuation has
    ``punc=True``), a vocal sound (``text`` is its type: laugh, cough...), a disfluency marker, a
    gap or a transformation error (``text`` empty)."""

    id: str
    speaker: str
    index: int  # position in its words file (0-based); NITE ranges are index ranges
    kind: str
    text: str
    start: float
    end: float
    timed: bool = True  # False: the file gives no usable times; they come from the neighbours
    punc: bool = False
    trunc: bool = False

    @property
    def is_word(self) -> bool:
        """A spoken word (not punctuation, not a sound or marker)."""
        return self.kind == "w" and not self.punc


@dataclass(frozen=True)
class Span:
    """A NITE child range resolved to tokens of one words file: indices ``first..last`` inclusive
    and the time they cover."""

    speaker: str
    first: int
    last: int
    first_id: str
    last_id: str
    start: float
    end: float


@dataclass(frozen=True)
class Segment:
    id: str
    speaker: str
    start: float  # transcriber_start (the span's time when absent)
    end: float
    channel: str | None
    spans: tuple[Span, ...]


@dataclass(frozen=True)
class DialogueAct:
    id: str
    speaker: str
    start: float
    end: float
    spans: tuple[Span, ...]
    type: str | None  # ontology name: inf, sug, ass, bck, el.inf...; None when the act has no type
    type_id: str | None  # e.g. ami_da_4
    addressee: tuple[str, ...] | None  # letters named by the attribute, sorted; None: not annotated

    def contains(self, speaker: str, index: int) -> bool:
        """Whether token ``index`` of ``speaker``'s words file lies inside this act."""
        return any(s.speaker == speaker and s.first <= index <= s.last for s in self.spans)


@dataclass(frozen=True)
class AdjacencyPair:
    id: str
    type: str | None  # POS, NEG, UNC, PART, ELA
    source: str | None  # dialogue-act ids (None when the pair has no such pointer)
    target: str | None


@dataclass(frozen=True)
class YouUsage:
    id: str
    speaker: str
    word_id: str
    index: int
    start: float
    end: float
    type_id: str | None  # you_11 ...
    type: str | None  # ontology name: SINGULAR, PLURAL, GENERIC, DISCOURSE...
    unsure: bool | None


@dataclass(frozen=True)
class Decision:
    id: str
    start: float
    end: float
    spans: tuple[Span, ...]
    external: bool | None


@dataclass(frozen=True)
class Topic:
    id: str
    parent: str | None
    start: float | None  # over its own spans and those of its sub-topics; None when it has none
    end: float | None
    spans: tuple[Span, ...]
    type: str | None  # default-topics.xml name, e.g. "opening"
    description: str | None  # other_description


@dataclass(frozen=True)
class RoleSpan:
    id: str
    speaker: str
    start: float
    end: float
    type: str  # Neutral, Supporter, Protagonist, Gatekeeper, Attacker


@dataclass(frozen=True)
class Resources:
    """Corpus-wide files: ontologies (keyed by file name, then type id) and meetings.xml."""

    ontologies: Mapping[str, Mapping[str, OntologyType]]
    meetings: Mapping[str, MeetingInfo]
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class Meeting:
    id: str
    participants: Mapping[str, Participant]  # letter -> participant (from meetings.xml)
    words: Mapping[str, tuple[Token, ...]]  # letter -> tokens in file order
    segments: tuple[Segment, ...]
    dialogue_acts: tuple[DialogueAct, ...]  # by start time
    adjacency_pairs: tuple[AdjacencyPair, ...]
    you_usages: tuple[YouUsage, ...]  # by start time
    decisions: tuple[Decision, ...]
    topics: tuple[Topic, ...]
    roles: tuple[RoleSpan, ...]
    end: float  # the later of meetings.xml's duration and the last token's end
    problems: tuple[Problem, ...] = ()
    layers: frozenset[str] = frozenset()  # layers of which at least one file was read
    start: float = 0.0

    @property
    def speakers(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.words) | set(self.participants)))

    @cached_property
    def _tokens_by_id(self) -> dict[str, Token]:
        return {t.id: t for toks in self.words.values() for t in toks}

    @cached_property
    def _acts_by_id(self) -> dict[str, DialogueAct]:
        return {a.id: a for a in self.dialogue_acts}

    def token(self, token_id: str) -> Token | None:
        return self._tokens_by_id.get(token_id)

    def act(self, act_id: str | None) -> DialogueAct | None:
        return self._acts_by_id.get(act_id) if act_id is not None else None

    def tokens(self, spans: Span | Iterable[Span]) -> list[Token]:
        spans = [spans] if isinstance(spans, Span) else spans
        return [t for s in spans for t in self.words.get(s.speaker, ())[s.first : s.last + 1]]

    def text(self, spans: Span | Iterable[Span]) -> str:
        return words_text(self.tokens(spans))


@dataclass(frozen=True)
class Corpus:
    meetings: tuple[Meeting, ...]
    resource_problems: tuple[Problem, ...] = ()

    @property
    def problems(self) -> list[Problem]:
        return [*self.resource_problems, *(p for m in self.meetings for p in m.problems)]


def words_text(tokens: Iterable[Token]) -> str:
    """The words of ``tokens`` as text, punctuation attached to the word before it."""
    out: list[str] = []
    for t in tokens:
        if t.kind != "w" or not t.text:
            continue
        if t.punc and out:
            out[-1] += t.text
        else:
            out.append(t.text)
    return " ".join(out)


def transcript_words(meeting: Meeting) -> list[TranscriptWord]:
    """The meeting's words as :class:`socialbench.media.transcript.Word` (punctuation attached to
    the word before it), for the transcript-window functions."""
    out = []
    for speaker in sorted(meeting.words):
        out += _transcript(meeting.words[speaker], speaker)
    return out


def _transcript(tokens: Iterable[Token], speaker: str) -> list[TranscriptWord]:
    words: list[list] = []
    for t in tokens:
        if t.kind != "w" or not t.text:
            continue
        if t.punc and words:
            words[-1][2] += t.text
        else:
            words.append([t.start, t.end, t.text])
    return [TranscriptWord(speaker, s, e, text) for s, e, text in words]


def words_file(path: str | Path, speaker: str) -> list[TranscriptWord]:
    """The transcript words of one ``<meeting>.<letter>.words.xml`` file read on its own (no corpus
    around it), parsed as :func:`parse_words` parses it inside a meeting; its problems are not reported."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise DataError(str(path), f"not a readable words file: {exc}") from exc
    tokens, _ = parse_words(root, meeting=Path(path).name.split(".", 1)[0], speaker=speaker, file=str(path))
    return _transcript(tokens, speaker)


# --------------------------------------------------------------------------------------------
# Pure parsing of XML elements


class _Bad(Exception):
    """An element that cannot be resolved; becomes a Problem of ``kind``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


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
            if not letter:
                problems.append(Problem(mid, file, sp.get(_NID), "missing_id", "<speaker> without an nxt_agent letter"))
                continue
            if letter in participants:
                problems.append(
                    Problem(mid, file, sp.get(_NID), "duplicate_id", f"speaker letter {letter} listed twice")
                )
                continue
            participants[letter] = Participant(
                letter, sp.get("global_name"), sp.get(_NID, ""), sp.get("role"), sp.get("channel"), sp.get("camera")
            )
        meetings[mid] = MeetingInfo(mid, nid, el.get("type"), _float(el.get("duration")), participants)
    return meetings, problems


def parse_words(root: ET.Element, *, meeting: str, speaker: str, file: str) -> tuple[tuple[Token, ...], list[Problem]]:
    """The elements of one words file, in order. An element without times, or whose end precedes
    its start, gets the end of the element before it (or the start of the next timed one) as both
    times, ``timed=False``; an element starting before the previous timed one ends is kept as it is.
    Each case is a Problem."""
    problems: list[Problem] = []
    raw: list[tuple[ET.Element, str, float | None, float | None]] = []
    seen: set[str] = set()
    prev_timed: tuple[str, float] | None = None  # id and end of the last timed element
    for el in root:
        nid = el.get(_NID)
        if nid is None:
            problems.append(
                Problem(
                    meeting,
                    file,
                    None,
                    "missing_id",
                    f"<{_local(el.tag)}> without nite:id (element {len(raw) + 1}) left out",
                )
            )
            continue
        if nid in seen:
            problems.append(
                Problem(meeting, file, nid, "duplicate_id", "id used twice in the file; the later element is left out")
            )
            continue
        seen.add(nid)
        s_attr, e_attr = el.get("starttime"), el.get("endtime")
        start, end = _float(s_attr), _float(e_attr)
        if (s_attr is not None and start is None) or (e_attr is not None and end is None):
            problems.append(
                Problem(
                    meeting,
                    file,
                    nid,
                    "bad_time",
                    f"times starttime={s_attr!r} endtime={e_attr!r} are not numbers; taken from the neighbours",
                )
            )
            start = end = None
        elif start is None or end is None:
            problems.append(
                Problem(meeting, file, nid, "untimed_word", "no starttime/endtime; taken from the neighbours")
            )
            start = end = None
        elif end < start - TIME_EPS:
            problems.append(
                Problem(
                    meeting,
                    file,
                    nid,
                    "reversed_times",
                    f"ends at {end} s before it starts at {start} s; times taken from the neighbours",
                )
            )
            start = end = None
        if start is not None and end is not None:
            if prev_timed is not None and start < prev_timed[1] - TIME_EPS:
                problems.append(
                    Problem(
                        meeting,
                        file,
                        nid,
                        "overlapping_times",
                        f"starts at {start} s, before the previous element {prev_timed[0]} ends at {prev_timed[1]} s",
                    )
                )
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
        tokens.append(
            Token(nid, speaker, i, kind, text, start, end, timed, el.get("punc") == "true", el.get("trunc") == "true")
        )
    return tuple(tokens), problems


@dataclass
class _Ctx:
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
        return Span(
            self.speaker_of[wfile], a, b, first_id, last_id, min(t.start for t in toks), max(t.end for t in toks)
        )

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


def _spans(ctx: _Ctx, el: ET.Element, file: str, nid: str) -> list[Span]:
    """The element's child ranges; a bad one is reported and left out."""
    out = []
    for href in _children(el):
        try:
            out.append(ctx.span(href))
        except _Bad as bad:
            ctx.problem(file, nid, bad.kind, bad.message)
    return out


def _elements(ctx: _Ctx, root: ET.Element, tag: str, file: str) -> Iterable[tuple[ET.Element, str]]:
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


def parse_segments(ctx: _Ctx, root: ET.Element, *, speaker: str, file: str) -> list[Segment]:
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


def _addressee(ctx: _Ctx, value: str | None, file: str, nid: str, known: set[str]) -> tuple[str, ...] | None:
    if value is None:
        return None
    letters = tuple(sorted({x.strip() for x in value.split(",") if x.strip()}))
    unknown = [x for x in letters if x not in known]
    if unknown:
        ctx.problem(
            file,
            nid,
            "unknown_addressee",
            f"addressee {value!r} names {', '.join(unknown)}, not a"
            f" speaker of the meeting ({', '.join(sorted(known))})",
        )
    return letters


def _ontology_type(ctx: _Ctx, el: ET.Element, role: str, file: str, nid: str):
    """The ontology type an element's ``role`` pointer names, or None (a bad pointer is reported)."""
    type_ = None
    for r, href in _pointers(el):
        if r == role:
            try:
                type_ = ctx.type_of(href)
            except _Bad as bad:
                ctx.problem(file, nid, bad.kind, bad.message)
    return type_


def _anchored_spans(ctx: _Ctx, el: ET.Element, file: str, nid: str, what: str) -> list:
    """The word spans of an element that must have words; none (reported when it has no children
    at all: its hrefs are dangling) means the element is left out."""
    spans = _spans(ctx, el, file, nid)
    if not spans and not _children(el):
        ctx.problem(file, nid, "dangling_href", f"{what}; left out")
    return spans


def parse_dialogue_acts(
    ctx: _Ctx, root: ET.Element, *, speaker: str, file: str, speakers: set[str]
) -> tuple[list[DialogueAct], set[str]]:
    """The acts of one speaker's file, and every act id the file holds (also those of acts left
    out), which adjacency pairs point to. An act none of whose words resolve is left out."""
    out, ids = [], set()
    for el, nid in _elements(ctx, root, "dact", file):
        ids.add(nid)
        spans = _anchored_spans(ctx, el, file, nid, "dialogue act without words")
        if not spans:
            continue
        type_ = _ontology_type(ctx, el, "da-aspect", file, nid)
        addressee = _addressee(ctx, el.get("addressee"), file, nid, speakers)
        out.append(
            DialogueAct(
                nid,
                speaker,
                min(s.start for s in spans),
                max(s.end for s in spans),
                tuple(spans),
                type_.name if type_ else None,
                type_.id if type_ else None,
                addressee,
            )
        )
    return out, ids


def parse_adjacency_pairs(
    ctx: _Ctx, root: ET.Element, *, file: str, act_ids: Mapping[str, set[str]]
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
                ctx.problem(file, nid, bad.kind, bad.message)
        out.append(AdjacencyPair(nid, found["type"], found["source"], found["target"]))
    return out


def parse_you_usages(ctx: _Ctx, root: ET.Element, *, speaker: str, file: str) -> list[YouUsage]:
    out = []
    for el, nid in _elements(ctx, root, "you-usage", file):
        spans = _anchored_spans(ctx, el, file, nid, "you-usage without a word")
        if not spans:
            continue
        type_ = _ontology_type(ctx, el, "type", file, nid)
        unsure = el.get("unsure")
        s = spans[0]
        word = ctx.words[f"{ctx.meeting}.{s.speaker}.words.xml"][s.first]
        out.append(
            YouUsage(
                nid,
                speaker,
                word.id,
                word.index,
                word.start,
                word.end,
                type_.id if type_ else None,
                type_.name if type_ else None,
                None if unsure is None else unsure == "true",
            )
        )
    return out


def parse_decisions(ctx: _Ctx, root: ET.Element, *, file: str) -> list[Decision]:
    out = []
    for el, nid in _elements(ctx, root, "decision", file):
        spans = _anchored_spans(ctx, el, file, nid, "decision without words")
        if not spans:
            continue
        ext = el.get("external")
        out.append(
            Decision(
                nid,
                min(s.start for s in spans),
                max(s.end for s in spans),
                tuple(spans),
                None if ext is None else ext == "true",
            )
        )
    return out


def parse_topics(ctx: _Ctx, root: ET.Element, *, file: str) -> list[Topic]:
    """Topics in document order, sub-topics after their parent, each with its ``parent``."""
    out: list[Topic] = []
    seen: set[str] = set()

    def walk(el: ET.Element, parent: str | None) -> tuple[float | None, float | None]:
        nid = el.get(_NID)
        if nid is None or nid in seen:
            ctx.problem(
                file, nid, "missing_id" if nid is None else "duplicate_id", "topic without a unique nite:id; left out"
            )
            return None, None
        seen.add(nid)
        spans = _spans(ctx, el, file, nid)
        type_ = _ontology_type(ctx, el, "scenario_topic_type", file, nid)
        at = len(out)
        out.append(None)  # type: ignore[arg-type]  # placeholder: the parent comes before its sub-topics
        starts = [s.start for s in spans]
        ends = [s.end for s in spans]
        for sub in el:
            if _local(sub.tag) == "topic":
                s, e = walk(sub, nid)
                if s is not None:
                    starts.append(s)
                    ends.append(e)
        start, end = (min(starts), max(ends)) if starts else (None, None)
        out[at] = Topic(
            nid, parent, start, end, tuple(spans), type_.name if type_ else None, el.get("other_description")
        )
        return start, end

    for el in root:
        if _local(el.tag) == "topic":
            walk(el, None)
    return [t for t in out if t is not None]


def parse_roles(ctx: _Ctx, root: ET.Element, *, speaker: str, file: str) -> list[RoleSpan]:
    out = []
    for el, nid in _elements(ctx, root, "role", file):
        start, end = _float(el.get("starttime")), _float(el.get("endtime"))
        if start is None or end is None or end < start - TIME_EPS:
            ctx.problem(
                file, nid, "bad_time", f"role times {el.get('starttime')!r}..{el.get('endtime')!r} unusable; left out"
            )
            continue
        out.append(RoleSpan(nid, speaker, start, end, el.get("type", "")))
    return out


# --------------------------------------------------------------------------------------------
# The edges: reading files


def _read_xml(ami_dir: Path, rel: str, meeting: str, problems: list[Problem]) -> ET.Element | None:
    """The root element of ``ami_dir/rel``; None (and a Problem) when it is not well-formed or
    cannot be read. An absent file is None without a Problem (the caller knows whether it matters)."""
    path = ami_dir / rel
    if not path.is_file():
        return None
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as exc:
        problems.append(
            Problem(meeting, rel, None, "malformed_xml", f"not well-formed XML ({exc}); the file is left out")
        )
    except OSError as exc:
        problems.append(
            Problem(meeting, rel, None, "unreadable", f"cannot be read ({exc.strerror or exc}); the file is left out")
        )
    return None


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector: parsing (and mining) allocate millions of objects that
    form no cycles, and the collections they trigger took half the time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _check_dir(ami_dir: Path) -> None:
    if not ami_dir.is_dir():
        raise DataError(str(ami_dir), "not a folder (expected the AMI manual annotations: words/, dialogueActs/, ...)")


def load_resources(ami_dir: str | Path) -> Resources:
    """Ontologies and ``corpusResources/meetings.xml``; an absent or broken one is a Problem."""
    ami_dir = Path(ami_dir)
    _check_dir(ami_dir)
    problems: list[Problem] = []
    ontologies: dict[str, dict[str, OntologyType]] = {}
    for name in ONTOLOGY_FILES:
        rel = f"ontologies/{name}"
        root = _read_xml(ami_dir, rel, "", problems)
        if root is None:
            if not (ami_dir / rel).is_file():
                problems.append(Problem("", rel, None, "missing_layer", "ontology file absent; its types stay unknown"))
            continue
        ontologies[name] = parse_ontology(root)
    meetings: dict[str, MeetingInfo] = {}
    root = _read_xml(ami_dir, MEETINGS_XML, "", problems)
    if root is not None:
        meetings, more = parse_meetings_xml(root)
        problems += more
    elif not (ami_dir / MEETINGS_XML).is_file():
        problems.append(
            Problem("", MEETINGS_XML, None, "missing_layer", "absent; no meeting has participants or a duration")
        )
    return Resources(ontologies, meetings, tuple(problems))


def _layer_dirs() -> set[str]:
    return {p.split("/{meeting}")[0] for p in [*SPEAKER_LAYERS.values(), *MEETING_LAYERS.values()]}


def list_meetings(ami_dir: str | Path) -> list[str]:
    """Meeting ids that have a file in any annotation layer, sorted."""
    ami_dir = Path(ami_dir)
    _check_dir(ami_dir)
    found = set()
    for d in _layer_dirs():
        folder = ami_dir / d
        if folder.is_dir():
            for f in folder.glob("*.xml"):
                head = f.name.split(".", 1)[0]
                if MEETING_ID.match(head):
                    found.add(head)
    return sorted(found)


def _letters_on_disk(ami_dir: Path, meeting: str) -> dict[str, set[str]]:
    """Per speaker layer, the letters that have a file for ``meeting``."""
    out: dict[str, set[str]] = {}
    for layer, pattern in SPEAKER_LAYERS.items():
        folder, name = pattern.format(meeting=meeting, speaker="*").rsplit("/", 1)
        letters = set()
        for f in (ami_dir / folder).glob(name) if (ami_dir / folder).is_dir() else ():
            letter = f.name[len(meeting) + 1 :].split(".", 1)[0]
            if SPEAKER_LETTER.match(letter):
                letters.add(letter)
        out[layer] = letters
    return out


def parse_meeting(
    ami_dir: str | Path, meeting: str, *, resources: Resources | None = None, strict: bool = False
) -> Meeting:
    """Every layer of one meeting. Problems are collected in ``Meeting.problems``; with
    ``strict=True`` the first one of an error kind is raised as a DataError."""
    with gc_paused():
        return _parse_meeting(
            Path(ami_dir), meeting, resources if resources is not None else load_resources(ami_dir), strict
        )


def _parse_meeting(ami_dir: Path, meeting: str, resources: Resources, strict: bool) -> Meeting:
    info = resources.meetings.get(meeting)
    participants = dict(info.participants) if info else {}
    problems: list[Problem] = []
    if info is None:
        problems.append(
            Problem(
                meeting,
                MEETINGS_XML,
                None,
                "missing_layer",
                "meeting not listed in corpusResources/meetings.xml: no participants, no duration",
            )
        )

    on_disk = _letters_on_disk(ami_dir, meeting)
    speakers = set(participants).union(*on_disk.values())
    if info is not None:
        for letter in sorted(speakers - set(participants)):
            where = ", ".join(
                SPEAKER_LAYERS[lay].format(meeting=meeting, speaker=letter)
                for lay in SPEAKER_LAYERS
                if letter in on_disk[lay]
            )
            problems.append(
                Problem(
                    meeting,
                    MEETINGS_XML,
                    info.element or None,
                    "unknown_speaker",
                    f'speaker letter {letter} (in {where}) has no <speaker nxt_agent="{letter}"> for this meeting',
                )
            )
    layers: set[str] = set()
    for layer, letters in on_disk.items():
        pattern = SPEAKER_LAYERS[layer]
        if not letters:
            problems.append(
                Problem(
                    meeting, pattern.format(meeting=meeting, speaker="*"), None, "missing_layer", f"no {layer} files"
                )
            )
            continue
        for letter in sorted(speakers - letters):
            rel = pattern.format(meeting=meeting, speaker=letter)
            problems.append(Problem(meeting, rel, None, "missing_layer", f"no {layer} file for speaker {letter}"))

    # Words first: every other layer points into them.
    words: dict[str, tuple[Token, ...]] = {}
    for letter in sorted(on_disk["words"]):
        rel = SPEAKER_LAYERS["words"].format(meeting=meeting, speaker=letter)
        root = _read_xml(ami_dir, rel, meeting, problems)
        if root is None:
            continue
        toks, more = parse_words(root, meeting=meeting, speaker=letter, file=rel)
        problems += more
        words[letter] = toks
        layers.add("words")
    wfiles = {f"{meeting}.{s}.words.xml": s for s in words}
    ctx = _Ctx(
        meeting,
        {f: words[s] for f, s in wfiles.items()},
        {f: {t.id: t.index for t in words[s]} for f, s in wfiles.items()},
        wfiles,
        resources.ontologies,
        problems,
    )

    def roots(layer: str):
        """(letter, file, root element) of each readable file of a per-speaker layer."""
        for letter in sorted(on_disk[layer]):
            rel = SPEAKER_LAYERS[layer].format(meeting=meeting, speaker=letter)
            root = _read_xml(ami_dir, rel, meeting, problems)
            if root is not None:
                layers.add(layer)
                yield letter, rel, root

    def per_meeting(layer: str):
        rel = MEETING_LAYERS[layer].format(meeting=meeting)
        if not (ami_dir / rel).is_file():
            problems.append(Problem(meeting, rel, None, "missing_layer", f"no {layer} file"))
            return None, rel
        root = _read_xml(ami_dir, rel, meeting, problems)
        if root is not None:
            layers.add(layer)
        return root, rel

    segments = [s for x, rel, r in roots("segments") for s in parse_segments(ctx, r, speaker=x, file=rel)]
    acts: list[DialogueAct] = []
    act_ids: dict[str, set[str]] = {}  # dialog-act file name -> ids it holds
    for x, rel, r in roots("dialogue_acts"):
        found, ids = parse_dialogue_acts(ctx, r, speaker=x, file=rel, speakers=speakers)
        acts += found
        act_ids[rel.rsplit("/", 1)[1]] = ids
    yous = [u for x, rel, r in roots("you_usages") for u in parse_you_usages(ctx, r, speaker=x, file=rel)]
    roles = [o for x, rel, r in roots("roles") for o in parse_roles(ctx, r, speaker=x, file=rel)]
    root, rel = per_meeting("adjacency_pairs")
    pairs = parse_adjacency_pairs(ctx, root, file=rel, act_ids=act_ids) if root is not None else []
    root, rel = per_meeting("decisions")
    decisions = parse_decisions(ctx, root, file=rel) if root is not None else []
    root, rel = per_meeting("topics")
    topics = parse_topics(ctx, root, file=rel) if root is not None else []

    last = max((t.end for toks in words.values() for t in toks), default=0.0)
    end = max(last, info.duration or 0.0) if info else last
    result = Meeting(
        id=meeting,
        participants=participants,
        words=words,
        segments=tuple(sorted(segments, key=lambda s: (s.start, s.speaker, s.id))),
        dialogue_acts=tuple(sorted(acts, key=lambda a: (a.start, a.end, a.id))),
        adjacency_pairs=tuple(pairs),
        you_usages=tuple(sorted(yous, key=lambda u: (u.start, u.id))),
        decisions=tuple(sorted(decisions, key=lambda d: (d.start, d.id))),
        topics=tuple(topics),
        roles=tuple(sorted(roles, key=lambda r: (r.speaker, r.start, r.id))),
        end=end,
        problems=tuple(problems),
        layers=frozenset(layers),
    )
    if strict:
        first = next((p for p in problems if p.is_error), None)
        if first is not None:
            raise first.error(ami_dir)
    return result


def parse_corpus(ami_dir: str | Path, meetings: Sequence[str] | None = None, *, strict: bool = False) -> Corpus:
    """Every meeting of the folder (or those named), with the corpus-wide resources read once.
    A folder with no meeting at all, or a named meeting with no file, is a DataError."""
    ami_dir = Path(ami_dir)
    resources = load_resources(ami_dir)
    available = list_meetings(ami_dir)
    if not available:
        raise DataError(str(ami_dir), "no AMI meeting found (expected files like words/<meeting>.<letter>.words.xml)")
    if meetings is None:
        meetings = available
    else:
        absent = sorted(set(meetings) - set(available))
        if absent:
            raise DataError(str(ami_dir), f"no annotation file for meeting(s) {', '.join(absent)}")
    if strict:
        first = next((p for p in resources.problems if p.is_error), None)
        if first is not None:
            raise first.error(ami_dir)
    with gc_paused():
        parsed = tuple(_parse_meeting(ami_dir, m, resources, strict) for m in meetings)
    return Corpus(parsed, resources.problems)
