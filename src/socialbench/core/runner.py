"""The generic multi-round runner: method rounds -> request cache -> backend -> traces and records.
Round k of every instance in flight goes out together; every call is stored on arrival, so a killed run
resumes by replaying finished rounds from the cache."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

from tqdm import tqdm

from socialbench.core.backend import (
    Backend,
    BackendContext,
    ModelSpec,
    Request,
    Response,
    check_requests,
    create_backend,
    without_reasoning,
)
from socialbench.core.benchmarks import TRACE_POINTER, Benchmark, Exchange, Final, InstanceInputError, Method
from socialbench.core.cache import RequestCache, cache_key
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.paths import MediaRoots

#: A method that has not answered after this many rounds is stopped (a bug, not a slow model).
MAX_ROUNDS = 64


@dataclass
class SearchCounts:
    """The searches of a run: made or replayed from the cache, and failed (with a few messages)."""

    searches: int = 0
    cached: int = 0
    errors: int = 0
    error_examples: list[str] = field(default_factory=list)


_COUNTS: ContextVar[SearchCounts | None] = ContextVar("socialbench_search_counts", default=None)


def current_search_counts() -> SearchCounts:
    """The tally of the run in progress (a throwaway one outside a run)."""
    return _COUNTS.get() or SearchCounts()


@contextmanager
def counting_searches() -> Iterator[SearchCounts]:
    """Count every ``core.retrieval.cached_search`` made inside the block."""
    counts = SearchCounts()
    token = _COUNTS.set(counts)
    try:
        yield counts
    finally:
        _COUNTS.reset(token)


@dataclass
class RunStats:
    requests: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    #: Failed calls and failed searches: each an instance scored invalid.
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    wall_s: float = 0.0
    cost_usd: float = 0.0
    retries: int = 0  # API backends: retried attempts (429, 5xx, overloaded, timeouts)
    attempts: int = 0  # API backends: HTTP attempts made
    truncated: int = 0  # answers cut at max_tokens (finish_reason "length"), all-reasoning ones included
    #: Responses with reasoning; ``reasoning_only``: with no answer after it (also ``truncated``).
    reasoning: int = 0
    reasoning_only: int = 0
    #: Requests by the constraint sent (``core.backend.CONSTRAINTS``).
    constraints: dict[str, int] = field(default_factory=dict)
    #: Whether it was enforced in decoding (``Backend.json_enforced``).
    json_enforced: bool | None = None
    #: Answers to constrained requests by :func:`json_form`: what the server did, measured.
    json_answers: dict[str, int] = field(default_factory=dict)
    #: Whether the temperature reached the model (None: no model).
    temperature_sent: bool | None = None
    rounds: int = 0
    error_examples: dict[str, str] = field(default_factory=dict)
    #: A method's searches: made or replayed, cache hits, failed (also in ``errors``).
    searches: int = 0
    search_cache_hits: int = 0
    search_errors: int = 0
    search_error_examples: list[str] = field(default_factory=list)
    #: Calls recorded answers hold no record for (not errors: the instance is not evaluated).
    no_record: int = 0
    no_record_examples: list[str] = field(default_factory=list)
    #: Per stage: calls, tokens, cost.
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The backend's cache-key identity, recorded with the run.
    backend_identity: dict[str, Any] = field(default_factory=dict)
    #: ``Method.summary``.
    method: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["latency_s"] = round(d["latency_s"], 3)
        d["wall_s"] = round(d["wall_s"], 3)
        d["cost_usd"] = round(d["cost_usd"], 6)
        for s in d["stages"].values():
            s["cost_usd"] = round(s["cost_usd"], 6)
        return d


def estimate_cost(spec: ModelSpec, input_tokens: int, output_tokens: int) -> float:
    # run accounting: a model without a price counts 0 here (socialbench plan says "unknown")
    price_in, price_out = spec.price_per_mtok() or (0.0, 0.0)
    return (input_tokens * price_in + output_tokens * price_out) / 1e6


def stage_of(request: Request) -> str:
    return str(request.task.get("stage") or request.request_id.rsplit("/", 1)[-1])


def run_requests(
    backend: Backend,
    requests: Sequence[Request],
    cache: RequestCache,
    identity: dict[str, Any],
    model: str,
    stats: RunStats,
    progress: bool = True,
    desc: str | None = None,
) -> tuple[list[Response], list[str]]:
    """(responses, cache keys): hits from the cache, misses through the backend, stored on arrival; a miss
    another process is calling is waited for (:meth:`RequestCache.share_calls`) and counts as a hit."""
    keys = [cache_key(identity, r) for r in requests]
    responses: list[Response | None] = [cache.get(key) for key in keys]
    todo = [i for i, hit in enumerate(responses) if hit is None]
    stats.requests += len(requests)
    stats.cache_hits += len(requests) - len(todo)
    stats.cache_misses += len(todo)
    if todo:
        bar = tqdm(total=len(todo), desc=desc or model, unit="call", disable=not progress, mininterval=1.0)

        def on_result(j: int, resp: Response) -> None:
            i = todo[j]
            responses[i] = resp
            cache.put(keys[i], identity, requests[i], resp, model)
            bar.update(1)

        def call(mine: list[int]) -> None:  # positions in todo that this process claimed
            backend.complete_many([requests[todo[j]] for j in mine], lambda k, resp: on_result(mine[k], resp))

        def shared(j: int, resp: Response) -> None:  # answered by another process meanwhile
            responses[todo[j]] = resp
            stats.cache_hits += 1
            stats.cache_misses -= 1
            bar.update(1)

        try:
            cache.share_calls([keys[i] for i in todo], call, shared)
        finally:
            bar.close()
    out = [
        resp if resp is not None else Response(text=None, error="backend returned no response", finish_reason="error")
        for resp in responses
    ]  # a backend that returned without answering one request
    return out, keys


_JSON = json.JSONDecoder()


def json_form(text: str) -> str:
    """``lone_object`` (enforced), ``object_then_text``, ``object_inside`` (after a preamble) or ``no_object``."""
    stripped = text.strip()
    start = 0
    while (start := stripped.find("{", start)) >= 0:
        try:
            value, end = _JSON.raw_decode(stripped, start)
        except ValueError:
            start += 1
            continue
        if isinstance(value, dict):
            if start > 0:
                return "object_inside"
            return "lone_object" if end == len(stripped) else "object_then_text"
        start += 1
    return "no_object"


def _account(
    stats: RunStats, spec: ModelSpec, request: Request, resp: Response, instance_id: str, constraint: str = "none"
) -> None:
    stats.constraints[constraint] = stats.constraints.get(constraint, 0) + 1
    if constraint != "none" and resp.text is not None and not resp.error:
        form = json_form(resp.text)
        stats.json_answers[form] = stats.json_answers.get(form, 0) + 1
    if resp.reasoning is not None:
        stats.reasoning += 1
        stats.reasoning_only += not resp.text
    if resp.finish_reason == "no_record":
        stats.no_record += 1
        if len(stats.no_record_examples) < 5:
            stats.no_record_examples.append(instance_id)
    elif resp.error:
        stats.errors += 1
        if len(stats.error_examples) < 5:
            stats.error_examples.setdefault(instance_id, resp.error)
    stats.truncated += resp.truncated
    stats.input_tokens += resp.input_tokens
    stats.output_tokens += resp.output_tokens
    stats.latency_s += 0.0 if resp.cached else resp.latency_s
    st = stats.stages.setdefault(
        stage_of(request), {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    )
    st["calls"] += 1
    st["input_tokens"] += resp.input_tokens
    st["output_tokens"] += resp.output_tokens
    st["cost_usd"] += estimate_cost(spec, resp.input_tokens, resp.output_tokens)


def call_trace(round_no: int, ex: Exchange) -> dict[str, Any]:
    # not whether the call was cached (stats say that): a trace has the same bytes either way (DVC)
    r = ex.response
    return {
        "round": round_no,
        "stage": stage_of(ex.request),
        "request_id": ex.request.request_id,
        "key": ex.key,
        "text": r.text,
        # only when there was reasoning: a trace without any keeps its bytes
        **({"reasoning": r.reasoning} if r.reasoning is not None else {}),
        "input_tokens": r.input_tokens,
        "output_tokens": r.output_tokens,
        "finish_reason": r.finish_reason,
        "error": r.error,
        # the size of each image as sent, only where the backend sends pixels: a baseline's trace keeps its bytes
        **({"images_sent": ex.images_sent} if ex.images_sent is not None else {}),
    }


def sent_sizes(backend: Backend, request: Request) -> list[list[int]] | None:
    """``Backend.images_sent``; None where no image is sent or one cannot be read (the call says why)."""
    if not request.images():
        return None
    try:
        return backend.images_sent(request)
    except (OSError, ValueError, SocialbenchError):
        return None


def media_outside(requests: Sequence[Request], roots: MediaRoots) -> str | None:
    """Why a media file ``requests`` name may not be read (``core.paths.MediaRoots``), or None."""
    for request in requests:
        for part in request.media():
            for path in [getattr(part, "path", None), *(f.path for f in getattr(part, "frames", ()))]:
                why = roots.problem(path) if path else None
                if why:
                    return why
    return None


def _step(
    method: Method, inst: dict[str, Any], rounds: list[list[Exchange]], source: str, roots: MediaRoots | None = None
) -> list[Request] | Final:
    try:
        out = method.step(inst, rounds)
    except InstanceInputError as exc:
        raise DataError(source, exc.message, record=str(inst.get("id")), field=exc.field) from exc
    if isinstance(out, Final):
        return out
    if not out:
        return Final(error=f"method {method.name} returned neither requests nor an answer")
    ids = [r.request_id for r in out]
    if len(set(ids)) != len(ids):
        raise SocialbenchError(
            f"method {method.name}: instance {inst.get('id')}: duplicate request ids in one round: {ids}"
        )
    why = media_outside(out, roots) if roots is not None else None
    if why:
        raise DataError(source, why, record=str(inst.get("id")), field="media")
    return out


def _place(i: int, out: list[Request] | Final, finals: dict[int, Final], asks: dict[int, list[Request]]) -> None:
    if isinstance(out, Final):
        finals[i] = out
    else:
        asks[i] = out


def run_method(
    benchmark: Benchmark,
    method: Method,
    instances: list[dict[str, Any]],
    *,
    spec: ModelSpec,
    cache: RequestCache,
    seed: int,
    dev_instances: list[dict[str, Any]] | None = None,
    backend: Backend | Callable[[BackendContext], Backend] | None = None,
    progress: bool = True,
    source: str = "instances",
    trace_pointer: str | None = None,
    media_roots: MediaRoots | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], RunStats]:
    """(prediction records, traces, run accounting), records and traces sorted by id. The first round is built
    before the backend starts: a bad instance (a DataError naming ``source``, record and field), media outside
    ``media_roots`` or a part the backend cannot take stops the run before any model loads. ``backend``: None
    creates and closes one; a Backend, or a function of the context, is the caller's to close (methods share a
    loaded model). ``trace_pointer``: the trace file records point at."""
    start = time.perf_counter()
    stats = RunStats()
    n = len(instances)
    rounds: list[list[list[Exchange]]] = [[] for _ in range(n)]
    finals: dict[int, Final] = {}
    asks: dict[int, list[Request]] = {}
    searches = SearchCounts()
    try:
        with counting_searches() as searches:  # the method's searches (a retriever's), counted
            method.cache = cache
            for i, inst in enumerate(instances):
                _place(i, _step(method, inst, [], source, media_roots), finals, asks)
            dev_answers = benchmark.dev_answers(dev_instances) if dev_instances is not None else None
            context = BackendContext(seed=seed, dev_answers=dev_answers)
            owned = backend is None
            if backend is None:
                backend = create_backend(spec, context)
            elif not isinstance(backend, Backend):  # a function giving the shared backend
                backend = backend(context)
            # A shared backend counts the retries of every run it served: this run's are the difference.
            retries0, attempts0 = backend.retries, backend.attempts
            try:
                identity = backend.identity()
                stats.backend_identity = dict(identity)
                stats.temperature_sent = backend.temperature_sent()
                while asks:
                    if stats.rounds >= MAX_ROUNDS:
                        for i in asks:
                            finals[i] = Final(error=f"method {method.name} did not answer within {MAX_ROUNDS} rounds")
                        break
                    flat = [(i, r) for i, reqs in asks.items() for r in reqs]
                    requests = [r for _, r in flat]
                    check_requests(backend, requests)
                    desc = f"{spec.name}/{method.name} round {stats.rounds + 1}"
                    responses, keys = run_requests(backend, requests, cache, identity, spec.name, stats, progress, desc)
                    got: dict[int, list[Exchange]] = {}
                    for (i, req), resp, key in zip(flat, responses, keys):
                        # the cache keeps the raw text; every method gets the answer without the reasoning
                        resp = without_reasoning(resp)
                        got.setdefault(i, []).append(Exchange(req, resp, key, sent_sizes(backend, req)))
                        sent = backend.constraint(req)
                        _account(stats, spec, req, resp, str(instances[i].get("id")), sent)
                    stats.rounds += 1
                    asks = {}
                    for i, exchanges in got.items():
                        rounds[i].append(exchanges)
                        _place(i, _step(method, instances[i], rounds[i], source, media_roots), finals, asks)
                if any(c != "none" for c in stats.constraints):  # what the backend declares of what it sent
                    stats.json_enforced = backend.json_enforced
                stats.retries = backend.retries - retries0
                stats.attempts = backend.attempts - attempts0
            finally:
                if owned:
                    backend.close()
    finally:
        stats.searches, stats.search_cache_hits = searches.searches, searches.cached
        stats.search_errors, stats.search_error_examples = searches.errors, searches.error_examples
        stats.errors += searches.errors
    token = TRACE_POINTER.set(trace_pointer)
    try:
        records = [
            benchmark.prediction_record(inst, finals[i], model=spec.name, method=method.name)
            for i, inst in enumerate(instances)
        ]
    finally:
        TRACE_POINTER.reset(token)
    traces = [
        {
            "id": inst["id"],
            "model": spec.name,
            "method": method.name,
            "calls": [call_trace(k, ex) for k, exs in enumerate(rounds[i]) for ex in exs],
            "final": {"fields": finals[i].fields, "error": finals[i].error},
            **({"trace": finals[i].trace} if finals[i].trace else {}),
        }
        for i, inst in enumerate(instances)
    ]
    stats.method = dict(method.summary([finals[i] for i in range(n)]))
    stats.cost_usd = estimate_cost(spec, stats.input_tokens, stats.output_tokens)
    stats.wall_s = time.perf_counter() - start
    records.sort(key=lambda r: r["id"])
    traces.sort(key=lambda t: t["id"])
    return records, traces, stats
