"""Rendering a MeetingToM instance into a request: the method's templates filled (B.2), the clip as parts per
the modality (B.5), the contextual priors in that ablation (B.4) and the ``task`` the baselines read. The
settings are tabled in docs/meetingtom.md; ``meta`` never reaches the model."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from string import Template
from typing import Any

from socialbench.core.backend import AudioPart, Decoding, ImagePart, Message, Request, VideoPart
from socialbench.core.benchmarks import InstanceInputError
from socialbench.core.modalities import model_modalities
from socialbench.meetingtom.schema.methods import SETTINGS, settings_of  # noqa: F401 (SETTINGS re-exported)
from socialbench.meetingtom.schema.questions import MULTI, TITLES, act_words, answer_format, answer_rule

#: The system prompt's sentence on the answer's form (the reasoning methods' ``$answer_system``).
ANSWER_SYSTEM = {
    "json": 'Your response is one JSON object: your reasoning under the key "reasoning" first, then your answer'
    ' under the key "answer".',
    "final_line": "End your response with one final line of the form\n"
    'Final answer: <JSON object with the key "answer">',
}
VIEW_TEXT = {
    "mosaic": "the 2x2 mosaic of the four participants' close-up views, each panel labelled with the"
    " participant's letter",
    "global": "the room view (all participants)",
    "closeup": "the close-up view of participant {subject}",
}


def modality_of(instance: Mapping[str, Any], s: Mapping[str, Any]) -> str:
    return s.get("modality") or instance["modality"]


def subject_of(instance: Mapping[str, Any]) -> str | None:
    """Whose close-up the ``closeup`` view shows (None: the task has no single subject)."""
    key = {"task1": "target", "task2_1": "speaker", "task2_2": "addressee"}.get(instance["task"])
    return instance.get(key) if key else None


def video_part(instance: Mapping[str, Any], view: str, ingestion: str) -> VideoPart:
    """The clip of ``view`` as one part: file and/or frames (each frame with its timestamp)."""
    media = instance.get("media") or {}
    key = {"mosaic": "mosaic", "global": "corner"}.get(view) or f"closeup_{subject_of(instance)}"
    video = (media.get("videos") or {}).get(key)
    if video is None:
        raise InstanceInputError(
            "media",
            f"no {key} video in the clip (view {view!r}); videos:"
            f" {', '.join(sorted(media.get('videos') or {})) or 'none'}",
        )
    label = "mosaic A-D" if view == "mosaic" else ("Corner" if view == "global" else f"Closeup {subject_of(instance)}")
    frames = tuple(
        ImagePart(f["path"], f["sha256"], f["timestamp"], label) for f in (media.get("frames") or {}).get(key, [])
    )
    if ingestion == "native":
        return VideoPart(path=video["path"], sha256=video["sha256"], view=label)
    if ingestion == "frames":
        if not frames:
            raise InstanceInputError("media", f"no sampled frames of the {key} video")
        return VideoPart(frames=frames, fps=media.get("fps"), view=label)
    return VideoPart(path=video["path"], sha256=video["sha256"], frames=frames, fps=media.get("fps"), view=label)


def audio_part(instance: Mapping[str, Any], spec) -> AudioPart | None:
    """The clip's audio track as a part, for a model that takes audio (``core.modalities.model_modalities``;
    a backend that cannot be looked up takes none: it is reported where it is created); else None."""
    audio = (instance.get("media") or {}).get("audio")
    try:
        takes = bool(audio) and "audio" in model_modalities({"backend": spec.backend, "modalities": spec.modalities})[0]
    except Exception:  # noqa: BLE001 - any failure to look it up means: no audio
        takes = False
    return AudioPart(path=audio["path"], sha256=audio["sha256"]) if takes else None


# ---- the transcript and its ablations ----------------------------------------------------------
def strip_markers(text: str, markers: Sequence[str]) -> str:
    """``text`` without the discourse markers (whole words, any case, trailing punctuation; spaces closed up)."""
    alts = "|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w'-])(?:{alts})(?![\w'-])[.,!?;:]*", re.IGNORECASE)
    return re.sub(r"\s{2,}", " ", pattern.sub("", text)).strip()


def transcript_lines(instance: Mapping[str, Any], s: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The transcript's lines as shown (markers removed in that ablation), each with its dialogue act."""
    acts = (instance.get("context") or {}).get("acts") or []
    out = []
    for k, t in enumerate(instance.get("turns") or []):
        text = strip_markers(t["text"], s["markers"]) if s["remove_markers"] else t["text"]
        if text:
            out.append({**t, "text": text, "act": acts[k] if k < len(acts) else None})
    return out


def render_transcript(instance: Mapping[str, Any], s: Mapping[str, Any]) -> str:
    lines = transcript_lines(instance, s)
    if not (s["remove_markers"] or "dialogue_act" in s["priors"]):
        return instance["transcript"] or "(no words in the clip)"
    show_act = "dialogue_act" in s["priors"] and instance["task"] != "task1"
    rendered = [
        f"[{t['start']:.2f}-{t['end']:.2f}] {t['speaker']}"
        + (f" ({act_words(t['act'])})" if show_act else "")
        + f": {t['text']}"
        for t in lines
    ]
    return "\n".join(rendered) or "(no words in the clip)"


def render_context(instance: Mapping[str, Any], s: Mapping[str, Any]) -> str:
    """The contextual priors block (empty outside that ablation)."""
    ctx = instance.get("context") or {}
    out = []
    if "role" in s["priors"]:
        roles = ", ".join(f"{x}: {r or 'unknown'}" for x, r in sorted((ctx.get("roles") or {}).items()))
        out.append(
            "Participant roles (PM project manager, ME marketing expert,"
            f" UI user-interface designer, ID industrial designer): {roles}"
        )
    if "phase" in s["priors"]:
        out.append(
            f"Meeting phase (opening, presentation, discussion, decision or closing): {ctx.get('phase') or 'unknown'}"
        )
    if "dialogue_act" in s["priors"]:
        out.append("Each transcript line is marked with its dialogue act (what the utterance does) in parentheses.")
    return ("\nContext (annotations of the AMI corpus):\n" + "\n".join(out) + "\n") if out else ""


# ---- the request ---------------------------------------------------------------------------------
def answer_task(instance: Mapping[str, Any], method: str, s: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The structured view for the baselines: the quoted utterance (Task 2) or the question as the query, the
    options as choices (a participant's with what they say, when utterances are shown), the task as group."""
    s = s or settings_of(None)
    with_words = modality_of(instance, s) != "video"
    said: dict[str, list[str]] = {}
    for t in transcript_lines(instance, s):
        said.setdefault(t["speaker"], []).append(t["text"])

    def text(o: Mapping[str, Any]) -> str:
        if "participant" not in o or not with_words:
            return o["text"]
        return f"{o['text']}: {' '.join(said.get(o['participant'], [])) or '(says nothing in the clip)'}"

    utterance = instance.get("utterance")  # the question's quoted utterance, as the question has it
    query = utterance if with_words and utterance else instance["question"]
    options = [{"value": o["label"], "key": o["value"], "text": text(o)} for o in instance["options"]]
    return {
        "benchmark": "meetingtom",
        "method": method,
        "stage": "answer",
        "task": instance["task"],
        "prior_group": instance["task"],
        "query": query,
        "multi": instance["task"] in MULTI,
        "choices": [{"field": "answer", "options": options}],
    }


#: An option label as an answer may give it: the number as a string (what the prompt asks) or a number.
LABEL_VALUE: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "integer"}]}


def json_keys(task: str, reasons: bool) -> dict[str, dict[str, Any]]:
    """JSON mode's keys and value types (``reasoning`` for reasoning methods, ``answer``), no enum of options."""
    answer = {"type": "array", "items": LABEL_VALUE} if task in MULTI else LABEL_VALUE
    return {**({"reasoning": {"type": "string"}} if reasons else {}), "answer": answer}


def guidance(instance: Mapping[str, Any], template: str | None) -> str:
    if template is None:
        return ""
    variables = {
        **(instance.get("variables") or {}),
        **{k: instance.get(k, "") for k in ("target", "speaker", "addressee")},
    }
    return Template(template).safe_substitute(variables).strip()


def build_request(
    instance: Mapping[str, Any],
    templates: Sequence[str | None],
    spec,
    settings: Mapping[str, Any] | None,
    method: str,
    *,
    reasons: bool = False,
) -> Request:
    """The request of one instance from ``templates`` (system, user, task guidance or None); ``reasons``: a
    reasoning method, answering in the ``answer_form`` setting's form (JSON mode for ``json``)."""
    s = settings_of(settings)
    form = s["answer_form"] if reasons else "json"
    modality = modality_of(instance, s)
    parts: list[Any] = []
    if modality in ("video", "both"):
        if instance.get("media_error"):
            raise InstanceInputError("media", instance["media_error"])
        view = s.get("view") or ("closeup" if instance["task"] == "task1" else "mosaic")
        view = "mosaic" if view == "closeup" and subject_of(instance) is None else view
        parts.append(video_part(instance, view, s["ingestion"]))
        audio = audio_part(instance, spec) if s["audio"] else None
        if audio is not None:
            parts.append(audio)
        visual = (
            VIEW_TEXT[view].format(subject=subject_of(instance))
            + (", with the clip's audio" if audio is not None else "")
            + " (given with this message)"
        )
    else:
        visual = "(not given)"
    transcript = render_transcript(instance, s) if modality in ("utterances", "both") else "(not given)"
    options = "\n".join(f"{o['label']}. {o['text']}" for o in instance["options"])
    system, user, task_guidance = (list(templates) + [None])[:3]
    text = Template(user).substitute(
        title=f"Task: {TITLES[instance['task']].split(': ', 1)[1]}.",
        # whatever the settings: the no-markers ablation strips the transcript only (paper 4.3: "keeping
        # the visual input and task prompt unchanged"), so Task 2's quoted utterance keeps its markers
        question=instance["question"],
        visual=visual,
        transcript=transcript,
        context=render_context(instance, s),
        options=options,
        answer_format=answer_format(instance["task"]),
        answer_rule=answer_rule(instance["task"], form),
        guidance=guidance(instance, task_guidance),
    )
    return Request(
        request_id=f"{instance['id']}/{method}/answer",
        messages=(
            Message("system", (Template(system).substitute(answer_system=ANSWER_SYSTEM[form]),)),
            Message("user", (*parts, text)),
        ),
        task=answer_task(instance, method, s),
        decoding=Decoding(
            max_tokens=spec.max_tokens,
            temperature=0.0,
            json_object=form == "json",
            json_keys=json_keys(instance["task"], reasons) if form == "json" else None,
        ),
        shown={"reasons": reasons},  # a reasoning method's answer keeps its reasoning in the trace
    )
