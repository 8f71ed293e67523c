"""Loading and validating params.yaml against its JSON schema, filling defaults."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from socialbench.core.backend import available_backends, backend_options_schema
from socialbench.core.benchmarks import available_benchmarks, get_benchmark_class
from socialbench.core.errors import ConfigError
from socialbench.core.hashing import sha256_bytes
from socialbench.core.io import load_yaml_file, one_line
from socialbench.core.modalities import modality_problems
from socialbench.core.resources import model_gpus, server_url_env, server_url_problem
from socialbench.core.run_name import RunName
from socialbench.core.secrets import redact_url, secret_fields

SCHEMA_RESOURCE = "core/schemas/params.schema.json"


def load_schema() -> dict[str, Any]:
    return json.loads(resources.files("socialbench").joinpath(SCHEMA_RESOURCE).read_text("utf-8"))


def _fill_defaults(instance: Any, schema: dict[str, Any], root: dict[str, Any]) -> None:
    """Fill ``default`` values of object properties recursively (through $ref and additionalProperties)."""
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
        return (
            f"models: the name {err.instance!r} may hold only letters, digits, '_' and '-' and start with a"
            " letter or digit (it names folders, and DVC reads a '.' in models.<name> as a nesting)"
        )
    if err.validator == "not" and list(err.absolute_path) == ["mlflow", "tracking_uri"]:
        # Never echo the value: it holds a password.
        return (
            "mlflow.tracking_uri: holds a password; params are tracked by git and DVC, so give a store with"
            " a password in the environment (MLFLOW_TRACKING_URI) instead"
        )
    return f"{path}: {err.message}"


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
    """The last of ``origins`` (label, raw mapping; merge order) that sets one of ``paths``."""
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
    """A validated copy of ``params`` with defaults filled; a ConfigError naming every problem (and, given
    ``origins``, the labelled raw mapping that set its key). A secret in an option is named, never shown."""
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
            raise ConfigError(
                f"{source}: models: the name {odd[0]!r} is a {type(odd[0]).__name__}, not a string;"
                f' quote it ("{odd[0]}": ...){where([["models"]])}'
            )
        secrets = [
            f + where([["models", name, "options"]])
            for name, entry in models.items()
            if isinstance(entry, dict)
            for f in secret_fields(entry.get("options"), f"models.{name}.options", f"models.{name}")
        ]
        if secrets:
            raise ConfigError(f"{source} is invalid: {'; '.join(secrets)}")
    # each benchmark's section against its own schema (below): adding a benchmark changes no core file
    benchmark_sections = {k: data.pop(k) for k in list(data) if k in available_benchmarks()}
    _fill_defaults(data, schema, schema)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    problems = [_describe(e) + where(_error_paths(e)) for e in errors]
    sections, section_problems = _benchmark_sections(benchmark_sections, where)
    if not problems:
        problems = _core_problems(data, sections, where)
    if problems or section_problems:
        # One line (every error of a command is): the problems separated by "; ", in key order.
        raise ConfigError(f"{source} is invalid: {'; '.join(problems + section_problems)}")
    data.update(sections)
    # The backend of each model must be registered (checked here so the run stops before any work).
    for name, entry in data["models"].items():
        if entry["backend"] not in available_backends():
            raise ConfigError(
                f"{source}: models.{name}.backend: unknown backend {entry['backend']!r};"
                f" available: {', '.join(available_backends())}{where([['models', name, 'backend']])}"
            )
    problems = [p + where([["models", name, "options"]]) for name, p in _options_problems(data["models"])]
    problems += [
        f"models.{name}.modalities: {p}" + where([["models", name, "modalities"]])
        for name, entry in data["models"].items()
        for p in modality_problems(entry)
    ]
    if problems:
        raise ConfigError(f"{source} is invalid: {'; '.join(problems)}")
    return data


def _options_problems(models: dict[str, Any]) -> list[tuple[str, str]]:
    """``(model, problem)`` for each option its backend's options schema refuses."""
    out = []
    for name, entry in models.items():
        schema = backend_options_schema(entry["backend"])
        if schema is None:
            continue
        validator = jsonschema.Draft202012Validator(schema)
        for err in sorted(validator.iter_errors(entry.get("options") or {}), key=lambda e: list(e.absolute_path)):
            key = ".".join(str(p) for p in ["models", name, "options", *err.absolute_path])
            if err.validator == "additionalProperties" and not err.absolute_path:
                known = ", ".join(sorted(schema.get("properties", {}))) or "none"
                extra = sorted(set(err.instance) - set(schema.get("properties", {})))
                out.append(
                    (name, f"{key}: unknown option(s) {', '.join(extra)} (backend {entry['backend']} takes: {known})")
                )
            else:
                out.append((name, f"{key}: {err.message}"))
    return out


def _benchmark_sections(sections: dict[str, Any], where) -> tuple[dict[str, Any], list[str]]:
    """Each benchmark's section validated against its own schema, defaults filled; (sections, problems)."""
    out, problems = {}, []
    for name, section in sections.items():
        schema = get_benchmark_class(name).params_schema()
        data = copy.deepcopy(section if section is not None else {})
        _fill_defaults(data, schema, schema)
        for err in sorted(
            jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.absolute_path)
        ):
            err.path.appendleft(name)  # name the section: "<benchmark>.demo.n_test: ..."
            problems.append(_describe(err) + where(_error_paths(err)))
        out[name] = data
        if not any(p.startswith(f"{name}.") or p.startswith(f"{name}:") for p in problems):
            # Names are checked once the section's shape is right (a run list that is not a list names nothing).
            bench = get_benchmark_class(name)()
            problems += [f"{name}.{p}" + where([[name]]) for p in bench.params_problems(data)]
    return out, problems


#: Tracking-store schemes MLflow opens (``+driver`` variants too).
_TRACKING_SCHEMES = ("sqlite", "http", "https", "postgresql", "mysql", "mssql", "databricks", "uc")


#: What MLflow (3.x) says of its file store, and the way out.
FILE_STORE_PROBLEM = (
    "names MLflow's file store (a folder, or file://), which MLflow keeps in maintenance mode and refuses"
    " to open; use a database store such as sqlite:///mlflow.db (`mlflow migrate-filestore` moves an"
    " existing store's runs there)"
)


def tracking_uri_problem(uri: str, *, allow_file_store: bool = False) -> str | None:
    """Why MLflow cannot use ``uri`` as its tracking store, or None; a file store needs ``allow_file_store``."""
    import re
    import urllib.parse

    shown = repr(redact_url(uri))  # a message never shows a credential of the URI

    scheme = urllib.parse.urlsplit(uri).scheme.lower()
    if uri.lower() in ("databricks", "databricks-uc"):  # MLflow's names of a Databricks workspace's stores
        return None
    if re.match(r"^[A-Za-z]:[\\/]", uri) or "://" not in uri and ":" not in uri or scheme == "file":
        return None if allow_file_store else f"{shown}: {FILE_STORE_PROBLEM}"
    if scheme.split("+", 1)[0] not in _TRACKING_SCHEMES:
        return f"{shown}: MLflow has no tracking store for the scheme {scheme!r} (sqlite:///<file>, http(s)://..., postgresql://...)"
    if scheme == "sqlite" and not uri.startswith("sqlite:///"):
        return f"{shown}: a sqlite store is sqlite:///<relative path> or sqlite:////<absolute path>"
    if scheme in ("http", "https") and not urllib.parse.urlsplit(uri).netloc:
        return f"{shown}: names no server"
    return None


def _method_of(run: str) -> str | None:
    """The method of run ``run``, or None when it is no run name."""
    try:
        return RunName.parse(run).method
    except ValueError:
        return None


def _core_problems(data: dict[str, Any], sections: dict[str, Any], where) -> list[str]:
    """Core keys naming nothing: the tracking URI, a model's benchmarks, only_ and exclude_methods."""
    problems = []
    uri_problem = tracking_uri_problem(data["mlflow"]["tracking_uri"])
    if uri_problem:
        problems.append(f"mlflow.tracking_uri: {uri_problem}" + where([["mlflow", "tracking_uri"]]))
    benchmarks = available_benchmarks()
    methods = {b: get_benchmark_class(b)().method_names() for b in benchmarks}
    every_method = sorted({m for names in methods.values() for m in names})
    for name, entry in data["models"].items():
        if entry.get("price") is not None and (entry.get("price_in_per_mtok") or entry.get("price_out_per_mtok")):
            problems.append(
                f"models.{name}.price: give the price once: price, or the older price_in_per_mtok and"
                " price_out_per_mtok" + where([["models", name, "price"]])
            )
        for i, b in enumerate(entry.get("benchmarks") or []):
            if b not in benchmarks:
                problems.append(
                    f"models.{name}.benchmarks.{i}: {b!r} is no benchmark (known: {', '.join(benchmarks)})"
                    + where([["models", name, "benchmarks"]])
                )
        for b, runs in (entry.get("only_methods") or {}).items():
            if b not in benchmarks:
                problems.append(
                    f"models.{name}.only_methods.{b}: is no benchmark (known: {', '.join(benchmarks)})"
                    + where([["models", name, "only_methods", b]])
                )
                continue
            for i, run in enumerate(runs):
                if _method_of(run) not in methods[b]:
                    problems.append(
                        f"models.{name}.only_methods.{b}.{i}: {run!r} names no method of {b}"
                        f" (known: {', '.join(methods[b])})" + where([["models", name, "only_methods", b]])
                    )
        for run in entry.get("exclude_methods") or {}:
            if _method_of(run) not in every_method:
                problems.append(
                    f"models.{name}.exclude_methods.{run}: names no method of any benchmark"
                    f" (known: {', '.join(every_method)})" + where([["models", name, "exclude_methods", run]])
                )
    # A benchmark's robustness section (its order runs) names models: each must be under models.
    for b, section in sections.items():
        for i, model in enumerate(((section or {}).get("robustness") or {}).get("models") or []):
            if model not in data["models"]:
                problems.append(
                    f"{b}.robustness.models.{i}: {model!r} is no model under models"
                    f" (known: {', '.join(data['models'])})" + where([[b, "robustness", "models"]])
                )
    problems += _resource_problems(data, where)
    return problems


def _resource_problems(data: dict[str, Any], where) -> list[str]:
    """Resource and server mistakes: ``resources.models`` naming no model, a vLLM model given fewer GPUs
    than it shards over, two models sharing one server variable, a bad ``options.base_url``."""
    problems = []
    models = data["models"]
    for name, entry in models.items():
        base = (entry.get("options") or {}).get("base_url")
        problem = server_url_problem(base) if isinstance(base, str) and base else None
        if problem:
            problems.append(f"models.{name}.options.base_url: {problem}" + where([["models", name, "options"]]))
    for name, res in (data.get("resources", {}).get("models") or {}).items():
        if name not in models:
            problems.append(
                f"resources.models.{name}: names no model of params (models: {', '.join(models)})"
                + where([["resources", "models", name]])
            )
            continue
        gpus, entry = res.get("gpu"), models[name]
        needed = model_gpus(entry, name, environ={})  # the params' own: a server named elsewhere starts none
        if entry.get("backend") == "vllm" and gpus is not None and needed and gpus < needed:
            problems.append(
                f"resources.models.{name}.gpu: {gpus} is fewer than the {needed} GPUs its vLLM server shards over"
                f" (models.{name}.options.tensor_parallel_size); give gpu: {needed}, or a running server in"
                f" models.{name}.options.base_url" + where([["resources", "models", name, "gpu"]])
            )
    by_env: dict[str, str] = {}
    for name in models:
        env = server_url_env(name)
        if env in by_env:
            problems.append(
                f"models.{name}: its server variable {env} is also models.{by_env[env]}'s (names that differ only"
                " in case, '-' or '_' share one); rename one" + where([["models", name]])
            )
        by_env.setdefault(env, name)
    return problems


def read_params_file(path: str | Path = "params.yaml") -> dict[str, Any]:
    """The mapping a params file holds, read strictly (one-line ConfigErrors), not validated; empty refused."""
    raw = load_yaml_file(path, error=ConfigError)
    if raw is None:
        raise ConfigError(
            f"{path}: holds no settings (the file is empty or only comments); a params file needs at"
            " least its models (see params.yaml in the repository)"
        )
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{path}: the top level must be a mapping of settings (key: value), got a {type(raw).__name__}"
        )
    return raw


def exit_if_unreadable(path: str | Path = "params.yaml") -> None:
    """For the Snakefile, before its own parse (which names no line): exit with check-params' message."""
    import sys

    try:
        read_params_file(path)
    except ConfigError as exc:
        sys.exit(f"error: {one_line(exc)}")


#: The params the Snakefile validated, handed to jobs as JSON {sha256, params} (rules/common.smk).
VALIDATED_ENV = "SOCIALBENCH_VALIDATED_PARAMS"
#: Larger values stay out of the environment (a variable holds at most 128 KiB on Linux).
VALIDATED_MAX_CHARS = 64 * 1024


def load_params(path: str | Path = "params.yaml", environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """params read strictly and validated, or ``environ[VALIDATED_ENV]``'s values for exactly these bytes."""
    handed = _validated_values(path, environ.get(VALIDATED_ENV))
    return handed if handed is not None else validate_params(read_params_file(path), source=str(path))


def validated_record(path: str | Path = "params.yaml") -> str | None:
    """:data:`VALIDATED_ENV`'s value for ``path`` (validated here); None when the values would not survive
    JSON, the record is too large, or the file changed while read."""
    before = Path(path).read_bytes()
    params = validate_params(read_params_file(path), source=str(path))
    text = json.dumps({"sha256": sha256_bytes(before), "params": params}, separators=(",", ":"))
    if len(text) > VALIDATED_MAX_CHARS or json.loads(text)["params"] != params:
        return None
    return text if Path(path).read_bytes() == before else None


def _validated_values(path: str | Path, record: str | None) -> dict[str, Any] | None:
    """``record``'s values when the file at ``path`` has its bytes, else None (the usual path says why)."""
    if not record or not Path(path).is_file():
        return None
    try:
        handed = json.loads(record)
        raw = Path(path).read_bytes()
    except (ValueError, OSError):
        return None
    if not isinstance(handed, dict) or handed.get("sha256") != sha256_bytes(raw):
        return None
    params = handed.get("params")
    return params if isinstance(params, dict) else None


def overlay_params(base: Mapping[str, Any], overlay: Mapping[str, Any], replace: tuple[str, ...] = ("models",)) -> dict:
    """``base`` with ``overlay`` merged in at every depth (other values replaced; keys in ``replace`` whole). Pure."""

    def merge(a: Any, b: Any) -> Any:
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out = dict(a)
            for key, value in b.items():
                out[key] = merge(a[key], value) if key in a else value
            return out
        return b

    merged = dict(base)
    for key, value in overlay.items():
        merged[key] = value if key in replace or key not in base else merge(base[key], value)
    return merged
