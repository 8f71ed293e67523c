"""What a backend declares about itself and what a model takes: the part kinds a backend can carry,
the modalities a model of it takes by default, whether it answers choices only, whether the request's
temperature reaches the model. Read from ``<module>.declaration.json`` beside each backend's module,
without importing it (deciding which pairs run loads no SDK or weights); a model entry's
``modalities`` in params overrides the default (docs/backends.md, "Adding a model")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from socialbench.core.backend import BACKENDS, CARRIER, carried_modalities, get_backend_class
from socialbench.core.plugins import sidecar_json


@dataclass(frozen=True)
class Declaration:
    """What a backend declares about itself, read without importing it (:func:`backend_declaration`):
    the part kinds it can carry, what a model of it takes by default, why it answers choices only (None:
    it writes free text), and whether the request's temperature reaches the model (None: no model
    decodes) unless the option ``temperature_option`` says otherwise."""

    accepts: frozenset[str]
    modalities: frozenset[str]
    choices_only: str | None = None
    temperature: bool | None = None
    temperature_option: str | None = None
    #: Whether the JSON constraint its requests carry is enforced (None: not declared), and why not.
    json_enforced: bool | None = None
    json_why: str | None = None


def backend_declaration(name: str) -> Declaration:
    """Backend ``name``'s declaration. A backend declares it beside its module, in
    ``<module>.declaration.json`` (``{class name: {"accepts", "modalities", "choices_only"?,
    "temperature"?: {"sent", "option"?}}}``), read without importing the module (deciding which pairs run
    loads no SDK or weights); the class gets its ``accepts``, ``default_modalities`` and ``choices_only``
    from the same file. A backend without one (a class registered directly, a test double) is imported and
    its class attributes read. An unknown name is a ConfigError listing the known ones."""
    if name not in BACKENDS.classes:
        entry = BACKENDS.entry(name)
        if entry is None:
            get_backend_class(name)  # raises the registry's ConfigError naming the known backends
        else:
            declared = sidecar_json(entry[0], ".declaration.json").get(entry[1])
            if declared is not None:
                temperature = declared.get("temperature") or {}
                json_mode = declared.get("json_mode") or {}
                return Declaration(
                    accepts=frozenset(declared["accepts"]),
                    modalities=frozenset(declared["modalities"]),
                    choices_only=declared.get("choices_only"),
                    temperature=temperature.get("sent"),
                    temperature_option=temperature.get("option"),
                    json_enforced=json_mode.get("enforced"),
                    json_why=json_mode.get("why"),
                )
    cls = get_backend_class(name)
    default = cls.default_modalities
    return Declaration(
        accepts=frozenset(cls.accepts),
        modalities=default if default is not None else carried_modalities(cls.accepts),
        choices_only=cls.choices_only,
    )


def model_modalities(entry: Mapping[str, Any]) -> tuple[frozenset[str], bool]:
    """(modalities, declared) of a params ``models:`` entry: its ``modalities`` (declared True), else its
    backend's default (declared False)."""
    if entry.get("modalities") is not None:
        return frozenset(entry["modalities"]), True
    return backend_declaration(entry["backend"]).modalities, False


def modality_problems(entry: Mapping[str, Any]) -> list[str]:
    """Why a params entry's declared ``modalities`` cannot be: a modality its backend cannot carry."""
    declared = entry.get("modalities")
    if not declared:
        return []
    accepts = backend_declaration(entry["backend"]).accepts
    return [
        f"{m!r}: backend {entry['backend']} cannot carry it (it carries {', '.join(sorted(accepts)) or 'text only'})"
        for m in declared
        if CARRIER.get(m) not in accepts
    ]


def temperature_sent_of(entry: Mapping[str, Any]) -> bool | None:
    """Whether a params entry's runs send the request's temperature, from its backend's declaration and
    options (False: the API takes none and the model decodes at its own setting; None: no model decodes).
    What ``Backend.temperature_sent`` says at run time (the run stats' ``temperature_sent``), from params."""
    declared = backend_declaration(entry["backend"])
    if declared.temperature is None:
        return None
    option = declared.temperature_option
    options = entry.get("options") or {}
    if option and isinstance(options.get(option), bool):
        return bool(options[option])
    return declared.temperature
