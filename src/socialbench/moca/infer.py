"""The MoCA inference runner: requests -> cache -> backend -> parsed prediction records.

Every finished call is written to the request cache at once, so an interrupted run resumes without
repeating finished calls; predictions are written (atomically) only when all instances have an
answer or a recorded error.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from tqdm import tqdm

from socialbench.backends.base import Backend, BackendContext, ModelSpec, Request, Response, create_backend
from socialbench.cache import RequestCache, cache_key
from socialbench.moca.parsing import parse_answer
from socialbench.errors import DataError, SocialbenchError
from socialbench.moca.prompts import InstanceInputError, build_direct_request
from socialbench.taxonomy import Taxonomy

METHODS = ("direct",)  # prompting methods implemented (direct = appendix D.1)


@dataclass
class RunStats:
    requests: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    wall_s: float = 0.0
    cost_usd: float = 0.0
    retries: int = 0  # API backends: retried attempts (429, 5xx, overloaded, timeouts)
    attempts: int = 0  # API backends: HTTP attempts made
    error_examples: dict[str, str] = field(default_factory=dict)
    #: What the backend's answers depend on besides the request (its cache-key identity: backend,
    #: model id, revision or weights hash, decoding options), recorded with the run.
    backend_identity: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["latency_s"] = round(d["latency_s"], 3)
        d["wall_s"] = round(d["wall_s"], 3)
        d["cost_usd"] = round(d["cost_usd"], 6)
        return d


def estimate_cost(spec: ModelSpec, input_tokens: int, output_tokens: int) -> float:
    return (input_tokens * spec.price_in_per_mtok + output_tokens * spec.price_out_per_mtok) / 1e6


def check_method(method: str) -> None:
    if method not in METHODS:
        raise SocialbenchError(f"unknown method {method!r}; known methods: {', '.join(METHODS)}")


def build_requests(
    instances: list[dict[str, Any]], tax: Taxonomy, spec: ModelSpec, method: str, seed: int,
    source: str = "instances",
) -> list[tuple[Request, dict[str, dict[str, str]]]]:
    """(request, slot maps) per instance. An instance that cannot become a request (a video-text one
    without frames, an image that cannot be read) is a DataError naming ``source`` (the instances
    file), the record and the field."""
    check_method(method)
    out = []
    for inst in instances:
        try:
            out.append(build_direct_request(inst, tax, spec, seed))
        except InstanceInputError as exc:
            raise DataError(source, exc.message, record=str(inst.get("id")), field=exc.field) from exc
    return out


def run_requests(
    backend: Backend,
    requests: list[Request],
    cache: RequestCache,
    identity: dict[str, Any],
    model: str,
    stats: RunStats,
    progress: bool = True,
) -> list[Response]:
    """Cached responses where present; the misses go through the backend, each stored on arrival."""
    responses: list[Response | None] = [None] * len(requests)
    keys = [cache_key(identity, r) for r in requests]
    todo = []
    for i, key in enumerate(keys):
        hit = cache.get(key)
        if hit is not None:
            responses[i] = hit
        else:
            todo.append(i)
    stats.requests += len(requests)
    stats.cache_hits += len(requests) - len(todo)
    stats.cache_misses += len(todo)
    if todo:
        bar = tqdm(total=len(todo), desc=f"{model}", unit="call", disable=not progress, mininterval=1.0)

        def on_result(j: int, resp: Response) -> None:
            i = todo[j]
            responses[i] = resp
            cache.put(keys[i], identity, requests[i], resp, model)
            bar.update(1)

        try:
            backend.complete_many([requests[i] for i in todo], on_result)
        finally:
            bar.close()
    out = []
    for i, resp in enumerate(responses):
        if resp is None:  # a backend that returned without answering one request
            resp = Response(text=None, error="backend returned no response")
        out.append(resp)
    return out


def predict(
    instances: list[dict[str, Any]],
    *,
    spec: ModelSpec,
    method: str,
    tax: Taxonomy,
    seed: int,
    cache: RequestCache,
    dev_instances: list[dict[str, Any]] | None = None,
    progress: bool = True,
    backend: Backend | None = None,
    source: str = "instances",
) -> tuple[list[dict[str, Any]], RunStats]:
    """Prediction records for all instances (sorted by id) and the run's accounting. The requests are
    built before the backend starts, so an instance that cannot be run (named in a DataError with
    ``source``, the instances file) stops the run before any model loads."""
    start = time.perf_counter()
    stats = RunStats()
    pairs = build_requests(instances, tax, spec, method, seed, source)
    requests = [r for r, _ in pairs]
    context = BackendContext(seed=seed, dev_instances=dev_instances)
    owned = backend is None
    backend = backend or create_backend(spec, context)
    try:
        identity = backend.identity()
        stats.backend_identity = dict(identity)
        responses = run_requests(backend, requests, cache, identity, spec.name, stats, progress)
        stats.retries = int(getattr(backend, "retries", 0))
        stats.attempts = int(getattr(backend, "attempts", 0))
    finally:
        if owned:
            backend.close()
    records = []
    for inst, (req, maps), resp in zip(instances, pairs, responses):
        s = inst["scenario"]
        fields, field_errors, record_error = parse_answer(
            resp.text, tax.mechanism_names(s), tax.label_names(s), maps
        )
        error = resp.error or record_error
        if resp.error:
            stats.errors += 1
            if len(stats.error_examples) < 5:
                stats.error_examples[inst["id"]] = resp.error
        stats.input_tokens += resp.input_tokens
        stats.output_tokens += resp.output_tokens
        stats.latency_s += 0.0 if resp.cached else resp.latency_s
        records.append(
            {
                "id": inst["id"],
                "model": spec.name,
                "method": method,
                "scenario": s,
                "raw": resp.text,
                **fields,
                "error": error,
                "field_errors": field_errors,
                "slots": maps,
                "request_key": cache_key(identity, req),
                "inputs": [{"sha256": p.sha256, "timestamp": p.timestamp} for p in req.images()],
            }
        )
    stats.cost_usd = estimate_cost(spec, stats.input_tokens, stats.output_tokens)
    stats.wall_s = time.perf_counter() - start
    records.sort(key=lambda r: r["id"])
    return records, stats
