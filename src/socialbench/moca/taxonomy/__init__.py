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


def _type(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, (dict, list)) and not value:
        return "an empty mapping" if isinstance(value, dict) else "an empty list"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def _name(value: Any, path: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataError(path, f"an option name must be a non-empty string, got {_type(value)} {value!r}", field=where)
    return value


def _options(raw: Any, path: str, where: str) -> tuple[Option, ...]:
    """Options of one scenario: a list of names (the --taxonomy override format) or a mapping
    ``{name: {criterion, source}}``. At least one, no name twice."""
    if isinstance(raw, list):  # plain list of names (the --taxonomy override format)
        out = [Option(name=_name(n, path, f"{where}[{i}]"), criterion="") for i, n in enumerate(raw)]
    elif isinstance(raw, dict):
        out = []
        for name, spec in raw.items():
            _name(name, path, where)
            spec = {} if spec is None else spec
            if not isinstance(spec, dict):
                raise DataError(path, f"an option must map to {{criterion, source}}, got {_type(spec)}", field=f"{where}.{name}")
            for key in ("criterion", "source"):
                if key in spec and not isinstance(spec[key], str):
                    raise DataError(path, f"expected a string, got {_type(spec[key])}", field=f"{where}.{name}.{key}")
            out.append(Option(name=name, criterion=spec.get("criterion", ""), source=spec.get("source", "paper")))
    elif raw is None:
        raise DataError(path, "missing: expected a list of names or a mapping of options", field=where)
    else:
        raise DataError(path, f"expected a list of names or a mapping of options, got {_type(raw)}", field=where)
    if not out:
        raise DataError(path, "no options: a scenario needs at least one", field=where)
    seen: set[str] = set()
    for opt in out:
        if opt.name in seen:
            raise DataError(path, f"option {opt.name!r} is listed twice", field=where)
        seen.add(opt.name)
    return tuple(out)


def _scenario_names(mapping: dict[Any, Any], path: str, where: str) -> None:
    for s in mapping:
        if not isinstance(s, str) or not s.strip():
            raise DataError(path, f"a scenario name must be a non-empty string, got {_type(s)} {s!r}", field=where)


def _names(data: dict[str, Any], key: str, path: str) -> tuple[str, ...]:
    raw = data.get(key)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise DataError(path, f"expected a list of names, got {_type(raw)}", field=key)
    return tuple(_name(v, path, f"{key}[{i}]") for i, v in enumerate(raw))


def parse_taxonomy(data: dict[str, Any], path: str = "<taxonomy>") -> Taxonomy:
    """Accepts the built-in layout (``scenarios: {s: {labels, mechanisms}}``) or the override layout
    ``{labels: {scenario: [...]}, mechanisms: {scenario: [...]}}``. A wrong shape is a DataError
    naming the file and the field."""
    if not isinstance(data, dict):
        raise DataError(path, f"the top level must be a mapping (scenarios, or labels and mechanisms), got {_type(data)}")
    if "scenarios" in data:
        scen = data["scenarios"]
        if not isinstance(scen, dict) or not scen:
            raise DataError(
                path, f"expected a mapping {{scenario: {{labels, mechanisms, question}}}} with at least one scenario, got {_type(scen)}",
                field="scenarios",
            )
        _scenario_names(scen, path, "scenarios")
        labels, mechs, questions = {}, {}, {}
        for s, v in scen.items():
            if not isinstance(v, dict):
                raise DataError(path, f"expected a mapping with labels and mechanisms (and a question), got {_type(v)}", field=f"scenarios.{s}")
            labels[s] = _options(v.get("labels"), path, f"scenarios.{s}.labels")
            mechs[s] = _options(v.get("mechanisms"), path, f"scenarios.{s}.mechanisms")
            question = v.get("question", "")
            if not isinstance(question, str):
                raise DataError(path, f"expected a string, got {_type(question)}", field=f"scenarios.{s}.question")
            questions[s] = question
    else:
        for key in ("labels", "mechanisms"):
            if not isinstance(data.get(key), dict) or not data[key]:
                raise DataError(
                    path, f"expected a mapping {{scenario: [names]}} with at least one scenario, got {_type(data.get(key))}"
                    " (or give the built-in layout: scenarios: {scenario: {labels, mechanisms}})",
                    field=key,
                )
            _scenario_names(data[key], path, key)
        labels = {s: _options(v, path, f"labels.{s}") for s, v in data["labels"].items()}
        mechs = {s: _options(v, path, f"mechanisms.{s}") for s, v in data["mechanisms"].items()}
        questions = None
        if set(labels) != set(mechs):
            raise DataError(path, f"scenarios differ between labels {sorted(labels)} and mechanisms {sorted(mechs)}")
    return Taxonomy(
        labels=labels,
        mechanisms=mechs,
        domains=_names(data, "domains", path),
        cultures=_names(data, "cultures", path),
        questions=questions,
    )


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """The built-in MoCA taxonomy, or a YAML/JSON file given by the user."""
    if path is None:
        text = resources.files("socialbench.moca.taxonomy").joinpath("moca.yaml").read_text("utf-8")
        return parse_taxonomy(yaml.safe_load(text), "socialbench/moca/taxonomy/moca.yaml")
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError as exc:
        raise DataError(str(path), "file not found") from exc
    except IsADirectoryError as exc:
        raise DataError(str(path), "is a folder, not a taxonomy file") from exc
    except UnicodeDecodeError as exc:
        raise DataError(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise DataError(str(path), f"cannot read it: {exc.strerror or exc}") from exc
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
