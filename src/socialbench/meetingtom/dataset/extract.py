"""Per meeting, what the later stages need from its NXT annotations: :data:`FILES` of JSON lines and
``meeting.json`` (empty files and a note for a source whose release is absent)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.io import parse_json_object, read_file_bytes, read_jsonl, write_json, write_jsonl
from socialbench.meetingtom.dataset.ami.mining import MiningParams, mine_meeting
from socialbench.meetingtom.dataset.ami.nxt import parse_corpus
from socialbench.meetingtom.dataset.ami.records import transcript_words
from socialbench.meetingtom.dataset.ami.you_events import you_events

FILES = (
    "you_events.jsonl",
    "candidates.jsonl",
    "rejected.jsonl",
    "problems.jsonl",
    "words.jsonl",
    "acts.jsonl",
    "pairs.jsonl",
    "topics.jsonl",
)
MEETING_FILE = "meeting.json"


def meeting_record(meeting, source: str, counts: Mapping[str, Any]) -> dict[str, Any]:
    """``meeting.json``: the participants (camera, role, person), span, layers read and counts written."""
    return {
        "meeting": meeting.id,
        "source": source,
        "start": meeting.start,
        "end": meeting.end,
        "participants": {
            x: {"camera": p.camera, "role": p.role, "participant": p.participant}
            for x, p in sorted(meeting.participants.items())
        },
        "speakers": list(meeting.speakers),
        "layers": sorted(meeting.layers),
        "counts": dict(counts),
        "note": None,
    }


def context_records(meeting) -> dict[str, list[dict[str, Any]]]:
    """Dialogue acts, adjacency pairs and topics as JSON records (for Task 2.2 and the contextual priors)."""
    return {
        "acts.jsonl": [
            {
                "id": a.id,
                "speaker": a.speaker,
                "start": a.start,
                "end": a.end,
                "type": a.type,
                "addressee": list(a.addressee) if a.addressee is not None else None,
            }
            for a in meeting.dialogue_acts
        ],
        "pairs.jsonl": [
            {"id": p.id, "type": p.type, "source": p.source, "target": p.target} for p in meeting.adjacency_pairs
        ],
        "topics.jsonl": [
            {"id": t.id, "parent": t.parent, "start": t.start, "end": t.end, "type": t.type} for t in meeting.topics
        ],
    }


def extract_meeting(
    annotations: str | Path, meeting_id: str, source: str, mining: Mapping[str, Any] | None
) -> dict[str, list | dict]:
    """Every file of one meeting's folder, as records (``meeting.json`` under ``"meeting"``)."""
    params = MiningParams.from_mapping(mining)
    corpus = parse_corpus(annotations, [meeting_id])
    (meeting,) = corpus.meetings
    words = transcript_words(meeting)
    events = [e.as_dict() for e in you_events(meeting)]
    result = mine_meeting(meeting, params)
    out = {
        "you_events.jsonl": events,
        "candidates.jsonl": [c.as_dict() for c in result.accepted],
        "rejected.jsonl": [c.as_dict() for c in result.rejected],
        # corpus-wide problems (ontologies, meetings.xml) too: they can affect this meeting
        "problems.jsonl": [p.as_dict() for p in corpus.problems],
        # the transcript words (punctuation attached), by speaker then time
        "words.jsonl": [{"speaker": w.speaker, "start": w.start, "end": w.end, "text": w.text} for w in words],
        **context_records(meeting),
    }
    counts = {name.split(".")[0]: len(recs) for name, recs in out.items()}
    out[MEETING_FILE] = meeting_record(meeting, source, counts)
    return out


def absent_meeting(meeting_id: str, source: str, note: str) -> dict[str, list | dict]:
    """Empty files and the record of a meeting without annotations, with the ``note`` why."""
    out: dict[str, list | dict] = {name: [] for name in FILES}
    out[MEETING_FILE] = {
        "meeting": meeting_id,
        "source": source,
        "start": None,
        "end": None,
        "participants": {},
        "speakers": [],
        "layers": [],
        "counts": {n.split(".")[0]: 0 for n in FILES},
        "note": note,
    }
    return out


def write_meeting(out_dir: str | Path, files: Mapping[str, list | dict]) -> None:
    for name, recs in files.items():
        (write_jsonl if name.endswith(".jsonl") else write_json)(Path(out_dir) / name, recs)


def read_meeting(folder: str | Path) -> dict[str, Any]:
    """A meeting folder written by :func:`write_meeting`, read back (a bad file is a DataError naming it)."""
    folder = Path(folder)
    path = folder / MEETING_FILE
    if not path.is_file():
        raise DataError(str(path), "no meeting record: run socialbench meetingtom extract for this meeting first")
    out: dict[str, Any] = {MEETING_FILE: parse_json_object(read_file_bytes(path), str(path), "(a meeting record)")}
    for name in FILES:
        out[name] = read_jsonl(folder / name)
    return out
