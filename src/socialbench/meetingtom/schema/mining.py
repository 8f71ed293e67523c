"""The mining thresholds (params ``meetingtom.mining``): what makes a span a Task 1, 2 or 3 candidate. A contract of the
benchmark (schema/), so checking params imports no data-building code; dataset/ami/mining.py applies them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from socialbench.core.errors import ConfigError

#: The AMI you-type of a singular, addressed "you" (the only one Task 2.1 asks about).
YOU_SINGULAR = "you_11"
#: The AMI you-types (ontologies/you-types.xml of the AMI release: its ids and glosses), the values
#: ``you.you_type`` may take.
YOU_TYPES = {
    "you_1": "deictic",
    "you_11": "singular",
    "you_12": "plural",
    "you_121": "collective",
    "you_122": "distributive",
    "you_2": "generic",
    "you_3": "discourse marker",
}


@dataclass(frozen=True)
class WindowRule:
    """Window length (``preferred_s``, between ``min_s`` and ``max_s``) and the least context
    (``before_s``, ``after_s``) around the anchor before a window grows past ``preferred_s``."""

    preferred_s: float = 50.0
    min_s: float = 50.0
    max_s: float = 70.0
    before_s: float = 10.0
    after_s: float = 10.0

    def __post_init__(self) -> None:
        if not (0 < self.min_s <= self.preferred_s <= self.max_s):
            got = f"{self.min_s}, {self.preferred_s}, {self.max_s}"
            raise ConfigError(f"window lengths need 0 < min_s <= preferred_s <= max_s, got {got}")
        if self.before_s < 0 or self.after_s < 0:
            got = f"before_s={self.before_s}, after_s={self.after_s}"
            raise ConfigError(f"window context must not be negative, got {got}")


@dataclass(frozen=True)
class StateParams:
    window_s: float = 5.0
    min_speaker_speech_s: float = 1.5  # a target as speaker speaks at least this long in the window
    max_listener_speech_s: float = 1.0  # a target as listener speaks at most this long (a backchannel fits)
    min_other_speech_s: float = 2.0  # ... while the other participants speak at least this long
    listener_act_types: tuple[str, ...] = ("bck",)  # acts whose speaker is involved as listener
    skip_act_types: tuple[str, ...] = ("stl", "fra")  # stalls and fragments anchor nothing
    addressed_listeners: bool = True  # an act's single addressee is a listener target


@dataclass(frozen=True)
class YouParams:
    window: WindowRule = field(default_factory=WindowRule)
    max_anchor_s: float = 50.0
    you_type: str = field(default=YOU_SINGULAR, metadata={"choices": YOU_TYPES})
    skip_unsure: bool = False  # leave out usages the annotators marked unsure


AGREEMENT_WORDS = (
    "yeah",
    "yes",
    "yep",
    "yup",
    "okay",
    "ok",
    "'kay",
    "sure",
    "right",
    "alright",
    "agreed",
    "agree",
    "exactly",
    "definitely",
    "absolutely",
    "fine",
    "good",
    "true",
    "mm-hmm",
    "uh-huh",
)


@dataclass(frozen=True)
class ConsensusParams:
    window: WindowRule = field(default_factory=lambda: WindowRule(before_s=5.0, after_s=5.0))
    max_anchor_s: float = 40.0  # a longer decision keeps its final 40 s: with 5 s around, 50 s
    grow_step_s: float = 5.0  # a window lacking the evidence is retried this much longer, up to max_s
    proposal_act_types: tuple[str, ...] = ("sug", "off")
    agreement_pair_types: tuple[str, ...] = ("POS", "PART")
    agreement_words: tuple[str, ...] = AGREEMENT_WORDS
    marker_words: int = 3  # an act opening with an agreement word within its first N words is a marker
    min_proposal_responses: int = 1
    min_agreement_markers: int = 1


@dataclass(frozen=True)
class MiningParams:
    state: StateParams = field(default_factory=StateParams)
    you: YouParams = field(default_factory=YouParams)
    consensus: ConsensusParams = field(default_factory=ConsensusParams)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> MiningParams:
        """From a params section; an unknown key or a value of the wrong kind is a ConfigError naming it."""
        return _build(cls, data or {}, "mining")


def _build(cls, data: Mapping[str, Any], where: str, base=None):
    """``base`` (default: ``cls()``) with the values of ``data``, checked against its fields."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected a mapping, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(fields)})")
    kwargs = {}
    base = base if base is not None else cls()
    for name, value in data.items():
        current = getattr(base, name)
        if dataclasses.is_dataclass(current):
            kwargs[name] = _build(type(current), value, f"{where}.{name}", current)
        elif isinstance(current, tuple):
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}.{name}: expected a list of strings, got {value!r}")
            kwargs[name] = tuple(value)
        elif isinstance(current, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}.{name}: expected true or false, got {value!r}")
            kwargs[name] = value
        elif isinstance(current, (int, float)):
            number = int if isinstance(current, int) else (int, float)  # an int setting takes no 2.5
            if isinstance(value, bool) or not isinstance(value, number):
                raise ConfigError(f"{where}.{name}: expected a number, got {value!r}")
            if value < 0 or value != value or value in (float("inf"), float("-inf")):
                raise ConfigError(f"{where}.{name}: must be a finite number >= 0, got {value!r}")
            kwargs[name] = type(current)(value)
        else:
            choices = fields[name].metadata.get("choices")
            if choices is not None and value not in choices:
                known = ", ".join(f"{k} ({v})" for k, v in choices.items())
                raise ConfigError(f"{where}.{name}: {value!r} is not one of the known values: {known}")
            kwargs[name] = value
    try:
        return dataclasses.replace(base, **kwargs)
    except ConfigError as exc:  # a rule across keys (a window's min <= preferred <= max): name the section
        raise ConfigError(f"{where}: {exc}") from None
