"""What a backend declares about itself (part kinds carried, default modalities, choices only,
temperature sent), read from ``<module>.declaration.json`` without importing it (deciding which pairs
run loads no SDK); a model's ``modalities`` in params overrides the default (docs/backends.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from socialbench.core.backend import BACKENDS, CARRIER, carried_modalities, get_backend_class
from socialbench.core.plugins import sidecar_json


@dataclass(frozen=True)
class Declaration:
    """A backend's declaration (:func:`backend_declaration`); None temperature: no model decodes."""

    accepts: frozenset[str]
    modalities: frozenset[str]
    choices_only: str | None = None
    temperature: bool | None = None
    temperature_option: str | None = None
    #: Whether its JSON constraint is enforced (None: not declared), and why not.
    json_enforced: bool | None = None
    json_why: str | None = None


def backend_declaration(name: str) -> Declaration:
    """Backend ``name``'s declaration, read without importing it where it has a declaration file."""
    entry = None if name in BACKENDS.classes else BACKENDS.entry(name)
    declared = sidecar_json(entry[0], ".declaration.json").get(entry[1]) if entry is not None else None
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
    cls = get_backend_class(name)  # an unknown name: the registry's ConfigError naming the known backends
    default = cls.default_modalities
    return Declaration(
        accepts=frozenset(cls.accepts),
        modalities=default if default is not None else carried_modalities(cls.accepts),
        choices_only=cls.choices_only,
    )


def model_modalities(entry: Mapping[str, Any]) -> tuple[frozenset[str], bool]:
    """(modalities, declared) of a params entry: its ``modalities``, else its backend's default."""
    if entry.get("modalities") is not None:
        return frozenset(entry["modalities"]), True
    return backend_declaration(entry["backend"]).modalities, False


def modality_problems(entry: Mapping[str, Any]) -> list[str]:
    """Declared ``modalities`` the entry's backend cannot carry."""
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
    """Whether an entry's runs send the temperature: its ``temperature_option``, else the declaration's."""
    declared = backend_declaration(entry["backend"])
    if declared.temperature is None:
        return None
    option = declared.temperature_option
    options = entry.get("options") or {}
    return bool(options[option]) if option and isinstance(options.get(option), bool) else declared.temperature
