"""The MoCA taxonomy and a loader for replacements given with --taxonomy: ``moca.yaml`` names the output
space, ``moca_rules.yaml`` gives every option its criterion and boundary rule (D.1: "Every option is
supplied with its decision criterion and boundary rule"); :func:`load_taxonomy` joins them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.hashing import sha256_json
from socialbench.core.io import decode_utf8, load_yaml, loads_strict, read_file_bytes

SCENARIOS = ("affection", "intent", "stance")
RULES_FILE = "moca_rules.yaml"


@dataclass(frozen=True)
class Option:
    """One mechanism or label of a scenario; ``source``: ``paper`` or ``completion`` (of the lost Table 9)."""

    name: str
    criterion: str
    source: str = "paper"
    boundary: str = ""
    rule_source: str = ""


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
        return ({s: self.label_names(s) for s in self.labels}, {s: self.mechanism_names(s) for s in self.mechanisms})


_TYPES = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}


def _type(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, (dict, list)) and not value:
        return "an empty mapping" if isinstance(value, dict) else "an empty list"
    return _TYPES.get(type(value), type(value).__name__)


def _name(value: Any, path: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataError(path, f"an option name must be a non-empty string, got {_type(value)} {value!r}", field=where)
    return value


def _options(raw: Any, path: str, where: str) -> tuple[Option, ...]:
    """Options of one scenario: a list of names or a mapping ``{name: {criterion, boundary, source}}``."""
    if isinstance(raw, list):
        out = [Option(name=_name(n, path, f"{where}[{i}]"), criterion="") for i, n in enumerate(raw)]
    elif isinstance(raw, dict):
        out = []
        for name, spec in raw.items():
            _name(name, path, where)
            spec = {} if spec is None else spec
            if not isinstance(spec, dict):
                why = f"an option must map to {{criterion, boundary, source}}, got {_type(spec)}"
                raise DataError(path, why, field=f"{where}.{name}")
            for key in ("criterion", "boundary", "source"):
                if key in spec and not isinstance(spec[key], str):
                    raise DataError(path, f"expected a string, got {_type(spec[key])}", field=f"{where}.{name}.{key}")
            criterion, boundary = _text(spec.get("criterion", "")), _text(spec.get("boundary", ""))
            out.append(Option(name, criterion, spec.get("source", "paper"), boundary))
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


def _text(value: str) -> str:
    """One line: a rule is shown to models as one line per option (YAML folding can leave breaks)."""
    return " ".join(value.split())


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
    """The built-in layout (``scenarios: {...}``) or the override layout (``labels`` and ``mechanisms``)."""
    if not isinstance(data, dict):
        why = f"the top level must be a mapping (scenarios, or labels and mechanisms), got {_type(data)}"
        raise DataError(path, why)
    if "scenarios" in data:
        scen = data["scenarios"]
        if not isinstance(scen, dict) or not scen:
            shape = "a mapping {scenario: {labels, mechanisms, question}} with at least one scenario"
            why = f"expected {shape}, got {_type(scen)}"
            raise DataError(path, why, field="scenarios")
        _scenario_names(scen, path, "scenarios")
        labels, mechs, questions = {}, {}, {}
        for s, v in scen.items():
            if not isinstance(v, dict):
                why = f"expected a mapping with labels and mechanisms (and a question), got {_type(v)}"
                raise DataError(path, why, field=f"scenarios.{s}")
            labels[s] = _options(v.get("labels"), path, f"scenarios.{s}.labels")
            mechs[s] = _options(v.get("mechanisms"), path, f"scenarios.{s}.mechanisms")
            question = v.get("question", "")
            if not isinstance(question, str):
                raise DataError(path, f"expected a string, got {_type(question)}", field=f"scenarios.{s}.question")
            questions[s] = question
    else:
        for key in ("labels", "mechanisms"):
            if not isinstance(data.get(key), dict) or not data[key]:
                why = (
                    f"expected a mapping {{scenario: [names]}} with at least one scenario, got {_type(data.get(key))}"
                    " (or give the built-in layout: scenarios: {scenario: {labels, mechanisms}})"
                )
                raise DataError(path, why, field=key)
            _scenario_names(data[key], path, key)
        labels = {s: _options(v, path, f"labels.{s}") for s, v in data["labels"].items()}
        mechs = {s: _options(v, path, f"mechanisms.{s}") for s, v in data["mechanisms"].items()}
        questions = None
        if set(labels) != set(mechs):
            raise DataError(path, f"scenarios differ between labels {sorted(labels)} and mechanisms {sorted(mechs)}")
    domains, cultures = _names(data, "domains", path), _names(data, "cultures", path)
    return Taxonomy(labels=labels, mechanisms=mechs, domains=domains, cultures=cultures, questions=questions)


def _rule_text(rule: dict[str, Any], key: str, path: str, where: str) -> str:
    value = rule.get(key)
    if not isinstance(value, str) or not value.strip():
        got = "missing" if key not in rule else f"got {_type(value)} {value!r}"
        raise DataError(path, f"expected a non-empty string ({got})", field=f"{where}.{key}")
    return _text(value)


def apply_rules(tax: Taxonomy, data: Any, path: str = RULES_FILE) -> Taxonomy:
    """``tax`` with each option's criterion, boundary and source from a rules file, one rule per option."""
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), dict):
        why = f"expected a mapping with scenarios: {{scenario: {{mechanisms, labels}}}}, got {_type(data)}"
        raise DataError(path, why, field="scenarios")
    rules = data["scenarios"]
    extra = sorted(set(map(str, rules)) - set(tax.scenarios))
    if extra:
        raise DataError(
            path, f"rules for scenario(s) the taxonomy does not have: {', '.join(extra)}", field="scenarios"
        )
    joined: dict[str, dict[str, tuple[Option, ...]]] = {"mechanisms": {}, "labels": {}}
    for s in tax.scenarios:
        for kind, options in (("mechanisms", tax.mechanisms[s]), ("labels", tax.labels[s])):
            where = f"scenarios.{s}.{kind}"
            given = (rules.get(s) or {}).get(kind) if isinstance(rules.get(s), dict) else None
            if not isinstance(given, dict):
                why = f"expected a mapping {{option: rule}} for every {kind[:-1]}, got {_type(given)}"
                raise DataError(path, why, field=where)
            unknown = sorted(set(map(str, given)) - {o.name for o in options})
            if unknown:
                why = f"rule(s) for {kind} the taxonomy does not have: {', '.join(map(repr, unknown))}"
                raise DataError(path, why, field=where)
            out = []
            for opt in options:
                at = f"{where}.{opt.name}"
                if opt.criterion or opt.boundary:
                    why = "the taxonomy already gives this option a criterion or boundary; each text must have one home"
                    raise DataError(path, why, field=at)
                rule = given.get(opt.name)
                if not isinstance(rule, dict):
                    got = "missing" if opt.name not in given else f"got {_type(rule)}"
                    fields = "{criterion, boundary, source, named_in_paper}"
                    raise DataError(path, f"every option needs a rule {fields} ({got})", field=at)
                named = rule.get("named_in_paper")
                if not isinstance(named, bool):
                    why = f"expected true or false, got {_type(named)} {named!r}"
                    raise DataError(path, why, field=f"{at}.named_in_paper")
                texts = [_rule_text(rule, key, path, at) for key in ("criterion", "boundary", "source")]
                out.append(Option(opt.name, texts[0], "paper" if named else "completion", texts[1], texts[2]))
            joined[kind][s] = tuple(out)
    return replace(tax, mechanisms=joined["mechanisms"], labels=joined["labels"])


def _builtin(name: str) -> Any:
    data = resources.files("socialbench.moca.schema.taxonomy").joinpath(name).read_bytes()
    return load_yaml(data, f"socialbench/moca/schema/taxonomy/{name}", error=DataError)


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """The built-in taxonomy (moca.yaml joined with moca_rules.yaml), or a user's YAML/JSON file."""
    if path is None:
        tax = parse_taxonomy(_builtin("moca.yaml"), "socialbench/moca/schema/taxonomy/moca.yaml")
        return apply_rules(tax, _builtin(RULES_FILE), f"socialbench/moca/schema/taxonomy/{RULES_FILE}")
    # The strict readers (socialbench.core.io): no aliases, duplicate keys, tags or NaN; line and column named.
    path = Path(path)
    raw = read_file_bytes(path, "taxonomy file")
    if path.suffix == ".json":
        data = loads_strict(decode_utf8(raw, str(path)), str(path))
    else:
        data = load_yaml(raw, str(path), error=DataError)
    return parse_taxonomy(data, str(path))


def taxonomy_hash(tax: Taxonomy) -> str:
    """sha256 over everything of the taxonomy that reaches a prompt or the scorer."""

    def options(v: tuple[Option, ...]) -> list[list[str]]:
        return [[o.name, o.criterion, o.boundary, o.source, o.rule_source] for o in v]

    labels, mechanisms = ({s: options(v) for s, v in d.items()} for d in (tax.labels, tax.mechanisms))
    return sha256_json({"labels": labels, "mechanisms": mechanisms, "questions": tax.questions or {}})
