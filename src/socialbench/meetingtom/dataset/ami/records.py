"""The AMI annotations as records (what :mod:`.nxt` reads from the NITE XML layers), the meeting and corpus
around them and the :class:`Problem` entries reading them left; no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

from socialbench.core.errors import DataError
from socialbench.media.transcript import Word as TranscriptWord

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


@dataclass(frozen=True)
class Problem:
    """One report entry: ``kind`` and ``message``, in which meeting, file (under the AMI folder) and element."""

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
    """One element of a words file: a word (``kind="w"``; punctuation ``punc``), a vocal sound (``text`` its
    type), a disfluency marker, a gap or a transformation error (``text`` empty)."""

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
    """A NITE child range resolved to tokens of one words file (``first..last`` inclusive) and its time."""

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
    return " ".join(w.text for w in transcript_of(tokens, ""))


def transcript_words(meeting: Meeting) -> list[TranscriptWord]:
    """The meeting's words as transcript ``Word`` records (punctuation attached), for the windows."""
    return [w for speaker in sorted(meeting.words) for w in transcript_of(meeting.words[speaker], speaker)]


def transcript_of(tokens: Iterable[Token], speaker: str) -> list[TranscriptWord]:
    words: list[list] = []
    for t in tokens:
        if t.kind != "w" or not t.text:
            continue
        if t.punc and words:
            words[-1][2] += t.text
        else:
            words.append([t.start, t.end, t.text])
    return [TranscriptWord(speaker, s, e, text) for s, e, text in words]
