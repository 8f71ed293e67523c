"""The MoCA taxonomy (one data file, moca.yaml) and a loader for replacements given with --taxonomy."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from socialbench.errors import DataError

SCENARIOS = ("affection", "intent", "stance")


@dataclass(frozen=True)
class Option:
    name: str
    criterion: str
    source: str = "paper"


@dataclass(frozen=True)
class Taxonomy:
    labels: dict[str, tuple[Option, ...]]
    mechanisms: dict[str, tuple[Option, ...]]
    domains: tuple[str, ...] = ()
    cultures: tuple[str, ...] = ()
    questions: dict[str, str] | None = None

    @property
    def scenarios(self) -> tuple[str, ...]:
        return tuple(self.labels)

    def label_names(self, scenario: str) -> list[str]:
        return [o.name for o in self.labels[scenario]]

    def mechanism_names(self, scenario: str) -> list[str]:
        return [o.name for o in self.mechanisms[scenario]]

    def as_sets(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        return (
            {s: self.label_names(s) for s in self.labels},
            {s: self.mechanism_names(s) for s in self.mechanisms},
        )


def _options(raw: Any, path: str, where: str) -> tuple[Option, ...]:
    if isinstance(raw, list):  # plain list of names (the --taxonomy override format)
        return tuple(Option(name=str(n), criterion="") for n in raw)
    if isinstance(raw, dict):
        out = []
        for name, spec in raw.items():
            spec = spec or {}
            if not isinstance(spec, dict):
                raise DataError(path, "option must map to {criterion, source}", field=f"{where}.{name}")
            out.append(Option(name=str(name), criterion=str(spec.get("criterion", "")), source=str(spec.get("source", "paper"))))
        return tuple(out)
    raise DataError(path, "expected a list of names or a mapping of options", field=where)


def parse_taxonomy(data: dict[str, Any], path: str = "<taxonomy>") -> Taxonomy:
    """Accepts the built-in layout (``scenarios: {s: {labels, mechanisms}}``) or the override layout
    ``{labels: {scenario: [...]}, mechanisms: {scenario: [...]}}``."""
    if not isinstance(data, dict):
        raise DataError(path, "top level must be a mapping")
    if "scenarios" in data:
        scen = data["scenarios"]
        labels = {s: _options(v.get("labels"), path, f"scenarios.{s}.labels") for s, v in scen.items()}
        mechs = {s: _options(v.get("mechanisms"), path, f"scenarios.{s}.mechanisms") for s, v in scen.items()}
        questions = {s: str(v.get("question", "")) for s, v in scen.items()}
    else:
        for key in ("labels", "mechanisms"):
            if not isinstance(data.get(key), dict):
                raise DataError(path, "missing mapping {scenario: [...]}", field=key)
        labels = {s: _options(v, path, f"labels.{s}") for s, v in data["labels"].items()}
        mechs = {s: _options(v, path, f"mechanisms.{s}") for s, v in data["mechanisms"].items()}
        questions = None
        if set(labels) != set(mechs):
            raise DataError(path, f"scenarios differ between labels {sorted(labels)} and mechanisms {sorted(mechs)}")
    return Taxonomy(
        labels=labels,
        mechanisms=mechs,
        domains=tuple(data.get("domains", ())),
        cultures=tuple(data.get("cultures", ())),
        questions=questions,
    )


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """The built-in MoCA taxonomy, or a YAML/JSON file given by the user."""
    if path is None:
        text = resources.files("socialbench").joinpath("taxonomy/moca.yaml").read_text("utf-8")
        return parse_taxonomy(yaml.safe_load(text), "socialbench/taxonomy/moca.yaml")
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError as exc:
        raise DataError(str(path), "file not found") from exc
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise DataError(str(path), f"cannot parse: {exc}") from exc
    return parse_taxonomy(data, str(path))


def taxonomy_hash(tax: Taxonomy) -> str:
    from socialbench.hashing import sha256_json

    return sha256_json(
        {
            "labels": {s: [[o.name, o.criterion] for o in v] for s, v in tax.labels.items()},
            "mechanisms": {s: [[o.name, o.criterion] for o in v] for s, v in tax.mechanisms.items()},
        }
    )
