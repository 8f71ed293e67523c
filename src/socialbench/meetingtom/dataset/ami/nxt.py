"""Reader for the AMI manual annotations in NITE XML, laid out as in the official release (:data:`SPEAKER_LAYERS`,
:data:`MEETING_LAYERS`; parsing in :mod:`.layers`). Nothing about one meeting is fatal: every problem becomes a
:class:`Problem` entry and the rest is kept; ``strict=True`` raises the first of an error kind."""

from __future__ import annotations

import gc
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

from socialbench.core.errors import DataError
from socialbench.media.transcript import Word as TranscriptWord
from socialbench.meetingtom.dataset.ami.layers import (
    MEETINGS_XML,
    LayerContext,
    parse_adjacency_pairs,
    parse_decisions,
    parse_dialogue_acts,
    parse_meetings_xml,
    parse_ontology,
    parse_roles,
    parse_segments,
    parse_topics,
    parse_words,
    parse_you_usages,
)
from socialbench.meetingtom.dataset.ami.records import (
    Corpus,
    DialogueAct,
    Meeting,
    MeetingInfo,
    OntologyType,
    Problem,
    Resources,
    Token,
    transcript_of,
)

MEETING_ID = re.compile(r"^[A-Z]{2}\d{4}[a-z]?$")
SPEAKER_LETTER = re.compile(r"^[A-Z]$")

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


def words_file(path: str | Path, speaker: str) -> list[TranscriptWord]:
    """The transcript words of one words file read on its own (:func:`parse_words`; problems not reported)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise DataError(str(path), f"not a readable words file: {exc}") from exc
    tokens, _ = parse_words(root, meeting=Path(path).name.split(".", 1)[0], speaker=speaker, file=str(path))
    return transcript_of(tokens, speaker)


def _read_xml(
    ami_dir: Path, rel: str, meeting: str, problems: list[Problem], absent: str | None = None
) -> ET.Element | None:
    """The root element of ``ami_dir/rel``; None (and a Problem) when it is not well-formed or cannot be
    read. An absent file is None, a ``missing_layer`` Problem with message ``absent`` when given."""
    path = ami_dir / rel
    if not path.is_file():
        if absent is not None:
            problems.append(Problem(meeting, rel, None, "missing_layer", absent))
        return None
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as exc:
        kind, why = "malformed_xml", f"not well-formed XML ({exc})"
    except OSError as exc:
        kind, why = "unreadable", f"cannot be read ({exc.strerror or exc})"
    problems.append(Problem(meeting, rel, None, kind, f"{why}; the file is left out"))
    return None


@contextmanager
def gc_paused():
    """Pause the cyclic GC: parsing allocates millions of objects in no cycles, and collections took half the time."""
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
        root = _read_xml(ami_dir, f"ontologies/{name}", "", problems, "ontology file absent; its types stay unknown")
        if root is not None:
            ontologies[name] = parse_ontology(root)
    meetings: dict[str, MeetingInfo] = {}
    root = _read_xml(ami_dir, MEETINGS_XML, "", problems, "absent; no meeting has participants or a duration")
    if root is not None:
        meetings, more = parse_meetings_xml(root)
        problems += more
    return Resources(ontologies, meetings, tuple(problems))


def list_meetings(ami_dir: str | Path) -> list[str]:
    """Meeting ids that have a file in any annotation layer, sorted."""
    ami_dir = Path(ami_dir)
    _check_dir(ami_dir)
    dirs = {p.split("/{meeting}")[0] for p in [*SPEAKER_LAYERS.values(), *MEETING_LAYERS.values()]}
    heads = {f.name.split(".", 1)[0] for d in dirs if (ami_dir / d).is_dir() for f in (ami_dir / d).glob("*.xml")}
    return sorted(h for h in heads if MEETING_ID.match(h))


def _letters_on_disk(ami_dir: Path, meeting: str) -> dict[str, set[str]]:
    """Per speaker layer, the letters that have a file for ``meeting``."""
    out: dict[str, set[str]] = {}
    for layer, pattern in SPEAKER_LAYERS.items():
        folder, name = pattern.format(meeting=meeting, speaker="*").rsplit("/", 1)
        files = (ami_dir / folder).glob(name) if (ami_dir / folder).is_dir() else ()
        letters = {f.name[len(meeting) + 1 :].split(".", 1)[0] for f in files}
        out[layer] = {x for x in letters if SPEAKER_LETTER.match(x)}
    return out


@gc_paused()
def parse_meeting(
    ami_dir: str | Path, meeting: str, *, resources: Resources | None = None, strict: bool = False
) -> Meeting:
    """Every layer of one meeting; ``strict``: the first problem of an error kind raises a DataError."""
    ami_dir = Path(ami_dir)
    resources = resources if resources is not None else load_resources(ami_dir)
    info = resources.meetings.get(meeting)
    participants = dict(info.participants) if info else {}
    problems: list[Problem] = []

    def missing(rel: str, message: str, kind: str = "missing_layer", element: str | None = None) -> None:
        problems.append(Problem(meeting, rel, element, kind, message))

    if info is None:
        missing(MEETINGS_XML, "meeting not listed in corpusResources/meetings.xml: no participants, no duration")

    on_disk = _letters_on_disk(ami_dir, meeting)
    speakers = set(participants).union(*on_disk.values())
    if info is not None:
        for letter in sorted(speakers - set(participants)):
            where = ", ".join(
                SPEAKER_LAYERS[lay].format(meeting=meeting, speaker=letter)
                for lay in SPEAKER_LAYERS
                if letter in on_disk[lay]
            )
            why = f'speaker letter {letter} (in {where}) has no <speaker nxt_agent="{letter}"> for this meeting'
            missing(MEETINGS_XML, why, "unknown_speaker", info.element or None)
    layers: set[str] = set()
    for layer, letters in on_disk.items():
        pattern = SPEAKER_LAYERS[layer]
        if not letters:
            missing(pattern.format(meeting=meeting, speaker="*"), f"no {layer} files")
            continue
        for letter in sorted(speakers - letters):
            missing(pattern.format(meeting=meeting, speaker=letter), f"no {layer} file for speaker {letter}")

    def roots(layer: str):
        """(letter, file, root element) of each readable file of a per-speaker layer."""
        for letter in sorted(on_disk[layer]):
            rel = SPEAKER_LAYERS[layer].format(meeting=meeting, speaker=letter)
            root = _read_xml(ami_dir, rel, meeting, problems)
            if root is not None:
                layers.add(layer)
                yield letter, rel, root

    # Words first: every other layer points into them.
    words: dict[str, tuple[Token, ...]] = {}
    for letter, rel, root in roots("words"):
        words[letter], more = parse_words(root, meeting=meeting, speaker=letter, file=rel)
        problems += more
    wfiles = {f"{meeting}.{s}.words.xml": s for s in words}
    positions = {f: {t.id: t.index for t in words[s]} for f, s in wfiles.items()}
    tokens = {f: words[s] for f, s in wfiles.items()}
    ctx = LayerContext(meeting, tokens, positions, wfiles, resources.ontologies, problems)

    def per_meeting(layer: str, parse, **kw) -> list:
        """The records of a per-meeting layer's file (none when it is absent or unreadable)."""
        rel = MEETING_LAYERS[layer].format(meeting=meeting)
        root = _read_xml(ami_dir, rel, meeting, problems, f"no {layer} file")
        if root is None:
            return []
        layers.add(layer)
        return parse(ctx, root, file=rel, **kw)

    segments = [s for x, rel, r in roots("segments") for s in parse_segments(ctx, r, speaker=x, file=rel)]
    acts: list[DialogueAct] = []
    act_ids: dict[str, set[str]] = {}  # dialog-act file name -> ids it holds
    for x, rel, r in roots("dialogue_acts"):
        found, ids = parse_dialogue_acts(ctx, r, speaker=x, file=rel, speakers=speakers)
        acts += found
        act_ids[rel.rsplit("/", 1)[1]] = ids
    yous = [u for x, rel, r in roots("you_usages") for u in parse_you_usages(ctx, r, speaker=x, file=rel)]
    roles = [o for x, rel, r in roots("roles") for o in parse_roles(ctx, r, speaker=x, file=rel)]
    pairs = per_meeting("adjacency_pairs", parse_adjacency_pairs, act_ids=act_ids)
    decisions = per_meeting("decisions", parse_decisions)
    topics = per_meeting("topics", parse_topics)

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
    """Every meeting of the folder (or those named; one without a file is a DataError), resources read once."""
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
        parsed = tuple(parse_meeting(ami_dir, m, resources=resources, strict=strict) for m in meetings)
    return Corpus(parsed, resources.problems)
