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
    if err.validator == "pattern" and list(err.absolute_path) == ["models"]:
        return (f"models: the name {err.instance!r} may hold only letters, digits, '_' and '-' and start with a"
                " letter or digit (it names folders, and DVC reads a '.' in models.<name> as a nesting)")
    return f"{path}: {err.message}"


# Secret option names. A name is compared by its words (split at separators and camelCase, lowercased),
# so "x-api-key", "apiKey" and "API_KEY" are the same name. A name is a secret when it IS one (api_key,
# token, password, Authorization, ...) or when its last word is one (hf_token, client_secret,
# private_key); a word elsewhere in the name does not make it one ("stop_token_ids",
# "max_tokens_param", "keyframe_interval" are request parameters). A ``*_env`` name holds the NAME
# of an environment variable and is checked by its value (see :func:`secret_fields`).
SECRET_NAMES = frozenset(
    {"key", "apikey", "api_key", "x_api_key", "token", "access_token", "auth_token", "auth", "secret",
     "password", "passwd", "pwd", "passphrase", "credential", "credentials", "authorization",
     "proxy_authorization", "bearer", "cookie", "cookies", "set_cookie"}
)  # fmt: skip
SECRET_LAST_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "passphrase", "credential", "credentials",
     "authorization", "bearer", "cookie", "cookies"}
)  # fmt: skip
# Names that end like a secret but are request parameters (OpenAI's prompt-cache routing key, the
# tokenizer's special tokens).
NOT_SECRET_NAMES = frozenset(
    {"prompt_cache_key", "cache_key", "bos_token", "eos_token", "pad_token", "unk_token", "sep_token", "cls_token",
     "mask_token"}
)  # fmt: skip
#: What an environment variable's name looks like (the value of ``api_key_env`` and other ``*_env``).
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)  # "HFToken" -> "HF_Token"
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", spaced)  # "apiKey" -> "api_Key"
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def is_env_name_option(name: str) -> bool:
    """``api_key_env``, ``hf_token_env``...: an option that names the environment variable of a secret."""
    words = _words(str(name))
    return len(words) > 1 and words[-1] == "env" and is_secret_name("_".join(words[:-1]))


def is_secret_name(name: str) -> bool:
    """Whether an option called ``name`` would hold a secret (api_key, hf_token, Authorization, ...)."""
    words = _words(str(name))
    if not words or words[-1] == "env":
        return False
    joined = "_".join(words)
    if joined in NOT_SECRET_NAMES:
        return False
    return joined in SECRET_NAMES or words[-1] in SECRET_LAST_WORDS


def holds_secret(name: str, value: Any) -> bool:
    """Whether the option ``name: value`` writes a secret into params. A flag or null holds none
    (``use_auth_token: true`` means "use the stored token")."""
    return is_secret_name(name) and not (value is None or isinstance(value, bool))


def bad_env_name(value: Any) -> bool:
    """Whether ``value`` cannot be the value of an ``*_env`` option: the NAME of an environment
    variable, or null (no variable: no key)."""
    return value is not None and not (isinstance(value, str) and ENV_NAME.match(value))


def secret_fields(value: Any, where: str, model: str) -> list[str]:
    """Fields under ``where`` that hold a secret (their values are never read out). An ``*_env``
    field of a secret (``api_key_env``) is the NAME of an environment variable, or null."""
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            field = f"{where}.{k}"
            if is_env_name_option(str(k)):
                if bad_env_name(v):
                    found.append(f"{field}: must be the NAME of an environment variable (letters, digits, _),"
                                 " or null, not the secret itself")
            elif holds_secret(str(k), v):
                found.append(f"{field}: looks like a secret; secrets are never written into params (they would end"
                             " up in git, DVC and MLflow): put it in an environment variable and set"
                             f" {model}.options.api_key_env to that variable's NAME")
            else:
                found += secret_fields(v, field, model)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += secret_fields(v, f"{where}[{i}]", model)
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

    An option that holds a secret (api_key, hf_token, Authorization, ...; see :func:`secret_fields`)
    is refused, naming the field and never its value."""
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
        # YAML reads `123:`, `true:` or `null:` as a number, boolean or null, not a name.
        odd = [k for k in models if not isinstance(k, str)]
        if odd:
            raise ConfigError(f"{source}: models: the name {odd[0]!r} is a {type(odd[0]).__name__}, not a string;"
                              f" quote it (\"{odd[0]}\": ...){where([['models']])}")  # fmt: skip
        secrets = [f + where([["models", name, "options"]]) for name, entry in models.items() if isinstance(entry, dict)
                   for f in secret_fields(entry.get("options"), f"models.{name}.options", f"models.{name}")]  # fmt: skip
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
