"""The trace viewer: a static page per run, read with no server (docs/architecture.md, "Trace viewer"):
``<model>/<run>.html``, rows in ``<run>.shards/NNN.js``, thumbnails in ``media/``. Here: reading, checking and writing a
run; see ``viewer_media``, ``viewer_html``, ``viewer_page``."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from socialbench.core.benchmarks import Method
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.hashing import sha256_file
from socialbench.core.io import first_bad_line, read_jsonl_lines, write_text_atomic
from socialbench.core.run_name import RunName
from socialbench.core.traces import TraceSection
from socialbench.results.viewer_html import esc, row_correct, row_html
from socialbench.results.viewer_media import FRAME_PX, MAX_FRAMES, THUMB_PX, MediaStore, embed_media
from socialbench.results.viewer_page import (
    PAGE_ROWS,
    SHARD_ROWS,
    filters_html,
    index_entry,
    render_page,
    shard_bounds,
    shard_js,
    shard_name,
)

#: The keys a row may have (``id`` is required). ``texts``: ``[[label, text]]``; ``media``: ``[{kind:
#: image|frame|video, path, caption?, sha256?}]``; ``fields``: ``[{name, gold, pred, correct: bool |
#: None, note?, options?}]``; ``correct``: the whole instance (None: the benchmark cannot say);
#: ``badges``: ``[[text, ok|bad|info]]``; ``meta``: ``[[label, value]]``; ``raw``: the model's answer text;
#: ``orders``: ``[{order, fields: [{name, pred, correct}], correct, error}]``, the instance's answers under
#: each option order (set by :func:`with_orders` on a run's page from its order runs, params ``robustness``).
ROW_KEYS = tuple("id group group_label texts media fields correct error badges meta raw orders".split())
MEDIA_KINDS = ("image", "frame", "video")
#: Prediction keys that are bookkeeping, not answers (the default rows compare the others with the instance).
BOOKKEEPING = ("id", "model", "method", "error", "raw")


# ---- reading a run (I/O edge) -----------------------------------------------------------------
@dataclass
class Run:
    """A run's inputs, read and cross-checked: instances in file order, predictions and traces by id."""

    benchmark: str
    model: str
    method: str
    instances: list[dict[str, Any]]
    predictions: dict[str, dict[str, Any]]
    traces: dict[str, dict[str, Any]]
    #: ``[(what, path as given, sha256)]`` of the input files, shown in the page.
    inputs: list[tuple[str, str, str]] = field(default_factory=list)


def index_by_id(
    records: Sequence[dict[str, Any]], lines: Sequence[int], source: str, instance_ids: set[str], instances_source: str
) -> dict[str, dict[str, Any]]:
    """Records by ``id``: each needs a non-empty string id that names one instance, once (a second copy
    would hide the first; an unknown id means the file belongs to other data)."""
    out: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for rec, line in zip(records, lines):
        where = f"line {line}"
        iid = rec.get("id")
        if not isinstance(iid, str) or not iid:
            raise DataError(
                source, f"must be a non-empty string (the id of an instance), got {iid!r}", record=where, field="id"
            )
        if iid in first:
            raise DataError(source, f"duplicate id {iid!r} (first at line {first[iid]})", record=where, field="id")
        if iid not in instance_ids:
            raise DataError(source, f"id {iid!r} matches no instance in {instances_source}", record=where, field="id")
        first[iid] = line
        out[iid] = rec
    return out


def run_identity(
    records: Sequence[dict[str, Any]], lines: Sequence[int], source: str, expected: tuple[str, str] | None = None
) -> tuple[str, str] | None:
    """The one (model, method) that every record names (None when no record names one); a record of
    another model or method than the others (or than ``expected``) is a DataError: one page is one run."""
    seen = expected
    for rec, line in zip(records, lines):
        for k in ("model", "method"):
            if k in rec and not isinstance(rec[k], str):
                raise DataError(source, f"must be a string, got {rec[k]!r}", record=f"line {line}", field=k)
        if "model" not in rec and "method" not in rec:
            continue
        this = (rec.get("model"), rec.get("method"))
        seen = seen or this  # type: ignore[assignment]
        for k, a, b in zip(("model", "method"), this, seen):
            if a != b:
                raise DataError(
                    source,
                    f"{a!r} differs from {b!r} of the rest of the run (one page shows one run)",
                    record=f"line {line}",
                    field=k,
                )
    return seen


def check_trace_records(records: Sequence[dict[str, Any]], lines: Sequence[int], source: str) -> None:
    """The shape the viewer draws: ``calls`` a list of objects, ``trace`` an object (both optional)."""
    for rec, line in zip(records, lines):
        where = f"line {line}"
        calls = rec.get("calls", [])
        if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
            raise DataError(source, "must be a list of call objects", record=where, field="calls")
        if "trace" in rec and rec["trace"] is not None and not isinstance(rec["trace"], dict):
            raise DataError(
                source,
                f"must be an object (what the method keeps), got {type(rec['trace']).__name__}",
                record=where,
                field="trace",
            )


def read_predictions(
    predictions: Path, ids: set[str], instances_source: str, expected: tuple[str, str] | None = None
) -> tuple[dict[str, dict[str, Any]], tuple[str, str] | None]:
    """A run's prediction records by id, checked against the instance ids, and the (model, method) named."""
    parsed = read_jsonl_lines(predictions)
    first_bad_line(predictions, parsed)
    preds, plines = [jl.record for jl in parsed], [jl.line for jl in parsed]
    by_id = index_by_id(preds, plines, str(predictions), ids, instances_source)
    return by_id, run_identity(preds, plines, str(predictions), expected)


def read_run(bench, instances: Path, predictions: Path, traces: Path | None) -> Run:
    """Read and cross-check a run's files: the instances through the benchmark (validated), the
    predictions and traces as the data contracts give them (docs/architecture.md)."""
    insts = bench.schema.load_instances(instances)
    if not insts:
        raise DataError(str(instances), "no instances (the file is empty): nothing to show")
    ids = {i["id"] for i in insts}
    by_id, identity = read_predictions(predictions, ids, str(instances))
    trace_by_id: dict[str, dict[str, Any]] = {}
    inputs = [(what, str(p), sha256_file(p)) for what, p in (("instances", instances), ("predictions", predictions))]
    if traces is not None:
        tparsed = read_jsonl_lines(traces)
        first_bad_line(traces, tparsed)
        trecs, tlines = [jl.record for jl in tparsed], [jl.line for jl in tparsed]
        trace_by_id = index_by_id(trecs, tlines, str(traces), ids, str(instances))
        check_trace_records(trecs, tlines, str(traces))
        identity = run_identity(trecs, tlines, str(traces), identity)
        inputs.append(("traces", str(traces), sha256_file(traces)))
    # Records that name no model: the results layout names it (results/predictions/<b>/<model>/<method>.jsonl).
    model, method = identity or (Path(predictions).parent.name, Path(predictions).stem)
    return Run(bench.name, model, method, insts, by_id, trace_by_id, inputs)


# ---- rows -------------------------------------------------------------------------------------
def default_rows(
    instances: list[dict[str, Any]], predictions: dict[str, dict[str, Any]], traces: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Rows of a benchmark without its own: every prediction key the instance also has (besides
    bookkeeping) is a field, correct when equal; an instance without a prediction is wrong, with an error."""
    rows = []
    for inst in instances:
        pred = predictions.get(inst["id"])
        names = [k for k in (pred or {}) if k in inst and k not in BOOKKEEPING]
        fields = [{"name": k, "gold": inst[k], "pred": pred[k], "correct": pred[k] == inst[k]} for k in names]  # type: ignore[index]
        error = "no prediction for this instance" if pred is None else pred.get("error")
        correct = False if pred is None else (all(f["correct"] for f in fields) if fields else None)
        raw = None if pred is None else pred.get("raw")
        rows.append({"id": inst["id"], "fields": fields, "correct": correct, "error": error, "raw": raw})
    return rows


def check_rows(rows: Any, instances: list[dict[str, Any]], benchmark: str) -> list[dict[str, Any]]:
    """A benchmark's rows, checked: one per instance (none left out, none invented), known keys only."""
    where = f"benchmark {benchmark}: viewer_rows"
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise SocialbenchError(f"{where} must return a list of row objects")
    by_id: dict[str, dict[str, Any]] = {}
    for r in rows:
        unknown = sorted(set(r) - set(ROW_KEYS))
        if unknown:
            raise SocialbenchError(
                f"{where}: row {r.get('id')!r} has unknown key {unknown[0]!r} (known: {', '.join(ROW_KEYS)})"
            )
        if not isinstance(r.get("id"), str) or r["id"] in by_id:
            raise SocialbenchError(f"{where}: row id {r.get('id')!r} is missing or repeated")
        for m in r.get("media") or []:
            if m.get("kind") not in MEDIA_KINDS or not isinstance(m.get("path"), str):
                raise SocialbenchError(
                    f"{where}: row {r['id']!r}: media item {m!r} needs kind ({', '.join(MEDIA_KINDS)}) and path"
                )
        by_id[r["id"]] = r
    ids = [i["id"] for i in instances]
    missing = [i for i in ids if i not in by_id]
    extra = sorted(set(by_id) - set(ids))
    if missing or extra:
        raise SocialbenchError(
            f"{where}: rows must be one per instance; "
            + (f"no row for {missing[0]!r} ({len(missing)} missing)" if missing else f"row {extra[0]!r} is no instance")
        )
    return [by_id[i] for i in ids]


def bench_rows(bench, run: Run, predictions: dict[str, dict[str, Any]], traces: dict[str, dict[str, Any]]):
    """The benchmark's rows of a run's predictions (its own, else :func:`default_rows`), checked."""
    rows = bench.results.viewer_rows(run.instances, predictions, traces)
    if rows is None:
        rows = default_rows(run.instances, predictions, traces)
    return check_rows(rows, run.instances, bench.name)


def with_orders(rows: list[dict[str, Any]], by_order: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """``rows`` (order 0) with each instance's answers under every option order (``orders``: order 0's
    and those of ``by_order``, the order runs' checked rows by order index); unchanged without any."""
    if not by_order:
        return rows
    answers: dict[str, list[dict[str, Any]]] = {}
    for k, order_rows in sorted({0: rows, **by_order}.items()):
        for r in order_rows:
            fields = [
                {"name": f["name"], "pred": f.get("pred"), "correct": f.get("correct")} for f in r.get("fields") or []
            ]
            answers.setdefault(r["id"], []).append(
                {"order": k, "fields": fields, "correct": r.get("correct"), "error": r.get("error")}
            )
    return [{**r, "orders": answers[r["id"]]} for r in rows]


# ---- the method's trace section -------------------------------------------------------------------
def trace_hook(bench, method: str) -> tuple[Callable[[dict[str, Any]], TraceSection | None], str]:
    """The run's method's ``trace_section`` and ``trace_filter``. A run of a method this benchmark does
    not have (its files come from elsewhere) gets the default: the trace as a tree, no filter."""
    try:
        cls = bench.method_class(method)
    except (SocialbenchError, ImportError, ValueError):  # ValueError: a benchmark class without its package
        cls = Method
    return cls.trace_section, cls.trace_filter


def trace_sections(
    run: Run, rows: Sequence[dict[str, Any]], hook: Callable[[dict[str, Any]], TraceSection | None], source: str
) -> list[TraceSection | None]:
    """Each row's section of its trace record's ``trace`` (None: none, or drawn as a tree). A trace the
    method cannot read is a DataError naming the traces file, the record and the field."""
    out: list[TraceSection | None] = []
    for r in rows:
        trace = (run.traces.get(r["id"]) or {}).get("trace")
        if not isinstance(trace, dict) or not trace:
            out.append(None)
            continue
        try:
            out.append(hook(trace))
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise DataError(
                source, f"method {run.method} cannot show this trace ({exc})", record=f"id {r['id']}", field="trace"
            ) from exc
    return out


# ---- the page and its shards (pure) -------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """A run's viewer files: the page, and its shards (file name, text) in the folder ``shards_dir`` beside it."""

    page: str
    shards: list[tuple[str, str]]
    shards_dir: str
    rows: int
    problems: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.page.encode("utf-8")) + sum(len(t.encode("utf-8")) for _, t in self.shards)


def render_view(
    run: Run,
    rows: list[dict[str, Any]],
    sections: Sequence[TraceSection | None],
    problems: Sequence[str],
    stem: str,
    media_href: str,
    trace_filter: str = "trace",
    shard_rows: int = SHARD_ROWS,
) -> View:
    """The page of checked rows (their media already stored) named ``<stem>.html``, with its shards."""
    htmls = [row_html(r, run.traces.get(r["id"]), s) for r, s in zip(rows, sections)]
    starts = shard_bounds([len(h.encode("utf-8")) for h in htmls], shard_rows)
    ends = starts[1:] + [len(rows)]
    shard_of = [k for k, (a, b) in enumerate(zip(starts, ends)) for _ in range(a, b)]
    index_rows = [
        index_entry(r, row_correct(r), s.tags if s is not None else (), k) for r, s, k in zip(rows, sections, shard_of)
    ]
    folder = f"{stem}.shards"
    shards = [(shard_name(k, len(starts)), shard_js(k, htmls[a:b])) for k, (a, b) in enumerate(zip(starts, ends))]
    index = {
        "base": quote(folder) + "/",
        "width": len(shards[0][0]) - len(".js"),
        "media": media_href,
        "page": PAGE_ROWS,
        "starts": starts,
        "rows": index_rows,
    }
    title = f"{run.benchmark} · {run.model} · {run.method}"
    n = len(rows)
    count = {c: sum(1 for e in index_rows if e[2] == c) for c in ("correct", "wrong")}
    groups = sorted({e[1] for e in index_rows if e[1]})
    group_label = next((r["group_label"] for r in rows if r.get("group_label")), "group")
    by_group = " · ".join(f"{esc(g)} {sum(1 for e in index_rows if e[1] == g)}" for g in groups)
    summary = (
        f"{n} instances · {count['correct']} correct · {count['wrong']} wrong"
        f" · {sum(1 for e in index_rows if e[3] == 'yes')} with an error"
        + (f" · {esc(group_label)}: {by_group}" if groups else "")
    )
    filters = filters_html(rows, index_rows, group_label, trace_filter)
    page = render_page(title, summary, run.inputs, problems, filters, index)
    return View(page, shards, folder, n, list(problems))


# ---- the whole stage -------------------------------------------------------------------------
def build_view(
    bench,
    instances: Path,
    predictions: Path,
    traces: Path | None,
    out: Path,
    store: MediaStore,
    *,
    thumb_px: int = THUMB_PX,
    frame_px: int = FRAME_PX,
    max_frames: int = MAX_FRAMES,
    shard_rows: int = SHARD_ROWS,
    orders: Sequence[tuple[int, Path]] = (),
) -> View:
    """Read a run, let the benchmark say what each row shows and the method what its trace shows, and render the page
    ``out`` with its shards and media. ``orders``: (k, predictions) of the run's order runs."""
    for name, v in dict(thumb_px=thumb_px, frame_px=frame_px, max_frames=max_frames, shard_rows=shard_rows).items():
        if v < 1:
            raise SocialbenchError(f"--{name.replace('_', '-')} must be at least 1, got {v}")
    run = read_run(bench, instances, predictions, traces)
    rows = bench_rows(bench, run, run.predictions, run.traces)
    ids = {i["id"] for i in run.instances}
    by_order = {}
    for k, path in orders:
        preds, _ = read_predictions(
            path, ids, str(instances), (run.model, str(RunName.parse(run.method).with_order(k)))
        )
        by_order[k] = bench_rows(bench, run, preds, {})
    rows = with_orders(rows, by_order)
    # the media folder as a link relative to the page's folder (``../media`` in the results layout)
    rel = os.path.relpath(os.path.abspath(store.folder), os.path.abspath(Path(out).parent))
    href = "/".join(quote(p) for p in Path(rel).parts)
    problems = embed_media(rows, store, href, thumb_px, frame_px, max_frames)
    hook, label = trace_hook(bench, run.method)
    sections = trace_sections(run, rows, hook, str(traces))
    return render_view(run, rows, sections, problems, Path(out).stem, href, label, shard_rows)


def write_view(view: View, out: Path) -> None:
    """Write the shards (a shard file of an earlier build that this one has not is removed), then the page."""
    folder = Path(out).parent / view.shards_dir
    folder.mkdir(parents=True, exist_ok=True)
    names = {n for n, _ in view.shards}
    for old in sorted(folder.glob("*.js")):
        if old.name not in names:
            old.unlink()
    for name, text in view.shards:
        write_text_atomic(folder / name, text)
    write_text_atomic(out, view.page)
