"""Transcript windowing (pure): the words or utterances of a time window, speaker letters and times relative to its
start. A word belongs to the window holding its midpoint; an utterance to every window it overlaps (``rule="overlap"``,
clipped, ``partial``), only wholly inside (``"inside"``), or by its midpoint (``"midpoint"``)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Word:
    speaker: str
    start: float
    end: float
    text: str


Utterance = Word  # the same fields: a speaker's turn rather than one word


@dataclass(frozen=True)
class WindowItem:
    """A word or utterance inside a window: ``start``/``end`` are seconds after the window start."""

    speaker: str
    start: float
    end: float
    text: str
    partial: bool = False  # it extends beyond the window (its times are clipped to the window)


def _letter(speaker: str, speakers: Mapping[str, str] | None) -> str:
    if speakers is None:
        return speaker
    if speaker not in speakers:
        raise ValueError(f"speaker {speaker!r} has no letter (known: {', '.join(sorted(speakers))})")
    return speakers[speaker]


def _sorted(items: list[WindowItem]) -> list[WindowItem]:
    return sorted(items, key=lambda i: (i.start, i.end, i.speaker))


def window_words(
    words: Sequence[Word], start: float, end: float, *, speakers: Mapping[str, str] | None = None
) -> list[WindowItem]:
    """Words whose midpoint lies in ``[start, end)``, in time order, times relative to ``start``, clipped."""
    return window_utterances(words, start, end, speakers=speakers, rule="midpoint")


def window_utterances(
    utterances: Sequence[Utterance],
    start: float,
    end: float,
    *,
    speakers: Mapping[str, str] | None = None,
    rule: Literal["overlap", "inside", "midpoint"] = "overlap",
) -> list[WindowItem]:
    """Utterances of ``[start, end)`` under ``rule`` (see the module doc), in time order."""
    if start < 0 or end <= start:
        raise ValueError(f"window [{start}, {end}) is empty or negative")
    if rule not in ("overlap", "inside", "midpoint"):
        raise ValueError(f"unknown rule {rule!r}")
    out = []
    for u in utterances:
        if u.end < u.start:
            raise ValueError(f"{u!r} ends before it starts")
        if rule == "overlap":
            keep = (u.start < end and u.end > start) or (u.start == u.end and start <= u.start < end)
        elif rule == "inside":
            keep = start <= u.start and u.end <= end
        else:
            keep = start <= (u.start + u.end) / 2 < end
        if not keep:
            continue
        s, e = round(max(u.start, start) - start, 3), round(min(u.end, end) - start, 3)  # clipped, relative
        partial = rule != "inside" and (u.start < start or u.end > end)
        out.append(WindowItem(_letter(u.speaker, speakers), s, e, u.text, partial))
    return _sorted(out)


def words_to_utterances(items: Sequence[WindowItem], max_gap: float = 1.0) -> list[WindowItem]:
    """Join time-ordered words into turns: one speaker's consecutive words at most ``max_gap`` s apart."""
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


class SpanIndex:
    """The items of a timeline (``start``/``end`` seconds) that may meet a window, found by bisection: ``near(a, b)`` is
    an ordered superset of the items overlapping ``[a, b]``, for the caller's exact rule."""

    def __init__(self, items: Sequence[Mapping[str, Any]]):
        self.items = items
        self._order = sorted(range(len(items)), key=lambda i: items[i]["start"])
        self._starts = [items[i]["start"] for i in self._order]
        self._longest = max((it["end"] - it["start"] for it in items), default=0.0)

    def near(self, a: float, b: float) -> list[Mapping[str, Any]]:
        """Items starting in ``[a - longest, b]``: every item overlapping ``[a, b]`` starts in it."""
        lo = bisect_left(self._starts, a - self._longest)
        hi = bisect_left(self._starts, b)
        while hi < len(self._starts) and self._starts[hi] == b:
            hi += 1
        return [self.items[i] for i in sorted(self._order[lo:hi])]


_INDEXES: dict[int, SpanIndex] = {}


def span_index(items: Sequence[Mapping[str, Any]]) -> SpanIndex:
    """The ``SpanIndex`` of ``items``, built once per sequence object (a few kept: one per meeting in turn)."""
    index = _INDEXES.get(id(items))
    if index is None or index.items is not items:
        if len(_INDEXES) >= 8:
            _INDEXES.clear()
        index = _INDEXES[id(items)] = SpanIndex(items)
    return index
