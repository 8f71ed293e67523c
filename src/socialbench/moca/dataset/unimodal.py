"""Unimodal consistency filtering (appendix B.1.1 gives only the heading; the definition is ours:
docs/moca-sources.md). A candidate passes when each modality on its own is usable and neither alone
states the social meaning: the text has ``text_min_words`` to ``text_max_words`` words of natural language,
names no explicit cue (``#sarcasm``) and does not restate the image description; image and clip meet their
size and length bounds. The first check that fails removes the record."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from socialbench.core.errors import ConfigError
from socialbench.moca.dataset.preprocess import FilterResult, known_keys, removal

STAGE = "unimodal"
REASONS = tuple(
    (
        "text_too_short text_too_long text_not_language explicit_cue text_restates_image image_too_small "
        "video_too_short video_too_long"
    ).split()
)
FLAGS = ("visual_unchecked",)

DEFAULT_CUES = tuple(
    "#sarcasm #sarcastic #irony #ironic #not #jk #joke #joking #kidding #satire #sarcasmo /s /sarcasm /j".split()
)

# Function words left out of the restatement overlap (they say nothing about what is depicted).
STOPWORDS = frozenset(
    """
a an the and or but if of to in on at by for with from as is are was were be been being am do does did
have has had it its it's this that these those there here i me my we our you your he him his she her they
them their what which who whom when where why how not no so too very just than then can will would should
could may might must shall up down out over under again more most some any all each both few such only own
same s t don now into about after before while because until against between through during above below off
""".split()
)

_WORD = re.compile(r"#?[^\W_]+(?:['’][^\W_]+)*")
_HASH_GAP = re.compile(r"#\s+(?=\w)")  # tokenized sources write "# tag"


@dataclass(frozen=True)
class UnimodalParams:
    """``moca.unimodal`` in params.yaml."""

    text_min_words: int = 3
    text_max_words: int = 120
    text_min_letter_ratio: float = 0.6
    explicit_cues: tuple[str, ...] = DEFAULT_CUES
    restatement_max_overlap: float = 0.8
    restatement_min_words: int = 3
    image_min_side: int = 64
    video_min_seconds: float = 0.5
    video_max_seconds: float = 60.0

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> UnimodalParams:
        raw = known_keys("moca.unimodal", raw, cls.__dataclass_fields__)
        if "explicit_cues" in raw:
            raw["explicit_cues"] = tuple(str(c).lower() for c in raw["explicit_cues"])
        p = cls(**raw)
        if p.text_min_words > p.text_max_words:
            raise ConfigError("moca.unimodal: text_min_words must not exceed text_max_words")
        if p.video_min_seconds > p.video_max_seconds:
            raise ConfigError("moca.unimodal: video_min_seconds must not exceed video_max_seconds")
        for name in ("text_min_letter_ratio", "restatement_max_overlap"):
            if not 0 <= getattr(p, name) <= 1:
                raise ConfigError(f"moca.unimodal.{name}: {getattr(p, name)} is not in [0, 1]")
        return p


def words(text: str) -> list[str]:
    """Words and hashtags (``# tag`` joined to ``#tag``), lowercased; emojis and punctuation are not words."""
    return [w.lower() for w in _WORD.findall(_HASH_GAP.sub("#", text))]


def letter_ratio(text: str) -> float:
    """Letters among the non-space characters that are not symbols (emojis, ©, ...)."""
    counted = [ch for ch in text if not ch.isspace() and not unicodedata.category(ch).startswith("S")]
    if not counted:
        return 0.0
    return sum(1 for ch in counted if ch.isalpha()) / len(counted)


def explicit_cue(text: str, cues: Sequence[str]) -> str | None:
    """The first cue of ``cues`` that occurs in the text as a whole token (case-insensitive)."""
    tokens = set(_HASH_GAP.sub("#", text).lower().split())
    tokens |= {t.strip(".,!?;:\"'()[]") for t in tokens}
    for cue in cues:
        if cue.lower() in tokens:
            return cue
    return None


def content_words(text: str) -> set[str]:
    return {w.lstrip("#") for w in words(text) if len(w.lstrip("#")) > 1 and w.lstrip("#") not in STOPWORDS}


def restatement(text: str, descriptions: Sequence[str]) -> tuple[float, int]:
    """(share of the text's content words found in the image descriptions, number of content words)."""
    mine = content_words(text)
    if not mine or not descriptions:
        return 0.0, len(mine)
    theirs = set().union(*(content_words(d) for d in descriptions))
    return len(mine & theirs) / len(mine), len(mine)


def unimodal_problem(rec: Mapping[str, Any], p: UnimodalParams) -> tuple[str, str] | None:
    """The first failed check of the module docstring as (reason, detail), or None."""
    text = rec["text"]
    n = len(words(text))
    if n < p.text_min_words:
        return "text_too_short", f"{n} word(s) < text_min_words {p.text_min_words}: {text[:80]!r}"
    if n > p.text_max_words:
        return "text_too_long", f"{n} words > text_max_words {p.text_max_words}"
    ratio = letter_ratio(text)
    if ratio < p.text_min_letter_ratio:
        why = f"letters are {ratio:.2f} of the characters < text_min_letter_ratio {p.text_min_letter_ratio}"
        return "text_not_language", why
    cue = explicit_cue(text, p.explicit_cues)
    if cue is not None:
        return "explicit_cue", f"the text names its meaning with {cue!r}"
    overlap, nwords = restatement(text, rec.get("image_description", []))
    if nwords >= p.restatement_min_words and overlap > p.restatement_max_overlap:
        return "text_restates_image", (
            f"{overlap:.2f} of the text's {nwords} content words are in the image description"
            f" > restatement_max_overlap {p.restatement_max_overlap}"
        )
    for m in rec.get("media_info", []):
        if m.get("kind") == "image" and m.get("width") and m.get("height"):
            if min(m["width"], m["height"]) < p.image_min_side:
                why = f"{m['width']}x{m['height']}, shorter side < image_min_side {p.image_min_side}"
                return "image_too_small", f"{m['path']}: {why}"
        if m.get("kind") == "video" and m.get("duration") is not None:
            if m["duration"] < p.video_min_seconds:
                return (
                    "video_too_short",
                    f"{m['path']}: {m['duration']:.2f} s < video_min_seconds {p.video_min_seconds}",
                )
            if m["duration"] > p.video_max_seconds:
                return "video_too_long", f"{m['path']}: {m['duration']:.2f} s > video_max_seconds {p.video_max_seconds}"
    return None


def unimodal_filter(records: Sequence[Mapping[str, Any]], params: UnimodalParams) -> FilterResult:
    """Kept records (in order, flagged ``visual_unchecked`` where undecoded) and removed ones with reasons."""
    result = FilterResult()
    for rec in records:
        problem = unimodal_problem(rec, params)
        if problem is not None:
            result.removed.append(removal(rec, STAGE, problem[0], problem[1]))
            continue
        new = dict(rec)
        flags = dict(rec.get("flags", {}))
        if not rec.get("media_info"):
            flags["visual_unchecked"] = True
        new["flags"] = flags
        result.kept.append(new)
    result.removed.sort(key=lambda e: e["id"])
    return result
