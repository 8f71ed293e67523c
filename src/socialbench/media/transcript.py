"""Transcript windowing: the words or utterances of a time window, with speaker letters and
times relative to the window start. Pure functions, except :func:`parse_ami_words` (reads XML).

Rules (docs/media.md):

* a word belongs to a window when its midpoint lies in ``[start, end)``, so consecutive windows
  share no word and lose none (a word straddling the boundary is clipped and marked ``partial``);
* an utterance, by default, belongs to every window it overlaps (``rule="overlap"``); its times
  are clipped to the window and ``partial`` says it was cut. ``rule="inside"`` keeps only
  utterances wholly inside the window, ``rule="midpoint"`` applies the word rule;
* times are seconds after the window start, rounded to the millisecond;
* speakers become letters through ``speakers`` (id -> letter); without it the ids are used as
  they are (AMI speakers already are letters A-D, matching the mosaic labels).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from socialbench.core.errors import DataError


@dataclass(frozen=True)
class Word:
    speaker: str
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Utterance:
    speaker: str
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class WindowItem:
    """A word or utterance inside a window: ``start``/``end`` are seconds after the window start."""

    speaker: str
    start: float
    end: float
    text: str
    partial: bool = False  # it extends beyond the window (its times are clipped to the window)


def _check_window(start: float, end: float) -> None:
    if start < 0 or end <= start:
        raise ValueError(f"window [{start}, {end}) is empty or negative")


def _check_item(item: Word | Utterance) -> None:
    if item.end < item.start:
        raise ValueError(f"{item!r} ends before it starts")


def _letter(speaker: str, speakers: Mapping[str, str] | None) -> str:
    if speakers is None:
        return speaker
    if speaker not in speakers:
        raise ValueError(f"speaker {speaker!r} has no letter (known: {', '.join(sorted(speakers))})")
    return speakers[speaker]


def _rel(t: float, start: float) -> float:
    return round(t - start, 3)


def _sorted(items: list[WindowItem]) -> list[WindowItem]:
    return sorted(items, key=lambda i: (i.start, i.end, i.speaker))


def speaker_letters(speakers: Iterable[str]) -> dict[str, str]:
    """Letters A, B, C, ... for speaker ids in order of first appearance."""
    out: dict[str, str] = {}
    for s in speakers:
        if s not in out:
            if len(out) >= 26:
                raise ValueError("more than 26 speakers")
            out[s] = chr(ord("A") + len(out))
    return out


def window_words(
    words: Sequence[Word], start: float, end: float, *, speakers: Mapping[str, str] | None = None
) -> list[WindowItem]:
    """Words whose midpoint lies in ``[start, end)``, in time order, times relative to ``start``
    and clipped to the window."""
    _check_window(start, end)
    out = []
    for w in words:
        _check_item(w)
        mid = (w.start + w.end) / 2
        if start <= mid < end:
            s, e = max(w.start, start), min(w.end, end)
            partial = w.start < start or w.end > end
            out.append(WindowItem(_letter(w.speaker, speakers), _rel(s, start), _rel(e, start), w.text, partial))
    return _sorted(out)


def window_utterances(
    utterances: Sequence[Utterance],
    start: float,
    end: float,
    *,
    speakers: Mapping[str, str] | None = None,
    rule: Literal["overlap", "inside", "midpoint"] = "overlap",
) -> list[WindowItem]:
    """Utterances of ``[start, end)`` under ``rule`` (see the module doc), in time order."""
    _check_window(start, end)
    if rule not in ("overlap", "inside", "midpoint"):
        raise ValueError(f"unknown rule {rule!r}")
    out = []
    for u in utterances:
        _check_item(u)
        if rule == "overlap":
            keep = (u.start < end and u.end > start) or (u.start == u.end and start <= u.start < end)
        elif rule == "inside":
            keep = start <= u.start and u.end <= end
        else:
            keep = start <= (u.start + u.end) / 2 < end
        if not keep:
            continue
        s, e = max(u.start, start), min(u.end, end)
        partial = rule != "inside" and (u.start < start or u.end > end)
        out.append(WindowItem(_letter(u.speaker, speakers), _rel(s, start), _rel(e, start), u.text, partial))
    return _sorted(out)


def words_to_utterances(items: Sequence[WindowItem], max_gap: float = 1.0) -> list[WindowItem]:
    """Join time-ordered words into turns: consecutive words of one speaker at most ``max_gap``
    seconds apart (another speaker's word in between starts a new turn)."""
    out: list[WindowItem] = []
    for w in _sorted(list(items)):
        last = out[-1] if out else None
        if last is not None and last.speaker == w.speaker and w.start - last.end <= max_gap:
            out[-1] = WindowItem(
                last.speaker, last.start, max(last.end, w.end), f"{last.text} {w.text}".strip(), last.partial
            )
        else:
            out.append(w)
    return out


def format_transcript(items: Sequence[WindowItem]) -> str:
    """One line per item: ``[start-end] A: text`` (seconds after the window start)."""
    return "\n".join(f"[{i.start:.2f}-{i.end:.2f}] {i.speaker}: {i.text}" for i in items)


def parse_ami_words(path: str | Path, speaker: str) -> list[Word]:
    """Words of one AMI ``<meeting>.<letter>.words.xml`` file (NITE XML).

    ``<w>`` elements are words; a ``punc="true"`` word is attached to the word before it; other
    elements (vocal sounds, disfluency markers, gaps) are not words. A word without times takes
    the end of the word before it (or the start of the next one), so none is dropped.
    """
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise DataError(str(path), f"not a readable AMI words file: {exc}") from exc
    raw: list[list] = []  # [start, end, text]
    for el in root.iter():
        if el.tag.rsplit("}", 1)[-1] != "w":
            continue
        text = (el.text or "").strip()
        if not text:
            continue
        try:
            start = float(el.attrib["starttime"]) if "starttime" in el.attrib else None
            end = float(el.attrib["endtime"]) if "endtime" in el.attrib else None
        except ValueError as exc:
            raise DataError(str(path), f"bad time on word {text!r}: {exc}") from exc
        if el.attrib.get("punc") == "true" and raw:
            raw[-1][2] += text
            continue
        raw.append([start, end, text])
    for i, r in enumerate(raw):
        if r[0] is None:
            prev_end = raw[i - 1][1] if i > 0 else None
            nxt = next((x[0] for x in raw[i + 1 :] if x[0] is not None), None)
            r[0] = prev_end if prev_end is not None else (nxt if nxt is not None else 0.0)
        if r[1] is None or r[1] < r[0]:
            r[1] = r[0]
    return [Word(speaker, r[0], r[1], r[2]) for r in raw]
