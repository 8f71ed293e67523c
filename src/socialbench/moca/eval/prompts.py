"""Prompt building blocks for MoCA's methods (appendix D) and the slot protocol: subject and target
candidates are shown as slot ids subject0..3 / target0..3, shuffled per instance under a seed."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from string import Template
from typing import Any

from socialbench.core.backend import Decoding, ImagePart, Message, ModelSpec, Request
from socialbench.core.benchmarks import Final, InstanceInputError
from socialbench.core.errors import ConfigError
from socialbench.core.hashing import sha256_file
from socialbench.core.run_name import RunName
from socialbench.moca.schema.methods import (  # noqa: F401 (the answer-format policy, re-exported)
    ANSWER_KEYS,
    CODE_FENCE,
    EXTRA_KEYS,
    PROMPT_ADDITIONS,
    REPAIRS,
    answer_format,
    answer_settings,
)
from socialbench.moca.schema.normalize import percent
from socialbench.moca.schema.taxonomy import Taxonomy


class MediaUnavailable(InstanceInputError):
    """The instance's media cannot be shown; methods answer with :func:`media_error_answer`."""


def slot_maps(instance: dict[str, Any], seed: int, order: int = 0) -> dict[str, dict[str, str]]:
    """{"subject": {"subject0": option, ...}, "target": {...}}, seeded per instance, rotated by ``order``."""
    rng = random.Random(f"{seed}:{instance['id']}:slots")
    maps = {}
    for role in ("subject", "target"):
        options = list(instance[f"{role}_options"])
        rng.shuffle(options)
        maps[role] = {f"{role}{k}": opt for k, opt in enumerate(rotated(options, order))}
    return maps


def rotated(items: list[Any], k: int) -> list[Any]:
    """``items`` rotated left by k places (k taken modulo their number; no items: none)."""
    k = k % len(items) if items else 0
    return list(items[k:]) + list(items[:k])


@dataclass(frozen=True)
class Order:
    """The option order of an order run (``moca.robustness``): index 0 is the paper's; ``lists`` rotates those too."""

    index: int = 0
    lists: bool = False

    @classmethod
    def of(cls, settings: dict[str, Any] | None) -> Order:
        s = settings or {}
        return cls(int(s.get("order") or 0), bool(s.get("reorder_lists", False)))

    def listed(self, options: list[Any]) -> list[Any]:
        """A mechanism or label list as this order shows it."""
        return rotated(list(options), self.index) if self.lists else list(options)

    def distinct(self, instance: dict[str, Any], tax: Taxonomy) -> int:
        """How many distinct orders the instance has: the least common multiple of the rotated lists' lengths."""
        lengths = [len(instance["subject_options"]), len(instance["target_options"])]
        if self.lists:
            s = instance["scenario"]
            lengths += [len(tax.mechanisms[s]), len(tax.labels[s])]
        return math.lcm(*(max(1, n) for n in lengths))

    def shown(self, instance: dict[str, Any], tax: Taxonomy) -> int:
        """The order the instance is shown in (index mod distinct)."""
        return self.index % self.distinct(instance, tax)

    def asked_as(self, run: str, instance: dict[str, Any], tax: Taxonomy) -> str:
        """The run name the instance's requests carry: the run of the order it is shown in."""
        return str(RunName.parse(run).with_order(self.shown(instance, tax)))

    def record(self, instance: dict[str, Any], tax: Taxonomy) -> dict[str, int] | None:
        """A prediction record's ``order`` (None for order 0, whose records stay as they were)."""
        if self.index == 0:
            return None
        return {"index": self.index, "shown": self.shown(instance, tax), "distinct": self.distinct(instance, tax)}


def answer_schema(scenario: str, tax: Taxonomy, maps: dict[str, dict[str, str]]) -> dict[str, Any]:
    """JSON schema of the answer (for JSON mode / guided decoding)."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(ANSWER_KEYS),
        "properties": {
            "mechanism": {"type": "string", "enum": tax.mechanism_names(scenario)},
            "label": {"type": "string", "enum": tax.label_names(scenario)},
            "subject": {"type": "string", "enum": sorted(maps["subject"])},
            "target": {"type": "string", "enum": sorted(maps["target"])},
        },
    }


def _pick_uniform(items: list[Any], k: int) -> list[Any]:
    """k items spread uniformly over the list, in order (all of them when k >= len)."""
    if k >= len(items):
        return list(items)
    if k == 1:
        return [items[len(items) // 2]]
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


def _image_part(path: str) -> ImagePart:
    try:
        return ImagePart(path=path, sha256=sha256_file(path))
    except FileNotFoundError as exc:
        raise MediaUnavailable("media", f"image file not found: {path}") from exc
    except IsADirectoryError as exc:
        raise MediaUnavailable("media", f"{path} is a folder, not an image file") from exc
    except OSError as exc:
        raise MediaUnavailable("media", f"cannot read image file {path}: {exc.strerror or exc}") from exc


def visual_parts(instance: dict[str, Any], spec: ModelSpec) -> list[ImagePart]:
    """The images or sampled frames of an instance (none for a text-only model); failed media raise."""
    if spec.modalities is not None and not spec.modalities:
        return []
    if instance.get("media_error"):
        raise MediaUnavailable("media_error", str(instance["media_error"]))
    if instance["modality"] == "video_text":
        frames = instance.get("frames")
        if not frames:
            why = "a video_text instance needs sampled frames; run socialbench moca frames first"
            raise InstanceInputError("frames", why)
        # load_instances validates frames in full (moca.schema.frames_problem); this guards direct callers
        if not isinstance(frames, list) or not all(
            isinstance(f, dict) and {"path", "sha256"} <= set(f) for f in frames
        ):
            raise InstanceInputError("frames", "expected a list of {path, sha256, index, timestamp} objects")
        chosen = _pick_uniform(frames, spec.max_frames)
        return [ImagePart(path=f["path"], sha256=f["sha256"], timestamp=f.get("timestamp")) for f in chosen]
    return [_image_part(p) for p in instance["media"]]


def options_block(options, with_boundary: bool = True) -> str:
    """One line per option: ``- <name>: <criterion> Boundary: <boundary>`` (D.1), the parts it has."""
    lines = []
    for o in options:
        text = o.criterion
        if with_boundary and o.boundary:
            text = f"{text} Boundary: {o.boundary}" if text else f"Boundary: {o.boundary}"
        lines.append(f"- {o.name}: {text}" if text else f"- {o.name}")
    return "\n".join(lines)


def answer_choices(
    instance: dict[str, Any], tax: Taxonomy, maps: dict[str, dict[str, str]], order: Order = Order()
) -> dict[str, Any]:
    """The structured view of an answer (``Request.task``) for backends that read no prose."""
    scenario = instance["scenario"]

    def named(options) -> list[dict[str, str]]:
        return [{"value": o.name, "text": f"{o.name}: {o.criterion}" if o.criterion else o.name} for o in options]

    def slots(role: str) -> list[dict[str, str]]:
        return [{"value": k, "text": v} for k, v in sorted(maps[role].items())]

    query = str(instance.get("text") or "")
    if instance.get("transcript"):
        query += "\n" + str(instance["transcript"])
    return {
        "scenario": scenario,
        "prior_group": scenario,
        "query": query,
        "choices": [
            {"field": "mechanism", "options": named(order.listed(tax.mechanisms[scenario]))},
            {"field": "label", "options": named(order.listed(tax.labels[scenario]))},
            {"field": "subject", "options": slots("subject")},
            {"field": "target", "options": slots("target"), "distinct_from": "subject"},
        ],
    }


#: The line ``prompt_additions: [scenario_boundary]`` adds: A.1's boundary rule between the scenarios, shortened.
BOUNDARY_LINE = (
    "Boundary rule: Affection asks what is felt, Intent asks what outcome is pursued, Stance asks what relational"
    " position is adopted; surface emotion words, rhetorical form and visual salience do not decide by themselves."
)


def addition_values(tax: Taxonomy, scenario: str, additions: frozenset[str] | set[str] = frozenset()) -> dict[str, str]:
    """The placeholders of the ``prompt_additions``; empty when not asked for, so their lines are left out."""
    unknown = set(additions) - set(PROMPT_ADDITIONS)
    if unknown:
        raise ValueError(f"unknown prompt addition(s) {sorted(unknown)}; known: {', '.join(PROMPT_ADDITIONS)}")
    question = (tax.questions or {}).get(scenario, "")
    return {
        "scenario_line": f"The scenario is {scenario}: {question}" if "scenario_question" in additions else "",
        "boundary_line": BOUNDARY_LINE if "scenario_boundary" in additions else "",
    }


_LONE = re.compile(r"^\$(?:(\w+)|\{(\w+)\})$")


def render(text: str, values: dict[str, str], where: str) -> str:
    """A template filled in; a line holding only an empty placeholder is left out. A ConfigError names it."""
    lines = []
    for line in text.splitlines(keepends=True):
        m = _LONE.match(line.strip())
        if m and values.get(m[1] or m[2]) == "":
            continue
        lines.append(line)
    text = "".join(lines)
    try:
        return Template(text).substitute(values)
    except KeyError as exc:
        raise ConfigError(f"template {where}: placeholder ${exc.args[0]} has no value here") from exc
    except ValueError as exc:
        raise ConfigError(f"template {where}: {exc} (write a literal dollar sign as $$)") from exc


def option_values(
    instance: dict[str, Any], tax: Taxonomy, maps: dict[str, dict[str, str]], order: Order, additions
) -> dict[str, str]:
    """The system prompt's values shared by the direct prompt and CoDAR's stages: scenario, options, slots."""
    s = instance["scenario"]
    return {
        "modality_name": "video" if instance["modality"] == "video_text" else "image",
        "scenario": s,
        "scenario_question": (tax.questions or {}).get(s, ""),
        **addition_values(tax, s, additions),
        "mechanism_options": options_block(order.listed(tax.mechanisms[s])),
        "label_options": options_block(order.listed(tax.labels[s])),
        "subject_slot_ids": ", ".join(maps["subject"]),
        "target_slot_ids": ", ".join(maps["target"]),
    }


def visual_description(images: list[ImagePart], video: bool) -> str:
    if video:
        stamps = ", ".join(f"{p.timestamp:.2f}s" for p in images if p.timestamp is not None)
        return f"{len(images)} frames sampled uniformly in temporal order" + (f" at {stamps}" if stamps else "")
    return f"{len(images)} image(s)"


def build_direct_request(
    instance: dict[str, Any],
    tax: Taxonomy,
    spec: ModelSpec,
    seed: int,
    templates: tuple[str, str],
    *,
    method: str = "direct",
    constrained: bool = False,
    order: Order = Order(),
    additions: frozenset[str] | set[str] = frozenset(),
) -> tuple[Request, dict[str, dict[str, str]]]:
    """The D.1 request for one instance and its slot maps (``templates``: system, user)."""
    scenario = instance["scenario"]
    maps = slot_maps(instance, seed, order.index)
    images = visual_parts(instance, spec)
    system = render(templates[0], option_values(instance, tax, maps, order, additions), f"{method}/system.txt")
    user_text = Template(templates[1]).substitute(
        text=instance["text"],
        visual=visual_description(images, instance["modality"] == "video_text"),
        audio=instance.get("transcript") or "(none)",
        subject_slots="\n".join(f"{k}: {v}" for k, v in maps["subject"].items()),
        target_slots="\n".join(f"{k}: {v}" for k, v in maps["target"].items()),
    )
    keys = {k: {"type": "string"} for k in ANSWER_KEYS}
    form = (
        {"json_schema": answer_schema(scenario, tax, maps)} if constrained else {"json_object": True, "json_keys": keys}
    )
    decoding = Decoding(max_tokens=spec.max_tokens, temperature=0.0, **form)
    request = Request(
        request_id=f"{instance['id']}/{method}/answer",
        messages=(Message("system", (system,)), Message("user", tuple([*images, user_text]))),
        task={"benchmark": "moca", "method": method, "stage": "answer", **answer_choices(instance, tax, maps, order)},
        decoding=decoding,
        shown={"slots": maps},
    )
    return request, maps


def media_error_answer(
    instance: dict[str, Any], problem: str, seed: int, order: int = 0, record: dict[str, int] | None = None
) -> Final:
    """The answer of an instance whose media cannot be shown, made without a call: scored invalid."""
    return Final(
        fields={
            "raw": None,
            **{k: None for k in ANSWER_KEYS},
            "field_errors": {k: "media error, no model call" for k in ANSWER_KEYS},
            "slots": slot_maps(instance, seed, order),
            **({"order": record} if record else {}),
            "request_key": None,
            "inputs": [],
            "finish_reason": None,
            "media_error": problem,
        },
        error=f"media: {problem}",
    )


def answer_summary(finals: list[Final]) -> dict[str, float]:
    """The answer-format numbers of a run (``Method.summary``, the same for every MoCA method)."""
    formats = [f.fields.get("format") or answer_format() for f in finals]
    return {
        "format_retries": float(sum(fm["retries"] for fm in formats)),
        "answers_repaired": float(sum(bool(fm["repairs"]) for fm in formats)),
        **{f"repaired_{r}": float(sum(r in fm["repairs"] for fm in formats)) for r in REPAIRS},
        "answers_with_ignored_keys": float(sum(bool(fm["ignored_keys"]) for fm in formats)),
        "answer_errors": float(sum(1 for f in finals if f.error)),
        "last_tuple_kept": float(sum(1 for fm in formats if fm.get("last_tuple_kept"))),
        "checker_unparsable": float(sum(1 for fm in formats if fm.get("last_tuple_kept") == "checker")),
        # percent of instances with any missing, unparsable or invalid field (the scores' invalid_rate)
        "invalid_rate": percent(sum(bool(f.error or f.fields.get("field_errors")) for f in finals), len(finals))
        if finals
        else 0.0,
    }
