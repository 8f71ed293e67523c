"""``socialbench cache stats|explain``: what the request cache holds, and why a call was (or would be) made
again. The store is the run's (``SOCIALBENCH_CACHE_URL``'s, read-only, else ``cache.path``), or ``--path``."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import typer

from socialbench.core.backend import BackendContext, ModelSpec, create_backend
from socialbench.core.benchmarks import Final, InstanceInputError, get_benchmark
from socialbench.core.cache import RequestCache
from socialbench.core.cache_pg import PostgresRequestCache, cache_store_url
from socialbench.core.config import load_params
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.paths import check_io
from socialbench.stages.common import PARAMS_HELP, Opt, benchmark_choices

_PATH_HELP = "SQLite cache file (default: the store of SOCIALBENCH_CACHE_URL if set, else cache.path in params)"

cache_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Inspect the request cache.")


#: The ``model`` prefix of a record that is no model call (a retriever's search).
_NOT_A_MODEL = "retriever:"


def _params_models(params: Path) -> set[str] | None:
    """The params file's model names (None without one)."""
    return set(load_params(params).get("models") or {}) if params.is_file() else None


def _unknown(model: str, known: set[str] | None) -> bool:
    """Whether ``model``'s entries belong to no model of params (renamed or removed)."""
    return known is not None and not model.startswith(_NOT_A_MODEL) and model not in known


def _unknown_note(models: list[str], params: Path) -> str:
    return (
        f"not in {params} (models:): {', '.join(models)}; their entries are used only by a model of that"
        " name (renamed or removed from params?)"
    )


def _open(path: Path | None, params: Path) -> RequestCache | PostgresRequestCache:
    """The run's cache store, read-only (creates, converts, locks nothing)."""
    if path is None:
        url = cache_store_url()
        if url is not None:
            return PostgresRequestCache.open_readonly(url)
    if path is None:
        path = Path(load_params(params)["cache"]["path"] if params.exists() else ".cache/socialbench/requests.sqlite")
    if not path.exists():
        raise SocialbenchError(f"{path}: no request cache here yet (it is created by the first run)")
    return RequestCache.open_readonly(path)


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "-"


@cache_app.command("stats")
def stats(
    path: Path | None = Opt(None, help=_PATH_HELP),
    params: Path = Opt(Path("params.yaml"), help="params file naming the cache"),
    as_json: bool = Opt(False, "--json", help="print JSON"),
) -> None:
    """Entries, tokens, latency and cache hits served, in total and per model."""
    known = _params_models(params)
    cache = _open(path, params)
    try:
        s = cache.stats()
    finally:
        cache.close()
    if known is not None:
        for m in s["models"]:
            m["in_params"] = m["model"].startswith(_NOT_A_MODEL) or m["model"] in known
    unknown = [m["model"] for m in s["models"] if _unknown(m["model"], known)]
    if as_json:
        typer.echo(json.dumps(s, indent=2, sort_keys=True))
        return
    typer.echo(f"{s['path']}: {s['entries']} entries, {s['size_bytes'] / 1e6:.1f} MB, {s['hits_served']} hits served")
    if s["models"]:
        typer.echo(
            f"{'model':24} {'backend':14} {'entries':>8} {'in tok':>10}"
            f" {'out tok':>9} {'latency s':>10} {'hits':>7}  last call"
        )
    for m in s["models"]:
        typer.echo(
            f"{m['model'][:24]:24} {m['backend'][:14]:14} {m['entries']:>8} {m['input_tokens']:>10} "
            f"{m['output_tokens']:>9} {m['latency_s']:>10.1f} {m['hits_served']:>7}  {_when(m['last_at'])}"
            + ("  (not in params)" if _unknown(m["model"], known) else "")
        )
    if unknown:
        typer.echo(_unknown_note(unknown, params))


_BENCHMARKS, _METHODS = benchmark_choices() or ("see `socialbench benchmarks`", "see `socialbench benchmarks`")


@cache_app.command("explain")
def explain(
    request_id: str | None = typer.Argument(None, help="request id, e.g. demo-test-0003/direct/answer"),
    model: str | None = Opt(None, help="model name (a key of models: in params)"),
    instances: Path | None = Opt(None, help="dry run: build this run's requests from these instances"),
    method: str = Opt("direct", help="method, with --instances; one of the benchmark's (" + _METHODS + ")"),
    path: Path | None = Opt(None, help=_PATH_HELP),
    params: Path = Opt(Path("params.yaml"), help=PARAMS_HELP),
    taxonomy: Path | None = Opt(None, help="MoCA taxonomy file, with --instances"),
    benchmark: str | None = Opt(
        None, help="benchmark of the instances, required with --instances; one of: " + _BENCHMARKS
    ),
    limit: int = Opt(20, min=1, help="most requests to explain (at least 1)"),
) -> None:
    """Explain misses: the part of the key (model, messages, images, task, decoding) that changed,
    against the nearest stored entry of the same model and request id."""
    check_io({"--instances": instances, "--taxonomy": taxonomy}, {})  # a folder given as a file says so
    known = _params_models(params)
    cache = _open(path, params)
    try:
        if instances is not None:
            if model is None:
                raise SocialbenchError("--instances needs --model")
            if benchmark is None:
                raise SocialbenchError("--instances needs --benchmark (the benchmark of the instances)")
            _dry_run(cache, model, instances, method, params, benchmark, taxonomy, request_id, limit)
            return
        if request_id is not None:
            entries = cache.entries_for(model, request_id)
            if not entries:
                raise SocialbenchError(
                    f"no stored call with request id {request_id!r}"
                    + (f" for {model}" if model else "")
                    + (f" ({model} is not in {params})" if model and _unknown(model, known) else "")
                )
            pairs = sorted({(e["model"], request_id) for e in entries})
        else:
            pairs = cache.recomputed(model, limit)
            if not pairs:
                typer.echo("no request was called more than once: every rerun was served from the cache")
                return
        for m, rid in pairs:
            exp = cache.explain_stored(m, rid)
            if exp is None:
                typer.echo(f"{m} {rid}: one stored call, never recomputed")
            else:
                typer.echo(exp.summary())
        unknown = sorted({m for m, _ in pairs if _unknown(m, known)})
        if unknown:
            typer.echo(_unknown_note(unknown, params))
    finally:
        cache.close()


def _dry_run(
    cache: RequestCache | PostgresRequestCache,
    model: str,
    instances: Path,
    method: str,
    params: Path,
    benchmark: str,
    taxonomy: Path | None,
    request_id: str | None,
    limit: int,
) -> None:
    """Build the run's first-round requests as infer would and explain the misses (later rounds depend on
    answers). No model is loaded or called (API backends still need their key)."""
    p = load_params(params)
    if model not in p["models"]:
        raise SocialbenchError(f"{params}: models.{model}: no such model; known: {', '.join(p['models'])}")
    bench = get_benchmark(benchmark, {"taxonomy": taxonomy})
    spec = ModelSpec.from_params(model, p["models"][model])
    backend = create_backend(spec, BackendContext(seed=p["seed"]))
    try:
        identity = backend.identity()
    finally:
        backend.close()
    meth = bench.method(method, spec, p["seed"])
    steps = []
    for inst in bench.schema.load_instances(instances):
        try:
            steps.append(meth.step(inst, []))
        except InstanceInputError as exc:  # as the runner names it: the instances file, the record, the field
            raise DataError(str(instances), exc.message, record=str(inst.get("id")), field=exc.field) from exc
    requests = [r for step in steps if not isinstance(step, Final) for r in step]
    if request_id is not None:
        requests = [r for r in requests if r.request_id == request_id]
    explanations = [cache.explain_miss(identity, r, model) for r in requests]
    misses = [e for e in explanations if not e.hit]
    typer.echo(
        f"{model}/{method}: {len(requests)} requests,"
        f" {len(requests) - len(misses)} cached, {len(misses)} would be called"
    )
    by_part = Counter(part for e in misses for part in e.parts or ["new"])
    if by_part:
        typer.echo("misses by changed part: " + ", ".join(f"{k}={v}" for k, v in sorted(by_part.items())))
    for e in misses[:limit]:
        typer.echo(e.summary())
