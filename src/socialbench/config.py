"""Loading and validating params.yaml against its JSON schema, filling defaults."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from socialbench.errors import ConfigError

SCHEMA_RESOURCE = "schemas/params.schema.json"


def load_schema() -> dict[str, Any]:
    return json.loads(resources.files("socialbench").joinpath(SCHEMA_RESOURCE).read_text("utf-8"))


def schema_path() -> Path:
    return Path(str(resources.files("socialbench").joinpath(SCHEMA_RESOURCE)))


def _fill_defaults(instance: Any, schema: dict[str, Any], root: dict[str, Any]) -> None:
    """Fill ``default`` values of object properties, recursively (also through $ref and
    additionalProperties schemas), before validation."""
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        schema = target
    if not isinstance(instance, dict) or schema.get("type") not in ("object", None):
        return
    props = schema.get("properties", {})
    for name, sub in props.items():
        if name not in instance and "default" in sub:
            instance[name] = copy.deepcopy(sub["default"])
        if name in instance:
            _fill_defaults(instance[name], sub, root)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for name, value in instance.items():
            if name not in props:
                _fill_defaults(value, extra, root)


def _describe(err: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) for p in err.absolute_path) or "<top level>"
    if err.validator == "additionalProperties":
        return f"{path}: {err.message} (unknown key; see params.yaml comments for the allowed ones)"
    return f"{path}: {err.message}"


def validate_params(params: dict[str, Any] | None, source: str = "params.yaml") -> dict[str, Any]:
    """Return a validated copy of ``params`` with defaults filled; raise ConfigError naming every problem."""
    schema = load_schema()
    data = copy.deepcopy(params or {})
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping, got {type(data).__name__}")
    _fill_defaults(data, schema, schema)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        lines = "\n  ".join(_describe(e) for e in errors)
        raise ConfigError(f"{source} is invalid:\n  {lines}")
    # The backend of each model must be registered (checked here so the run stops before any work).
    from socialbench.backends.base import available_backends

    for name, entry in data["models"].items():
        if entry["backend"] not in available_backends():
            raise ConfigError(
                f"{source}: models.{name}.backend: unknown backend {entry['backend']!r};"
                f" available: {', '.join(available_backends())}"
            )
    return data


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: file not found") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    return validate_params(raw, source=str(path))
