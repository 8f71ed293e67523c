"""Prompt building blocks for MoCA's methods (appendix D) and the slot protocol.

Subject and target candidates are shown as slot ids subject0..3 / target0..3, shuffled under a
per-instance deterministic seed; the model answers slot ids, which are mapped back before scoring.
"""

from __future__ import annotations

import random
from string import Template
from typing import Any

from socialbench.backends.base import Decoding, ImagePart, Message, ModelSpec, Request
from socialbench.benchmark import InstanceInputError
from socialbench.hashing import sha256_file
from socialbench.moca.taxonomy import Taxonomy

ANSWER_KEYS = ("mechanism", "label", "subject", "target")


def slot_maps(instance: dict[str, Any], seed: int) -> dict[str, dict[str, str]]:
    """{"subject": {"subject0": option, ...}, "target": {...}}, shuffled per instance, deterministic."""
    rng = random.Random(f"{seed}:{instance['id']}:slots")
    maps = {}
    for role in ("subject", "target"):
        options = list(instance[f"{role}_options"])
        rng.shuffle(options)
        maps[role] = {f"{role}{k}": opt for k, opt in enumerate(options)}
    return maps


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
        raise InstanceInputError("media", f"image file not found: {path}") from exc
    except IsADirectoryError as exc:
        raise InstanceInputError("media", f"{path} is a folder, not an image file") from exc
    except OSError as exc:
        raise InstanceInputError("media", f"cannot read image file {path}: {exc.strerror or exc}") from exc


def visual_parts(instance: dict[str, Any], spec: ModelSpec) -> list[ImagePart]:
    """Images of an image-text instance, or the sampled frames (with timestamps) of a video-text one.
    A video-text instance without frames, or an image that cannot be read, is an InstanceInputError:
    a model never silently gets less to see than the benchmark gives."""
    if instance["modality"] == "video_text":
        frames = instance.get("frames")
        if not frames:
            raise InstanceInputError(
                "frames", "a video_text instance needs sampled frames; run socialbench moca frames first"
            )
        if not isinstance(frames, list) or not all(isinstance(f, dict) and "path" in f and "sha256" in f for f in frames):
            # load_instances validates frames in full (moca.schema.frames_problem); this guards direct callers
            raise InstanceInputError("frames", "expected a list of {path, sha256, index, timestamp} objects")
        chosen = _pick_uniform(frames, spec.max_frames)
        return [ImagePart(path=f["path"], sha256=f["sha256"], timestamp=f.get("timestamp")) for f in chosen]
    return [_image_part(p) for p in instance["media"]]


def _options_block(options) -> str:
    return "\n".join(f"- {o.name}: {o.criterion}" if o.criterion else f"- {o.name}" for o in options)


def answer_choices(instance: dict[str, Any], tax: Taxonomy, maps: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The generic structured view of a MoCA answer (``Request.task``): ``query`` and ``choices``
    for the baselines that read no prose, ``prior_group`` for the prior."""
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
            {"field": "mechanism", "options": named(tax.mechanisms[scenario])},
            {"field": "label", "options": named(tax.labels[scenario])},
            {"field": "subject", "options": slots("subject")},
            {"field": "target", "options": slots("target"), "distinct_from": "subject"},
        ],
    }


def visual_description(images: list[ImagePart], video: bool) -> str:
    if video:
        stamps = ", ".join(f"{p.timestamp:.2f}s" for p in images if p.timestamp is not None)
        return f"{len(images)} frames sampled uniformly in temporal order" + (f" at {stamps}" if stamps else "")
    return f"{len(images)} image(s)"


def build_direct_request(
    instance: dict[str, Any], tax: Taxonomy, spec: ModelSpec, seed: int, templates: tuple[str, str]
) -> tuple[Request, dict[str, dict[str, str]]]:
    """The D.1 direct-inference request for one instance and its slot maps; ``templates`` are the
    (system, user) template texts."""
    scenario = instance["scenario"]
    maps = slot_maps(instance, seed)
    images = visual_parts(instance, spec)
    video = instance["modality"] == "video_text"
    system = Template(templates[0]).substitute(
        modality_name="video" if video else "image",
        scenario=scenario,
        scenario_question=(tax.questions or {}).get(scenario, ""),
        mechanism_options=_options_block(tax.mechanisms[scenario]),
        label_options=_options_block(tax.labels[scenario]),
        subject_slot_ids=", ".join(maps["subject"]),
        target_slot_ids=", ".join(maps["target"]),
    )
    user_text = Template(templates[1]).substitute(
        text=instance["text"],
        visual=visual_description(images, video),
        audio=instance.get("transcript") or "(none)",
        subject_slots="\n".join(f"{k}: {v}" for k, v in maps["subject"].items()),
        target_slots="\n".join(f"{k}: {v}" for k, v in maps["target"].items()),
    )
    request = Request(
        request_id=f"{instance['id']}/direct/answer",
        messages=(
            Message("system", (system,)),
            Message("user", tuple([*images, user_text])),
        ),
        task={"benchmark": "moca", "method": "direct", "stage": "answer", **answer_choices(instance, tax, maps)},
        decoding=Decoding(max_tokens=spec.max_tokens, temperature=0.0, json_schema=answer_schema(scenario, tax, maps)),
    )
    return request, maps
