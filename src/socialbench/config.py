"""Loading and validating params.yaml against its JSON schema, filling defaults."""

from __future__ import annotations

import copy
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

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


# Words that make an option name look like a secret (matched against the name's words, so
# "max_tokens_param" or "keyframe_interval" are not secrets, "hf_token" and "apiKey" are).
_SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "passphrase", "credential", "credentials",
     "auth", "authorization", "bearer", "cookie"}
)  # fmt: skip
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _secret_fields(value: Any, where: str, model: str) -> list[str]:
    """Fields under ``where`` whose name looks like a secret (their values are never read out).
    A ``*_env`` field is the NAME of an environment variable, allowed when it looks like one."""
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            field = f"{where}.{k}"
            words = _words(str(k))
            if words and words[-1] == "env":
                if _SECRET_WORDS & set(words[:-1]) and not (isinstance(v, str) and _ENV_NAME.match(v)):
                    found.append(f"{field}: must be the NAME of an environment variable (letters, digits, _),"
                                 " not the secret itself")
                continue
            if _SECRET_WORDS & set(words):
                found.append(f"{field}: looks like a secret; secrets are never written into params (they would end"
                             " up in git, DVC and MLflow): put it in an environment variable and set"
                             f" {model}.options.api_key_env to that variable's NAME")
                continue
            found += _secret_fields(v, field, model)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _secret_fields(v, f"{where}[{i}]", model)
    return found


def _has(raw: Any, path: Sequence[Any]) -> bool:
    for part in path:
        if isinstance(raw, dict) and part in raw:
            raw = raw[part]
        elif isinstance(raw, list) and isinstance(part, int) and 0 <= part < len(raw):
            raw = raw[part]
        else:
            return False
    return True


def _origin(paths: Sequence[Sequence[Any]], origins: Sequence[tuple[str, Any]]) -> str | None:
    """The last of ``origins`` (label, raw mapping; in merge order) that sets one of ``paths``."""
    for label, raw in reversed(origins):
        if any(_has(raw, path) for path in paths):
            return label
    return None


def _error_paths(err: jsonschema.ValidationError) -> list[list[Any]]:
    path = list(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set(err.schema.get("properties", {})) if isinstance(err.schema, dict) else set()
        extra = [path + [k] for k in err.instance if k not in allowed]
        if extra:
            return extra
    return [path]


def validate_params(
    params: dict[str, Any] | None, source: str = "params.yaml", origins: Sequence[tuple[str, Any]] | None = None
) -> dict[str, Any]:
    """Return a validated copy of ``params`` with defaults filled; raise ConfigError naming every problem.

    ``origins`` are the raw mappings ``params`` was merged from, in merge order, each with a label
    (e.g. a file name): each problem then names the one that set the offending key.

    An option whose name looks like a secret (api_key, token, password, ...) is refused, naming the
    field and never its value."""
    origins = list(origins or [])

    def where(paths: Sequence[Sequence[Any]]) -> str:
        label = _origin(paths, origins) if len(origins) > 1 else None
        return f" (set in {label})" if label else ""

    schema = load_schema()
    data = copy.deepcopy(params or {})
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping, got {type(data).__name__}")
    models = data.get("models")
    if isinstance(models, dict):
        secrets = [f + where([["models", name, "options"]]) for name, entry in models.items() if isinstance(entry, dict)
                   for f in _secret_fields(entry.get("options"), f"models.{name}.options", f"models.{name}")]  # fmt: skip
        if secrets:
            lines = "\n  ".join(secrets)
            raise ConfigError(f"{source} is invalid:\n  {lines}")
    _fill_defaults(data, schema, schema)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        lines = "\n  ".join(_describe(e) + where(_error_paths(e)) for e in errors)
        raise ConfigError(f"{source} is invalid:\n  {lines}")
    # The backend of each model must be registered (checked here so the run stops before any work).
    from socialbench.backends.base import available_backends

    for name, entry in data["models"].items():
        if entry["backend"] not in available_backends():
            raise ConfigError(
                f"{source}: models.{name}.backend: unknown backend {entry['backend']!r};"
                f" available: {', '.join(available_backends())}{where([['models', name, 'backend']])}"
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
