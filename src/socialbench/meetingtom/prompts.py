"""Rendering a MeetingToM instance into a request: the method's template with the task variables
filled in (B.2), the clip as typed parts per the instance's modality (B.5), and the structured
``task`` the baselines read.

Settings (params ``meetingtom.method_options.<method>``):

* ``view``: which video a request shows: ``mosaic`` (default: the 2x2 close-ups labelled A-D),
  ``global`` (the Corner view) or ``closeup`` (the speaker's close-up);
* ``ingestion``: ``auto`` (default: the clip file and its 0.5 FPS frames in one video part; a
  backend that takes video reads the file, one that takes images the frames), ``native`` (the file
  only) or ``frames`` (the frames only).

Only the transcript window, the question's variables, the options and the clip reach the model;
the instance's ``meta`` (AMI ids, the meeting) never does (B.4).
"""

from __future__ import annotations

from string import Template
from typing import Any, Mapping

from socialbench.backends.base import Decoding, ImagePart, Message, Request, VideoPart
from socialbench.benchmark import InstanceInputError
from socialbench.errors import ConfigError

VIEWS = ("mosaic", "global", "closeup")
INGESTION = ("auto", "native", "frames")
VIEW_TEXT = {"mosaic": "the 2x2 mosaic of the four participants' close-up views, each panel labelled with the participant's letter",
             "global": "the room view (all participants)", "closeup": "the close-up view of participant {speaker}"}  # fmt: skip


def settings_of(settings: Mapping[str, Any] | None) -> dict[str, str]:
    """The method settings with defaults; an unknown key or value is a ConfigError naming it."""
    s = dict(settings or {})
    unknown = sorted(set(s) - {"view", "ingestion"})
    if unknown:
        raise ConfigError(f"meetingtom.method_options: unknown setting(s) {', '.join(unknown)} (known: view, ingestion)")
    view, ingestion = s.get("view", "mosaic"), s.get("ingestion", "auto")
    if view not in VIEWS:
        raise ConfigError(f"meetingtom.method_options: view must be one of {', '.join(VIEWS)}, got {view!r}")
    if ingestion not in INGESTION:
        raise ConfigError(f"meetingtom.method_options: ingestion must be one of {', '.join(INGESTION)}, got {ingestion!r}")
    return {"view": view, "ingestion": ingestion}


def video_key(instance: Mapping[str, Any], view: str) -> str:
    return {"mosaic": "mosaic", "global": "corner", "closeup": f"closeup_{instance['speaker']}"}[view]


def video_part(instance: Mapping[str, Any], view: str, ingestion: str) -> VideoPart:
    """The clip of ``view`` as one part: file and/or frames (each frame with its timestamp)."""
    media = instance.get("media") or {}
    key = video_key(instance, view)
    video = (media.get("videos") or {}).get(key)
    if video is None:
        raise InstanceInputError("media", f"no {key} video in the clip (view {view!r}); videos: {', '.join(sorted(media.get('videos') or {})) or 'none'}")
    label = "mosaic A-D" if view == "mosaic" else ("Corner" if view == "global" else f"Closeup {instance['speaker']}")
    frames = tuple(ImagePart(f["path"], f["sha256"], f["timestamp"], label) for f in (media.get("frames") or {}).get(key, []))
    if ingestion == "native":
        return VideoPart(path=video["path"], sha256=video["sha256"], view=label)
    if ingestion == "frames":
        if not frames:
            raise InstanceInputError("media", f"no sampled frames of the {key} video")
        return VideoPart(frames=frames, fps=media.get("fps"), view=label)
    return VideoPart(path=video["path"], sha256=video["sha256"], frames=frames, fps=media.get("fps"), view=label)


def spoken_by(instance: Mapping[str, Any], participant: str) -> str:
    lines = [t["text"] for t in instance.get("turns") or [] if t["speaker"] == participant]
    return " ".join(lines) if lines else "(says nothing in the clip)"


def answer_task(instance: Mapping[str, Any], method: str) -> dict[str, Any]:
    """The structured view for the baselines: the trigger utterance as the query, the options as the
    answer's choices (each option's text is the participant and what they say in the clip, so a
    text-similarity model can match the answer to the question), the task as the prior's group."""
    return {
        "benchmark": "meetingtom", "method": method, "stage": "answer", "task": instance["task"],
        "prior_group": instance["task"], "query": instance["utterance"],
        "choices": [{"field": "answer", "options": [{"value": o["label"], "text": f"{o['text']}: {spoken_by(instance, o['participant'])}"}
                                                    for o in instance["options"]]}],
    }  # fmt: skip


def build_request(instance: Mapping[str, Any], templates: tuple[str, str], spec, settings: Mapping[str, Any] | None, method: str) -> Request:
    """The request of one instance: system and task templates (``$``-placeholders), the video part
    when the modality has video, the transcript when it has utterances."""
    s = settings_of(settings)
    modality = instance["modality"]
    parts: list[Any] = []
    if modality in ("video", "both"):
        if instance.get("media_error"):
            raise InstanceInputError("media", instance["media_error"])
        parts.append(video_part(instance, s["view"], s["ingestion"]))
        visual = VIEW_TEXT[s["view"]].format(speaker=instance["speaker"]) + " (given with this message)"
    else:
        visual = "(not given)"
    transcript = instance["transcript"] if modality in ("utterances", "both") else "(not given)"
    options = "\n".join(f"{o['label']}. {o['text']}" for o in instance["options"])
    user = Template(templates[1]).substitute(
        duration=f"{instance.get('duration', 0):.0f}", speaker=instance["speaker"], you_time=f"{instance['you_time']:.1f}",
        utterance=instance["utterance"], visual=visual, transcript=transcript or "(no words in the clip)", options=options,
    )  # fmt: skip
    return Request(
        request_id=f"{instance['id']}/{method}/answer",
        messages=(Message("system", (Template(templates[0]).substitute(),)), Message("user", (*parts, user))),
        task=answer_task(instance, method),
        decoding=Decoding(max_tokens=spec.max_tokens, temperature=0.0, json_object=True),
    )
