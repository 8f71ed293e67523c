"""What a job asks a cluster for, from params (``resources`` and the model entry); Snakemake passes it to
its executor (``profiles/slurm``), a local run ignores it. An inference job's GPUs follow its model: ``vllm``
its ``tensor_parallel_size``, ``hf`` one unless on the CPU, others and a server the job does not start
(``options.base_url``, :func:`server_url_env`) none."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from socialbench.core.secrets import redact_url

#: ``SOCIALBENCH_SERVER_URL_<MODEL>``: a running server for one model, named outside the tracked params.
SERVER_URL_ENV_PREFIX = "SOCIALBENCH_SERVER_URL_"

#: Kinds of job with their own ``resources`` entry (others use ``default``).
KINDS = ("default", "media", "infer")


def server_url_env(model_name: str) -> str:
    """The variable naming a running server for a model: ``qwen3-vl-32b`` -> ``SOCIALBENCH_SERVER_URL_QWEN3_VL_32B``."""
    return SERVER_URL_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", model_name).upper()


def external_server(
    model_name: str | None, model: dict[str, Any] | None, environ: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """(url, where set) of a running server: :func:`server_url_env` over ``options.base_url``, or None."""
    env = server_url_env(model_name) if model_name else None
    url = (environ or {}).get(env, "").strip() if env else ""
    if url:
        return url, f"${env}"
    base = ((model or {}).get("options") or {}).get("base_url")
    return (base, f"models.{model_name}.options.base_url") if base else None


def external_server_url(
    model_name: str | None, model: dict[str, Any] | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The URL of :func:`external_server`, or None."""
    found = external_server(model_name, model, environ)
    return found[0] if found else None


def server_url_problem(url: str) -> str | None:
    """Why ``url`` cannot name a running server, or None. Pure; credentials masked."""
    shown = repr(redact_url(url))
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # a bracket left open
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https"):
        return f"{shown} is not a server URL (expected http://HOST:PORT/v1 or https://...)"
    if not parts.hostname:
        return f"{shown} names no host (expected http://HOST:PORT/v1)"
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:  # not a number, or out of range
        port_ok = False
    if not port_ok:
        return f"{shown}: its port is not a number from 1 to 65535"
    return None


def model_gpus(
    model: dict[str, Any] | None, model_name: str | None = None, environ: Mapping[str, str] | None = None
) -> int:
    """GPUs an inference job of this model entry needs (0 for APIs and baselines)."""
    if not model:
        return 0
    options = model.get("options") or {}
    backend = model.get("backend")
    if backend in ("vllm", "transformers_serve") and external_server_url(model_name, model, environ):
        return 0  # a server the user runs elsewhere: the job starts none
    if backend == "vllm":  # the server's --tensor-parallel-size: one GPU per shard
        return int(options.get("tensor_parallel_size", 1) or 1)
    if backend in ("hf", "transformers_serve"):  # on the CPU none, else one GPU
        return 0 if str(options.get("device", "auto")).startswith(("cpu", "mps")) else 1
    return 0


def job_resources(
    resources: dict[str, Any],
    kind: str,
    model_name: str | None = None,
    model: dict[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, int]:
    """One job's resources: ``default``, ``<kind>``, an infer job's GPUs and ``models.<model>``; no zero ``gpu``."""
    if kind not in KINDS:
        raise ValueError(f"resources: unknown kind of job {kind!r} (one of {', '.join(KINDS)})")
    out = dict(resources.get("default") or {})
    if kind != "default":
        out.update(resources.get(kind) or {})
    if kind == "infer":
        out["gpu"] = model_gpus(model, model_name, environ)
        out.update((resources.get("models") or {}).get(model_name or "", {}))
    if not out.get("gpu"):
        out.pop("gpu", None)
    return {k: int(v) for k, v in out.items()}
