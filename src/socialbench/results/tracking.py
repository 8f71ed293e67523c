"""MLflow tracking: one run per (benchmark, model, method) evaluation, under one parent run per pipeline
invocation, keyed by the content they report, so an unchanged rerun logs nothing. A file lock (on a shared
server, :func:`server_lock`) serialises writers. Only FINISHED runs count, the key tag set last, so a failed
or killed run never hides an evaluation; runs a killed track left RUNNING are marked KILLED by the next."""

from __future__ import annotations

import contextlib
import logging
import os
import posixpath
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

from filelock import FileLock

from socialbench.core.benchmarks import get_benchmark_class
from socialbench.core.cache import claimant_alive
from socialbench.core.errors import ConfigError, SocialbenchError
from socialbench.core.hashing import sha256_file, sha256_json
from socialbench.core.io import is_number, parse_json_object
from socialbench.core.paths import blocking_file, special_file, user_cache
from socialbench.core.processes import process_started
from socialbench.results.viewer_packs import PACK_BYTES, write_packs

log = logging.getLogger(__name__)

EVAL_KEY_TAG = "socialbench.eval_key"
#: The layout of what a run logs (names, tags, artifact folders). Part of the eval key, so a store logged
#: in an older layout gets the evaluations again. Kept at 2 through issue 41: older runs still open as they
#: did, and the eval keys (results/mlflow/<benchmark>.json, a DVC output) stay the same bytes.
LOG_LAYOUT = 2
#: The experiment tag the MLflow UI reads to open an experiment on its runs table (not the GenAI overview).
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
#: The tag holding an undefined metric's reason: ``undefined.<metric>``.
UNDEFINED_TAG = "undefined."
#: The parent run's tag: the content hash of its own artifacts (tables, figures).
ARTIFACTS_KEY_TAG = "socialbench.artifacts_key"
#: Every run's tags: the host that started it, its process (``pid:start``), and the pipeline run
#: (``SOCIALBENCH_PIPELINE_RUN``, else one id per track) it belongs to.
HOST_TAG = "socialbench.host"
PROCESS_TAG = "socialbench.process"
PIPELINE_TAG = "socialbench.pipeline_run"
#: The parent run's folder of the viewer's media (``media/index.json`` and ``media/<sha256>.pack``:
#: results.viewer_packs), which every run's page links.
MEDIA_FOLDER = "media"
#: A server lock held by a process on another host is taken over when older than this.
LOCK_TTL_S = 3600.0


def process_id(pid: int | None = None) -> str:
    """This process as ``pid:start`` (start: clock ticks since boot), so a reused pid is not taken for it."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}:{process_started(pid) or ''}"


def process_gone(process: str, host: str, now_s: float, started_s: float) -> bool:
    """Whether the process of a run (its host and ``pid:start`` tags) can no longer be writing it. Only
    this host's processes can be asked; another host's never count as gone here."""
    if host != socket.gethostname():
        return False
    pid, _, start = process.partition(":")
    if not pid.isdigit():
        return True  # no process recorded (a run made before the tag): nobody on this host owns it
    if int(pid) == os.getpid():
        return False  # this process: its own runs are live
    return not claimant_alive(host, int(pid), start or None, started_s, now_s)


def run_tags(pipeline_run: str) -> dict[str, str]:
    return {HOST_TAG: socket.gethostname(), PROCESS_TAG: process_id(), PIPELINE_TAG: pipeline_run}


def eval_key(evaluation: dict[str, Any]) -> str:
    """What makes two evaluations the same: all but drifting provenance (commit, versions) and accounting."""
    return sha256_json(
        {**{k: evaluation[k] for k in ("benchmark", "model", "method", "params", "content")}, "log_layout": LOG_LAYOUT}
    )


def parse_stats(data: bytes, source: str) -> dict[str, Any]:
    """The run accounting written by ``infer`` (a JSON object) from a stats file's bytes."""
    return parse_json_object(data, source, "of run accounting")


def _flat_metrics(scores: dict[str, dict[str, Any]], what: str = "scores") -> dict[str, float | None]:
    """{"group.metric": value}; a null metric stays None (undefined), anything else but a number is an error."""
    out: dict[str, float | None] = {}
    if not isinstance(scores, dict):
        raise SocialbenchError(f"{what}: must be {{group: metrics}}, got {scores!r}")
    for group, metrics in scores.items():
        if not isinstance(metrics, dict):
            raise SocialbenchError(f"{what}, group {group!r}: must be an object of metrics, got {metrics!r}")
        for k, v in metrics.items():
            if v is not None and not is_number(v):
                raise SocialbenchError(f"{what}, group {group!r}, field {k!r}: must be a number, got {v!r}")
            out[f"{group}.{k}"] = None if v is None else float(v)
    return out


def undefined_reason(metric: str, reasons: Mapping[str, str] | None = None) -> str:
    """Why ``<group>.<metric>`` has no value: ``Benchmark.undefined_reasons``'s reason, else a generic one."""
    return (reasons or {}).get(metric.rsplit(".", 1)[-1], "undefined in the score file (null)")


def benchmark_reasons(benchmark: str) -> dict[str, str]:
    """The benchmark's reasons for undefined metrics; none for a benchmark the registry does not know."""
    try:
        return dict(get_benchmark_class(benchmark).undefined_reasons)
    except SocialbenchError:
        return {}


def artifact_entries(ev: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(file or folder, artifact folder, name) of each artifact of an evaluation, under
    ``<benchmark>/<model>/<method>/``; an entry (path, name) may name a subfolder."""
    base = f"{ev['benchmark']}/{ev['model']}/{ev['method']}"
    out = []
    for a in ev["artifacts"]:
        path, name = a if isinstance(a, (tuple, list)) else (a, Path(a).name)
        sub, _, leaf = str(name).rpartition("/")
        out.append((str(path), f"{base}/{sub}" if sub else base, leaf))
    return out


def align_metrics(prepared: list[dict[str, Any]]) -> None:
    """Give every run of a benchmark the same metric names: one another run logs and this one lacks (or
    has as null) is logged as NaN, its reason in the tag ``undefined.<metric>``."""
    names: dict[str, set[str]] = {}
    for pr in prepared:
        names.setdefault(pr["tags"]["benchmark"], set()).update(pr["metrics"], pr["stats"])
    for pr in prepared:
        for m in sorted(names[pr["tags"]["benchmark"]]):
            if m in pr["stats"]:
                continue
            if pr["metrics"].get(m) is None:
                pr["tags"][UNDEFINED_TAG + m] = (
                    undefined_reason(m, benchmark_reasons(pr["tags"]["benchmark"]))
                    if m in pr["metrics"]
                    else "not reported by this run (another run of the benchmark reports it)"
                )
                pr["metrics"][m] = None


def _finite(metrics: dict[str, float | None]) -> dict[str, float]:
    return {k: (float("nan") if v is None else v) for k, v in metrics.items()}


def parent_run_name(
    evaluations: list[dict[str, Any]], n_new: int, n_unchanged: int, commit: str, when: datetime
) -> str:
    """A parent run's name that tells invocations apart in the runs table: UTC time, short commit,
    benchmark(s) and what changed, e.g. ``2026-11-30 07:31Z 1a2b3c4 bench: 3 new, 5 unchanged``."""
    benchmarks = ",".join(sorted({e["benchmark"] for e in evaluations})) or "pipeline"
    short = (commit or "unknown")[:7] + ("-dirty" if commit.endswith("-dirty") else "")
    changed = f"{n_new} new, {n_unchanged} unchanged" if n_new else f"tables changed, {n_unchanged} unchanged"
    return f"{when:%Y-%m-%d %H:%M}Z {short} {benchmarks}: {changed}"


def _flat_stats(stats: dict[str, Any]) -> dict[str, float]:
    """A run's accounting as metrics: its numbers, per-stage counts, the method's summary (``Method.summary``),
    constraints and JSON answers by form, and the JSON-mode and temperature flags."""
    out = {k: float(v) for k, v in stats.items() if is_number(v)}
    for st, d in sorted((stats.get("stages") or {}).items()):
        if isinstance(d, dict):
            out.update({f"stage.{st}.{k}": float(v) for k, v in d.items() if is_number(v)})
    for key, prefix in (("method", "method"), ("constraints", "constraint"), ("json_answers", "json_answers")):
        out.update({f"{prefix}.{k}": float(v) for k, v in sorted((stats.get(key) or {}).items()) if is_number(v)})
    for key in ("json_enforced", "temperature_sent"):
        if isinstance(stats.get(key), bool):
            out[key] = float(stats[key])
    return out


def _prepare(ev: dict[str, Any]) -> dict[str, Any]:
    """Everything a run logs, computed before any run starts, so bad content fails before MLflow is touched."""
    name = f"{ev['benchmark']}/{ev['model']}/{ev['method']}"
    category = ev.get("category") or ""
    params = {
        **ev["params"],
        **ev["content"],
        **ev["provenance"],
        "benchmark": ev["benchmark"],
        **({"category": category} if category else {}),
    }
    metrics = _flat_metrics(ev["scores"], f"{name} scores")
    tags = {
        **{k: ev[k] for k in ("benchmark", "model", "method")},
        "category": category,
        "socialbench.kind": "evaluation",
    }
    reasons = benchmark_reasons(ev["benchmark"])
    tags.update({UNDEFINED_TAG + m: undefined_reason(m, reasons) for m, v in metrics.items() if v is None})
    return {
        "name": name,
        "tags": tags,
        "params": {k: str(v)[:6000] for k, v in sorted(params.items())},
        "metrics": metrics,
        "stats": _flat_stats(ev["stats"]),
        "artifacts": artifact_entries(ev),
        "viewer": ev.get("viewer"),
    }


def _log_named_artifacts(client: Any, run_id: str, entries: list[tuple[str, str, str]]) -> None:
    """Log each file under its folder and name (a folder in one call); a file whose name differs is
    linked (or copied) to that name first, as MLflow logs a file under its own name."""
    with tempfile.TemporaryDirectory(prefix="socialbench-artifacts-") as tmp:
        for k, (path, folder, name) in enumerate(entries):
            src = Path(path)
            if src.is_dir():
                client.log_artifacts(run_id, str(src), artifact_path=f"{folder}/{name}")
                continue
            if src.name != name:
                (Path(tmp) / str(k)).mkdir()
                dst = Path(tmp) / str(k) / name
                try:
                    os.link(src, dst)
                except OSError:
                    shutil.copyfile(src, dst)
                src = dst
            client.log_artifact(run_id, str(src), artifact_path=folder)


def _log_media(
    client: Any, run_id: str, media: Mapping[str, str | Path], pack_bytes: int = PACK_BYTES
) -> dict[str, Any]:
    """The viewer's media (``<sha256>.<ext>`` to its file) as packs under the run's ``media/``; returns the index."""
    with tempfile.TemporaryDirectory(prefix="socialbench-media-") as tmp:
        index = write_packs(media, Path(tmp) / MEDIA_FOLDER, pack_bytes)
        client.log_artifacts(run_id, str(Path(tmp) / MEDIA_FOLDER), artifact_path=MEDIA_FOLDER)
    return index


def artifact_link(from_folder_uri: str, to_folder_uri: str) -> str:
    """A folder of one run's artifacts as a link relative to a folder of another's (pure): both are
    under one artifact root, so the link holds whatever the root's place or scheme."""
    a, b = urlparse(from_folder_uri), urlparse(to_folder_uri)
    if (a.scheme, a.netloc) != (b.scheme, b.netloc):
        raise SocialbenchError(f"artifact folders {from_folder_uri} and {to_folder_uri} are in different stores")
    return "/".join(quote(p) for p in posixpath.relpath(b.path, a.path).split("/"))


def _log_page(client: Any, run_id: str, folder: str, viewer: Mapping[str, Any], parent_id: str) -> None:
    """The run's viewer page under ``folder``, relinked to the parent run's ``media/`` (``relink_media``)."""
    page = Path(viewer["page"])
    here = client.get_run(run_id).info.artifact_uri.rstrip("/") + f"/{folder}"
    there = client.get_run(parent_id).info.artifact_uri.rstrip("/") + f"/{MEDIA_FOLDER}"
    text = viewer["relink"](artifact_link(here, there))
    with tempfile.TemporaryDirectory(prefix="socialbench-page-") as tmp:
        out = Path(tmp) / page.name
        out.write_text(text, "utf-8")
        client.log_artifact(run_id, str(out), artifact_path=folder)


def runs_page_url(tracking_uri: str, experiment: str, base_url: str) -> str:
    """The UI address of the experiment's runs table (``<base>/#/experiments/<id>/runs``), tagging the
    experiment so the UI opens it on its runs; the base address when the store or experiment is absent."""
    db = sqlite_store_path(tracking_uri)
    if db is not None and not db.is_file():
        return base_url
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    with FileLock(str(db if db is not None else ".mlflow") + ".lock", timeout=600):
        client, exp = _open_store(tracking_uri, db, experiment)
        if exp is None:
            return base_url
        if exp.tags.get(EXPERIMENT_KIND_TAG) != EXPERIMENT_KIND:
            client.set_experiment_tag(exp.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    # Sorted by run name: a sorted table lists the evaluation runs flat (the UI nests children under
    # their parent only in its default date order), grouped as benchmark/model/method.
    return (
        f"{base_url.rstrip('/')}/#/experiments/{exp.experiment_id}/runs?orderByKey=attributes.run_name&orderByAsc=true"
    )


def sqlite_store_path(tracking_uri: str) -> Path | None:
    """The database file of a ``sqlite:///<path>`` tracking URI; None for other stores and in-memory."""
    if not tracking_uri.startswith("sqlite:///"):
        return None
    path = tracking_uri.removeprefix("sqlite:///").split("?", 1)[0]
    return None if path in ("", ":memory:") else Path(path)


def check_store_creatable(tracking_uri: str) -> None:
    """A sqlite store whose path is no file or runs through a file (``sqlite:////etc/hostname/mlflow.db``)
    is a ConfigError naming the store and the file, before anything is logged."""
    db = sqlite_store_path(tracking_uri)
    problem = sqlite_store_problem(db) if db is not None else None
    if problem:
        raise ConfigError(f"{db}: {problem}")
    blocker = blocking_file(db) if db is not None else None
    if blocker is not None:
        raise ConfigError(
            f"{db}: the MLflow tracking store cannot be created there: {blocker} is a file, not a folder"
            " (mlflow.tracking_uri, or MLFLOW_TRACKING_URI)"
        )


def sqlite_store_problem(db: Path) -> str | None:
    """Why a ``sqlite:///`` store's path cannot be its database file (a folder or special file), or None."""
    if db.is_dir():
        return (
            "names a folder, not an SQLite file (mlflow.tracking_uri, or MLFLOW_TRACKING_URI): name the database"
            f" file, e.g. sqlite:///{(db / 'mlflow.db').as_posix()}"
        )
    kind = special_file(db)
    if kind is not None:
        return f"is {kind}, not an SQLite file (mlflow.tracking_uri, or MLFLOW_TRACKING_URI)"
    return None


def _dispose_engine(db_uri: str, forget: bool = False) -> None:
    """Close the pooled connections MLflow keeps to a sqlite file (one engine per URI, for the process's
    life), so it is closed before a rename and a later store reads the file now at the path."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    engines = getattr(SqlAlchemyStore, "_engine_map", {})
    engine = engines.pop(db_uri, None) if forget else engines.get(db_uri)
    if engine is not None:
        engine.dispose()


def store_template() -> Path:
    """MLflow's new sqlite store as its own schema migrations build it, less the Default experiment (MLflow makes that
    on opening a store without it, with the store's own artifact location): built once per MLflow, alembic,
    SQLAlchemy and SQLite version in ``$XDG_CACHE_HOME/socialbench/mlflow/`` (else ``~/.cache/...``; set-up builds
    it), so a new store is a copy instead of some sixty migrations (seconds) at the end of a pipeline."""
    import sqlite3
    from importlib.metadata import version

    versions = {p: version(p) for p in ("mlflow", "alembic", "sqlalchemy")} | {"sqlite": sqlite3.sqlite_version}
    path = user_cache() / "mlflow" / f"empty-store-{sha256_json(versions)[:16]}.db"
    if not path.is_file():
        from mlflow.tracking._tracking_service.utils import _get_sqlalchemy_store

        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.new")  # renamed into place whole: builders may race
        try:
            _get_sqlalchemy_store(f"sqlite:///{tmp}", None)  # creates the schema and the Default experiment
        finally:
            _dispose_engine(f"sqlite:///{tmp}", forget=True)
        with contextlib.closing(sqlite3.connect(tmp)) as con, con:
            con.execute("DELETE FROM experiments")
        os.replace(tmp, path)
    return path


def _create_sqlite_store(tracking_uri: str, db: Path) -> None:
    """A new MLflow sqlite store: :func:`store_template` copied to ``<db>-new`` and renamed into place, so a kill
    leaves no store or a complete one; a killed attempt's ``<db>-new`` (and journals) goes first."""
    tmp = db.with_name(db.name + "-new")
    for leftover in (tmp, *(tmp.with_name(tmp.name + sfx) for sfx in ("-journal", "-wal", "-shm"))):
        leftover.unlink(missing_ok=True)
    shutil.copyfile(store_template(), tmp)
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, db)
    _dispose_engine(tracking_uri)  # a connection cached before the rename would see the old file


def open_tracking_store(tracking_uri: str, experiment: str) -> tuple[Any, Any]:
    """A client on the store (a missing or empty sqlite store is built first) and the experiment (None if absent); call
    it under :func:`store_lock`."""
    db = sqlite_store_path(tracking_uri)
    if db is not None and (not db.exists() or db.stat().st_size == 0):
        _create_sqlite_store(tracking_uri, db)
    return _open_store(tracking_uri, db, experiment)


def _open_store(tracking_uri: str, db: Path | None, experiment: str) -> tuple[Any, Any]:
    """A client on the store and the experiment (None if absent); a sqlite store that cannot be opened is an error
    naming the file and the way out."""
    from mlflow.tracking import MlflowClient

    try:
        client = MlflowClient(tracking_uri)
        return client, client.get_experiment_by_name(experiment)
    except Exception as e:
        if db is None:
            raise
        _dispose_engine(tracking_uri)  # let go of the file, so it can be moved aside
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise SocialbenchError(
            f"{db}: cannot open the MLflow tracking store ({reason}); it is half-built (by a run killed while "
            f"creating it) or not an MLflow database. It holds only tracking records, which rerunning track "
            f"rebuilds from results/: move it aside (mv {db} {db}.broken) and rerun"
        ) from e


def _mark_abandoned_runs_killed(client: Any, exp_id: str, local: bool) -> list[str]:
    """Mark KILLED (and return) the runs a killed track left RUNNING: all of them in a local store (the file lock rules
    out a live writer), in a shared store this host's whose process is gone."""
    marked: list[str] = []
    host = socket.gethostname()
    query = "attributes.status = 'RUNNING'" + ("" if local else f" and tags.`{HOST_TAG}` = '{host}'")
    token = None
    while True:
        page = client.search_runs([exp_id], filter_string=query, max_results=1000, page_token=token)
        now = time.time()
        for run in page:
            tags = run.data.tags
            if local or process_gone(tags.get(PROCESS_TAG, ""), tags.get(HOST_TAG, ""), now, run.info.start_time / 1e3):
                client.set_terminated(run.info.run_id, status="KILLED")
                marked.append(run.info.run_id)
        token = getattr(page, "token", None)
        if not token:
            return marked


@contextmanager
def server_lock(client: Any, experiment: str, timeout_s: float = 600.0, poll_s: float = 0.5) -> Iterator[None]:
    """Serialise an experiment's writers on a shared server, across hosts: the lock is a registered model named after
    the experiment. A stale holder (gone on this host, older than :data:`LOCK_TTL_S` on another) is taken over; MLflow
    retries a 5xx, so a lock naming this process is its own."""
    from mlflow.exceptions import MlflowException

    name = f"socialbench-lock.{experiment}"
    host, me = socket.gethostname(), process_id()
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            client.create_registered_model(name, tags={HOST_TAG: host, PROCESS_TAG: me, "since": str(time.time())})
            break
        except MlflowException as exc:
            if "RESOURCE_DOES_NOT_EXIST" in str(exc.error_code):
                continue  # released between the conflict and the store's lookup of the holder
            if "ALREADY_EXISTS" not in str(exc.error_code):
                raise
        try:
            held = client.get_registered_model(name)
        except MlflowException:
            continue  # released meanwhile
        tags = held.tags or {}
        if tags.get(HOST_TAG) == host and tags.get(PROCESS_TAG) == me:
            break  # this process's own create, answered with an error and retried: the lock is held
        since = float(tags.get("since") or 0)
        if tags.get(HOST_TAG) != host:
            stale = time.time() - since > LOCK_TTL_S
        else:
            stale = process_gone(tags.get(PROCESS_TAG, ""), host, time.time(), since)
        if stale:
            with contextlib.suppress(MlflowException):
                client.delete_registered_model(name)
            continue
        if time.monotonic() > deadline:
            raise SocialbenchError(
                f"MLflow experiment {experiment!r}: another track ({tags.get(HOST_TAG)} process"
                f" {tags.get(PROCESS_TAG)}) has held the tracking server's lock for {timeout_s:.0f} s"
            )
        time.sleep(poll_s)
    try:
        yield
    finally:
        try:
            client.delete_registered_model(name)
        except MlflowException as exc:
            if "RESOURCE_DOES_NOT_EXIST" not in str(exc.error_code):
                raise
            log.warning("MLflow experiment %r: the tracking server's lock was already gone at release", experiment)


@contextmanager
def _run(
    client: Any, exp_id: str, run_name: str, tags: Mapping[str, str], parent_id: str | None = None
) -> Iterator[str]:
    """A run made as ``mlflow.start_run`` makes one (context tags; a parent) without setting a global tracking URI;
    ended FINISHED, or FAILED when the block raises. Yields the run id."""
    from mlflow.tracking.context.registry import resolve_tags
    from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID, MLFLOW_RUN_NAME

    parent = {MLFLOW_PARENT_RUN_ID: parent_id} if parent_id is not None else {}
    given = {**tags, **parent, MLFLOW_RUN_NAME: run_name}
    run_id = client.create_run(exp_id, tags=resolve_tags(given), run_name=run_name).info.run_id
    status = "FAILED"
    try:
        yield run_id
        status = "FINISHED"
    finally:
        client.set_terminated(run_id, status=status)


def _log_values(client: Any, run_id: str, params: Mapping[str, Any], metrics: list[Mapping[str, float]]) -> None:
    """A run's params (as strings) and metrics (step 0, stamped now) in one call: each call costs queries."""
    from mlflow.entities import Metric, Param

    now_ms = int(time.time() * 1000)
    client.log_batch(
        run_id,
        params=[Param(k, str(v)) for k, v in params.items()],
        metrics=[Metric(k, v, now_ms, 0) for group in metrics for k, v in group.items()],
    )


def _import_mlflow(sqlite: bool) -> None:
    """Import MLflow before taking the store's lock: the imports take seconds two track jobs would spend in turn."""
    import mlflow.tracking  # noqa: F401

    if sqlite:
        import mlflow.store.tracking.sqlalchemy_store  # noqa: F401


def is_shared_store(tracking_uri: str) -> bool:
    """Whether a store may have writers on other hosts (a server, ``postgresql://``...): not a sqlite file or folder."""
    return "://" in tracking_uri and not tracking_uri.startswith(("sqlite:", "file:"))


@contextmanager
def store_lock(tracking_uri: str, db: Path | None, experiment: str) -> Iterator[None]:
    """The writers' lock: a file lock for a sqlite or folder store, the server's own lock for a shared store."""
    if is_shared_store(tracking_uri):
        from mlflow.tracking import MlflowClient

        with server_lock(MlflowClient(tracking_uri), experiment):
            yield
        return
    with FileLock(str(db if db is not None else ".mlflow") + ".lock", timeout=600):
        yield


def pipeline_artifact_files(tables_dir: Path) -> list[tuple[Path, str]]:
    """Every table and figure of a tables folder with its artifact folder in the parent run."""
    return [
        (f, str(Path("tables", f.parent.relative_to(tables_dir))))
        for f in sorted(tables_dir.rglob("*"))
        if f.is_file() and not f.name.startswith(".")
    ]


def pipeline_artifacts_key(files: list[tuple[str, str]]) -> str:
    """The parent run's ARTIFACTS_KEY_TAG: the content hash of its (path, artifact folder) files, so
    the run that logged a set of tables can be found again (the results book links it)."""
    return sha256_json(sorted([folder, Path(p).name, sha256_file(p)] for p, folder in files))


def _finished_run(client: Any, exp_id: str, tag: str, value: str) -> list[Any]:
    """The FINISHED run tagged ``tag`` = ``value``, if any: a failed, killed or abandoned one may lack metrics
    or artifacts, so what it logged is logged again (it stays as a record of the attempt)."""
    query = f"tags.`{tag}` = '{value}' and attributes.status = 'FINISHED'"
    return client.search_runs([exp_id], filter_string=query, max_results=1)


def log_evaluations(
    evaluations: list[dict[str, Any]],
    tracking_uri: str,
    experiment: str,
    artifact_root: str | Path,
    artifacts: list[tuple[str | Path, str]] | None = None,
    media_pack_bytes: int = PACK_BYTES,
) -> dict[str, Any]:
    """Log each evaluation as a child run unless a run with its key exists. An evaluation: benchmark, model, method,
    params, content (hashes), provenance, scores ({group: metrics}), stats, artifacts (paths, or (path, name)) and
    optionally viewer (``page``, ``folder``, ``relink``; ``media``, logged once, packed, in the parent run's
    ``media/``).

    ``artifacts``: the pipeline's tables and figures as (path, artifact folder), logged in a parent run made when an
    evaluation is new or no finished parent run has their content hash: an unchanged rerun logs nothing."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

    # Every evaluation is checked (metrics numbers, artifacts present) before MLflow is touched.
    prepared = [_prepare(ev) for ev in evaluations]
    align_metrics(prepared)
    for pr in prepared:
        viewer = pr["viewer"] or {}
        missing = [a for a, _, _ in pr["artifacts"] if not Path(a).exists()]
        pages = [viewer.get("page"), *(viewer.get("media") or {}).values()]
        missing += [p for p in pages if p and not Path(p).is_file()]
        if missing:
            raise SocialbenchError(f"{pr['name']}: artifact {missing[0]} not found")
    parent_files = [(str(p), folder) for p, folder in (artifacts or [])]
    missing = [p for p, _ in parent_files if not Path(p).is_file()]
    if missing:
        raise SocialbenchError(f"pipeline artifact {missing[0]} not found")
    artifacts_key = pipeline_artifacts_key(parent_files)

    check_store_creatable(tracking_uri)
    db = sqlite_store_path(tracking_uri)
    server = tracking_uri.startswith(("http://", "https://"))
    pipeline_run = os.environ.get("SOCIALBENCH_PIPELINE_RUN") or uuid.uuid4().hex
    _import_mlflow(db is not None)
    with store_lock(tracking_uri, db, experiment):
        client, exp = open_tracking_store(tracking_uri, experiment)
        if exp is None:
            # A server keeps artifacts in its own store (--artifacts-destination), shared by every
            # host; a local store keeps them in a folder beside it.
            where = {} if server else {"artifact_location": Path(artifact_root).resolve().as_uri()}
            exp_id = client.create_experiment(experiment, tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND}, **where)
        else:
            exp_id = exp.experiment_id
            if exp.tags.get(EXPERIMENT_KIND_TAG) != EXPERIMENT_KIND:  # a store made before the tag, or by hand
                client.set_experiment_tag(exp_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
        _mark_abandoned_runs_killed(client, exp_id, local=not is_shared_store(tracking_uri))
        new, existing = [], []
        for ev, pr in zip(evaluations, prepared):
            key = eval_key(ev)
            found = _finished_run(client, exp_id, EVAL_KEY_TAG, key)
            (existing if found else new).append((key, ev, pr, found[0].info.run_id if found else None))
        summary = {"new": [], "existing": [r for *_, r in existing], "parent": None}
        logged = bool(parent_files) and _finished_run(client, exp_id, ARTIFACTS_KEY_TAG, artifacts_key)
        if not new and (not parent_files or logged):
            return summary
        commit = (new or existing or [(None, {"provenance": {}})])[0][1]["provenance"].get("git_commit", "")
        run_name = parent_run_name(evaluations, len(new), len(existing), commit, datetime.now(UTC))
        parent_tags = {"socialbench.kind": "pipeline", "git_commit": commit, **run_tags(pipeline_run)}
        with _run(client, exp_id, run_name, parent_tags) as parent:
            summary["parent"] = parent
            _log_values(client, parent, {"n_new_evaluations": len(new), "n_unchanged_evaluations": len(existing)}, [])
            for path, folder in parent_files:
                client.log_artifact(parent, path, artifact_path=folder or None)
            # The new runs' pages' media, once: content-addressed names, however many pages show them.
            media = {n: p for *_, prep, _ in new for n, p in ((prep["viewer"] or {}).get("media") or {}).items()}
            if media:
                _log_media(client, parent, dict(sorted(media.items())), media_pack_bytes)
            for key, _, prep, _ in new:
                with _run(client, exp_id, prep["name"], {**prep["tags"], **run_tags(pipeline_run)}, parent) as child:
                    _log_values(client, child, prep["params"], [_finite(prep["metrics"]), _finite(prep["stats"])])
                    _log_named_artifacts(client, child, prep["artifacts"])
                    if prep["viewer"]:
                        _log_page(client, child, f"{prep['name']}/{prep['viewer']['folder']}", prep["viewer"], parent)
                    # Last: until here a crash leaves a run without the key, which blocks nothing.
                    client.set_tag(child, EVAL_KEY_TAG, key)
                    summary["new"].append(child)
            if parent_files:
                client.set_tag(parent, ARTIFACTS_KEY_TAG, artifacts_key)  # last, as the children's keys
        return summary
