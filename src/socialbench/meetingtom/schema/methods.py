"""The settings a MeetingToM method run takes (``method_options.<method>``, an ablation's over them), checked
when params load and when a method starts; schema/, so checking params imports no prompting code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from socialbench.core.errors import ConfigError
from socialbench.meetingtom.schema.questions import TASKS

VIEWS = ("mosaic", "global", "closeup")
INGESTION = ("auto", "native", "frames")
MODALITIES = ("utterances", "video", "both")
PRIORS = ("role", "phase", "dialogue_act")
#: Keys an ablation entry may carry besides settings: which table it belongs to and its row label.
ABLATION_META = ("table", "label")
#: An order run's setting (meetingtom.robustness; ``questions.rotated_options``), not a prompt setting.
ORDER_KEY = "order"
ANSWER_FORMS = ("json", "final_line")
SETTINGS = ("modality", "view", "ingestion", "remove_markers", "markers", "priors", "answer_form", "audio")
#: The template files each method reads (``templates/<method>/``), declared here so check-params renders
#: every run's templates without importing a method's code; the method classes take theirs from it.
BASE_TEMPLATES: tuple[str, ...] = ("system.txt", "user.txt")


def guidance_templates() -> tuple[str, ...]:
    """Task-CoT's guidance files: ``<task>.txt`` for each task."""
    return tuple(f"{t}.txt" for t in TASKS)


def method_templates(method: str) -> tuple[str, ...]:
    """The template files method ``method`` (a base method's name) reads, in order."""
    return (*BASE_TEMPLATES, *guidance_templates()) if method == "task_cot" else BASE_TEMPLATES


#: The ``$``-placeholders ``eval.prompts.build_request`` fills in each template file; a file not named here
#: (Task-CoT's guidance) is filled leniently (``safe_substitute``): it only has to exist and be UTF-8.
TEMPLATE_PLACEHOLDERS: dict[str, frozenset[str]] = {
    "system.txt": frozenset({"answer_system"}),
    "user.txt": frozenset(
        {"title", "question", "visual", "transcript", "context", "options", "answer_format", "answer_rule", "guidance"}
    ),
}


def settings_of(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """The method settings with defaults; an unknown key or value is a ConfigError naming it."""
    s = {k: v for k, v in dict(settings or {}).items() if k not in (*ABLATION_META, ORDER_KEY)}
    unknown = sorted(set(s) - set(SETTINGS))
    if unknown:
        raise ConfigError(
            "meetingtom.method_options / ablations: unknown setting(s)"
            f" {', '.join(unknown)} (known: {', '.join(SETTINGS)})"
        )
    out = {
        "modality": s.get("modality"),
        "view": s.get("view"),
        "ingestion": s.get("ingestion", "auto"),
        "remove_markers": bool(s.get("remove_markers", False)),
        "markers": list(s.get("markers") or []),
        "priors": list(s.get("priors") or []),
        "answer_form": s.get("answer_form", "json"),
        "audio": bool(s.get("audio", True)),
    }
    closed = {"modality": MODALITIES, "view": VIEWS, "ingestion": INGESTION, "answer_form": ANSWER_FORMS}
    for key, known in closed.items():
        if out[key] is not None and out[key] not in known:
            raise ConfigError(
                f"meetingtom.method_options / ablations: {key} must be one of {', '.join(known)}, got {out[key]!r}"
            )
    bad = [p for p in out["priors"] if p not in PRIORS]
    if bad:
        raise ConfigError(
            f"meetingtom.ablations: unknown prior(s) {', '.join(map(str, bad))} (known: {', '.join(PRIORS)})"
        )
    if out["remove_markers"] and not out["markers"]:
        raise ConfigError("meetingtom: remove_markers needs the marker list (meetingtom.discourse_markers)")
    return out
