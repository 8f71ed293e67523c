"""The trace viewer: one static HTML page per run (benchmark, model, method), read in a browser with
no server, like inspect_ai's log viewer. Per instance it shows the image or the sampled frames, the
text, gold and predicted fields (wrong ones marked), the error, every model call of the method and
what a multi-stage method keeps (its ``trace``: stage outputs, revisions, checker verdicts), with
filters by group, correctness, error, wrong field and checker verdict.

The page is self-contained, so it works as an MLflow artifact and offline: images are embedded as
downscaled JPEG thumbnails (``data:`` URIs, Pillow), the style and the filter script are inline, and
a Content-Security-Policy forbids loading anything else. All text is escaped. The same inputs give
the same bytes (no timestamps; thumbnails encoded with fixed settings).

What a row shows is the benchmark's (:meth:`socialbench.core.benchmarks.Benchmark.viewer_rows`, a list of
row dicts, see :data:`ROW_KEYS`); the calls and the trace of each row come from the traces file and
are drawn here, the same for every benchmark. Reading and thumbnails are the I/O edges
(:func:`read_run`, :func:`embed_media`); everything else is pure.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.io import read_file_bytes
from socialbench.core.paths import MediaRoots

#: Longest side of an embedded image, of an embedded video frame (pixels), and frames shown per instance.
THUMB_PX = 256
FRAME_PX = 160
MAX_FRAMES = 8
#: JPEG quality of the thumbnails (fixed: the same image gives the same bytes).
JPEG_QUALITY = 80

#: The keys a row may have (``id`` is required). ``texts``: ``[[label, text]]``; ``media``: ``[{kind:
#: image|frame|video, path, caption?, sha256?}]``; ``fields``: ``[{name, gold, pred, correct: bool |
#: None, note?, options?}]``; ``correct``: the whole instance (None: the benchmark cannot say);
#: ``badges``: ``[[text, ok|bad|info]]``; ``meta``: ``[[label, value]]``; ``raw``: the model's answer text.
ROW_KEYS = ("id", "group", "group_label", "texts", "media", "fields", "correct", "error", "badges", "meta", "raw")
MEDIA_KINDS = ("image", "frame", "video")
#: Prediction keys that are bookkeeping, not answers (the default rows compare the others with the instance).
BOOKKEEPING = ("id", "model", "method", "error", "raw")
#: Keys that name a stage's pass in a method's trace (shown in its title, not its body).
STAGE_TITLE_KEYS = ("stage", "pass", "round", "revision", "attempt")
VERDICTS = ("ACCEPTED", "REJECTED")


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
        if seen is None:
            seen = this  # type: ignore[assignment]
            continue
        for k, a, b in (("model", this[0], seen[0]), ("method", this[1], seen[1])):
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


def read_run(bench, instances: Path, predictions: Path, traces: Path | None) -> Run:
    """Read and cross-check a run's files: the instances through the benchmark (validated), the
    predictions and traces as the data contracts give them (docs/architecture.md)."""
    from socialbench.core.hashing import sha256_file
    from socialbench.core.io import first_bad_line, read_jsonl_lines

    insts = bench.load_instances(instances)
    if not insts:
        raise DataError(str(instances), "no instances (the file is empty): nothing to show")
    ids = {i["id"] for i in insts}
    parsed = read_jsonl_lines(predictions)
    first_bad_line(predictions, parsed)
    preds, plines = [jl.record for jl in parsed], [jl.line for jl in parsed]
    by_id = index_by_id(preds, plines, str(predictions), ids, str(instances))
    identity = run_identity(preds, plines, str(predictions))
    trace_by_id: dict[str, dict[str, Any]] = {}
    inputs = [
        ("instances", str(instances), sha256_file(instances)),
        ("predictions", str(predictions), sha256_file(predictions)),
    ]
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
        rows.append(
            {
                "id": inst["id"],
                "fields": fields,
                "correct": correct,
                "error": error,
                "raw": None if pred is None else pred.get("raw"),
            }
        )
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


# ---- media (I/O edge) -------------------------------------------------------------------------
def thumbnail(data: bytes, max_px: int) -> tuple[str, int, int]:
    """A ``data:image/jpeg`` URI of the image scaled to fit ``max_px`` (never enlarged), with its size.
    Transparency is flattened on white. Raises ValueError for bytes that are not an image."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            if im.mode in ("RGBA", "LA", "P"):
                im = im.convert("RGBA")
                bg = Image.new("RGB", im.size, (255, 255, 255))
                bg.paste(im, mask=im.getchannel("A"))
                im = bg
            else:
                im = im.convert("RGB")
            im.thumbnail((max_px, max_px), Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            # no EXIF, no ICC, fixed settings: the same image gives the same bytes
            im.save(buf, format="JPEG", quality=JPEG_QUALITY, optimize=False, progressive=False)
            w, h = im.size
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError) as exc:
        raise ValueError(f"not a readable image ({exc})") from exc
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii"), w, h


def pick_frames(items: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """At most ``k`` of the frames, evenly spread, first and last kept, in order."""
    n = len(items)
    if n <= k:
        return items
    if k <= 1:
        return items[:k]
    picks = sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})
    return [items[i] for i in picks]


def embed_media(
    rows: list[dict[str, Any]],
    root: Path,
    thumb_px: int = THUMB_PX,
    frame_px: int = FRAME_PX,
    max_frames: int = MAX_FRAMES,
    roots: MediaRoots | None = None,
) -> list[str]:
    """Give every media item of the rows its thumbnail (``src``, ``width``, ``height``) or the reason it
    has none (``problem``); a frame whose bytes differ from its recorded sha256 is shown with a warning.
    Relative paths are read under ``root``; only media that lead (symlinks and ``..`` followed) into
    ``roots`` (default: ``root`` itself) are read, any other is marked, not embedded. Returns one line
    per problem (the page marks each too)."""
    roots = roots if roots is not None else MediaRoots.only(root)
    problems: list[str] = []
    done: dict[tuple[str, int], tuple[str, int, int, str] | str] = {}  # (uri, w, h, sha256) or the problem
    for row in rows:
        media = row.get("media") or []
        frames = [m for m in media if m["kind"] == "frame"]
        shown = pick_frames(frames, max_frames)
        if len(shown) < len(frames):
            row.setdefault("badges", []).append([f"{len(shown)} of {len(frames)} frames shown", "info"])
        media = [m for m in media if m["kind"] != "frame" or any(m is s for s in shown)]
        row["media"] = media
        for m in media:
            if m["kind"] == "video":
                m["problem"] = "video not embedded (no sampled frames)"
                continue
            path = Path(m["path"]) if Path(m["path"]).is_absolute() else root / m["path"]
            px = frame_px if m["kind"] == "frame" else thumb_px
            key = (str(path), px)
            if key not in done:
                outside = roots.problem(m["path"])
                try:
                    if outside is not None:
                        raise ValueError(f"not embedded: {outside.split(';')[0]}")
                    data = read_file_bytes(path, "media file")  # a FIFO or device is refused, never opened
                    done[key] = (*thumbnail(data, px), hashlib.sha256(data).hexdigest())
                except DataError as exc:
                    why = str(exc)[len(exc.path) + 2 :]
                    done[key] = "file not found" if why.endswith(" not found") else why
                except (OSError, ValueError) as exc:
                    done[key] = str(exc) if isinstance(exc, ValueError) else f"cannot be read ({exc.strerror or exc})"
            got = done[key]
            if isinstance(got, str):
                m["problem"] = got
                problems.append(f"{row['id']}: {m['path']}: {got}")
                continue
            m["src"], m["width"], m["height"], digest = got
            if m.get("sha256") and m["sha256"] != digest:
                m["problem"] = "file changed since it was recorded (sha256 differs)"
                problems.append(f"{row['id']}: {m['path']}: {m['problem']}")
    return problems


# ---- verdicts of a multi-stage method's trace -----------------------------------------------------
def verdicts(trace: Any) -> list[dict[str, Any]]:
    """The checker verdicts of a method's trace, in order: the items of its top-level ``verdicts``
    list when it has one (a method may keep them there, and again in its checker stages' outputs), else
    every object whose ``status`` is ACCEPTED or REJECTED, wherever it is nested; each with its
    ``breakpoint`` when given."""
    if isinstance(trace, dict) and isinstance(trace.get("verdicts"), list):
        return [
            {"status": v["status"].upper(), "breakpoint": v.get("breakpoint")}
            for v in trace["verdicts"]
            if isinstance(v, dict) and isinstance(v.get("status"), str) and v["status"].upper() in VERDICTS
        ]
    out: list[dict[str, Any]] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            st = v.get("status")
            if isinstance(st, str) and st.upper() in VERDICTS:
                out.append({"status": st.upper(), "breakpoint": v.get("breakpoint")})
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(trace)
    return out


def verdict_tokens(trace: Any) -> list[str]:
    """The row's checker filter values: ``revised`` (some verdict REJECTED), then ``accepted`` or
    ``not-accepted``: the trace's own ``not_accepted`` (true or a reason) or ``accepted`` (a boolean)
    when it has one, else the last verdict. Empty for a trace without verdicts."""
    vs = verdicts(trace)
    if not vs:
        return []
    tokens = ["revised"] if any(v["status"] == "REJECTED" for v in vs) else []
    flags = trace if isinstance(trace, dict) else {}
    if flags.get("not_accepted"):
        accepted = False
    elif isinstance(flags.get("accepted"), bool):
        accepted = flags["accepted"]
    else:
        accepted = vs[-1]["status"] == "ACCEPTED"
    return tokens + ["accepted" if accepted else "not-accepted"]


# ---- HTML (pure) ------------------------------------------------------------------------------
def esc(v: Any) -> str:
    """Text for HTML (attributes too): markup in instance text or model output stays text."""
    return html.escape(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True), quote=True)


def value_html(v: Any) -> str:
    """A field value: a string as it is, anything else as JSON, a missing one as a dash."""
    if v is None:
        return '<span class="none">—</span>'
    return esc(v)


def tree_html(v: Any, depth: int = 0) -> str:
    """Any JSON value as nested lists: objects as key/value lists, long or multi-line text as a block."""
    if isinstance(v, dict):
        if not v:
            return '<span class="none">{}</span>'
        items = []
        for k, x in v.items():
            badge = ""
            if k == "status" and isinstance(x, str) and x.upper() in VERDICTS:
                badge = verdict_badge({"status": x.upper(), "breakpoint": v.get("breakpoint")})
            items.append(f"<dt>{esc(k)}</dt><dd>{badge or tree_html(x, depth + 1)}</dd>")
        return f'<dl class="kv">{"".join(items)}</dl>'
    if isinstance(v, list):
        if not v:
            return '<span class="none">[]</span>'
        if all(not isinstance(x, (dict, list)) for x in v) and sum(len(esc(x)) for x in v) < 160:
            return '<span class="list">' + " · ".join(esc(x) for x in v) + "</span>"
        return '<ol class="tree">' + "".join(f"<li>{tree_html(x, depth + 1)}</li>" for x in v) + "</ol>"
    if isinstance(v, str):
        if "\n" in v or len(v) > 120:
            return f'<pre class="txt">{esc(v)}</pre>'
        return f'<span class="s">{esc(v)}</span>'
    if v is None:
        return '<span class="none">null</span>'
    return f'<span class="n">{esc(v)}</span>'


def badge(text: str, kind: str = "info") -> str:
    return f'<span class="badge {esc(kind)}">{esc(text)}</span>'


def verdict_badge(v: dict[str, Any]) -> str:
    if v["status"] == "ACCEPTED":
        return badge("ACCEPTED", "ok")
    bp = v.get("breakpoint")
    return badge("REJECTED" + (f" → stage {bp}" if bp is not None else ""), "bad")


def media_html(m: dict[str, Any]) -> str:
    cap = esc(m.get("caption") or m["path"])
    title = esc(m["path"])
    warn = f'<div class="warn">{esc(m["problem"])}</div>' if m.get("problem") else ""
    if m.get("src"):
        cls = "frame" if m["kind"] == "frame" else "image"
        return (
            f'<figure class="{cls}"><img src="{esc(m["src"])}" width="{m["width"]}" height="{m["height"]}"'
            f' alt="{title}" title="{title}"><figcaption>{cap}</figcaption>{warn}</figure>'
        )
    return (
        f'<figure class="missing" title="{title}"><div class="ph">{esc(m["kind"])}'
        f" not shown</div><figcaption>{cap}</figcaption>{warn}</figure>"
    )


def fields_html(fields: list[dict[str, Any]]) -> str:
    if not fields:
        return ""
    rows = []
    for f in fields:
        c = f.get("correct")
        mark = {
            True: '<span class="mark ok" title="correct">✓</span> ',
            False: '<span class="mark bad" title="wrong">✗</span> ',
        }.get(c, "")
        cls = {True: "right", False: "wrong"}.get(c, "unscored")
        note = f'<div class="note">{esc(f["note"])}</div>' if f.get("note") else ""
        opts = (
            f'<div class="opts">options: {" · ".join(esc(o) for o in f["options"])}</div>' if f.get("options") else ""
        )
        rows.append(
            f'<tr class="{cls}" data-field="{esc(f["name"])}"><th>{esc(f["name"])}</th>'
            f'<td class="gold">{value_html(f.get("gold"))}{opts}</td>'
            f'<td class="pred {cls}">{mark}{value_html(f.get("pred"))}{note}</td></tr>'
        )
    return (
        '<table class="fields"><thead><tr><th>field</th><th>gold</th><th>predicted</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def calls_html(calls: list[dict[str, Any]]) -> str:
    """Every call in order, with its round, stage and bookkeeping; a stage called again is marked as a
    rerun (a revision or a retry; its request id says which), so a chain's reruns read as such."""
    if not calls:
        return ""
    seen: dict[str, int] = {}
    parts = []
    for c in calls:
        stage = str(c.get("stage") or "")
        seen[stage] = seen.get(stage, 0) + 1
        again = f" {badge(f'rerun {seen[stage] - 1}', 'info')}" if seen[stage] > 1 else ""
        facts = [
            f"round {esc(c.get('round'))}",
            f"finish {esc(c.get('finish_reason'))}",
            f"tokens {esc(c.get('input_tokens'))}/{esc(c.get('output_tokens'))}",
        ]
        if c.get("cached"):
            facts.append("cached")
        err = f'<div class="err">error: {esc(c["error"])}</div>' if c.get("error") else ""
        bad = " bad" if c.get("error") or c.get("finish_reason") not in (None, "stop") else ""
        parts.append(
            f'<div class="call{bad}"><div class="call-head"><strong>{esc(stage or "call")}</strong>{again}'
            f' <span class="muted">{" · ".join(facts)}</span>'
            f' <code class="muted">{esc(c.get("request_id") or "")}</code></div>'
            f'{err}<pre class="txt">{esc(c.get("text") or "")}</pre></div>'
        )
    rounds = len({c.get("round") for c in calls})
    return (
        f'<details class="calls"><summary>{len(calls)} call{"s" if len(calls) != 1 else ""}'
        f" in {rounds} round{'s' if rounds != 1 else ''}</summary>{''.join(parts)}</details>"
    )


def stage_title(item: dict[str, Any]) -> str:
    """The stage, its pass (first attempts are not numbered: only retries are), a verdict it gave and
    an error it ended with."""
    bits = [esc(item["stage"]) if "stage" in item else "step"]
    bits += [
        f"{esc(k)} {esc(item[k])}"
        for k in STAGE_TITLE_KEYS[1:]
        if item.get(k) is not None and not (k == "attempt" and item[k] == 1)
    ]
    marks = [verdict_badge(v) for v in verdicts(item)] + ([badge("error", "bad")] if item.get("error") else [])
    return " · ".join(bits) + "".join(" " + m for m in marks)


def stage_body(item: dict[str, Any]) -> str:
    """A stage pass's keys but its title's and the empty ones; what it was given (``inputs``, long:
    the earlier stages' outputs and its revision note) folded."""
    body = {k: x for k, x in item.items() if k not in STAGE_TITLE_KEYS and x is not None and k != "inputs"}
    inputs = item.get("inputs")
    folded = f'<details class="inputs"><summary>inputs</summary>{tree_html(inputs)}</details>' if inputs else ""
    return folded + (tree_html(body) if body else "")


def trace_html(trace: Any) -> str:
    """What a multi-stage method keeps: its ``stages`` list as one block per stage pass (titled by its
    stage and pass), every other key as a tree; checker verdicts as badges."""
    if not isinstance(trace, dict) or not trace:
        return ""
    parts = []
    stages = trace.get("stages")
    if isinstance(stages, list):
        for item in stages:
            if isinstance(item, dict):
                parts.append(
                    f'<details class="stage" open><summary>{stage_title(item)}</summary>{stage_body(item)}</details>'
                )
            else:
                parts.append(f'<div class="stage">{tree_html(item)}</div>')
    rest = {k: x for k, x in trace.items() if not (k == "stages" and isinstance(stages, list))}
    if rest:
        parts.append(tree_html(rest))
    vs = verdicts(trace)
    n = len(stages) if isinstance(stages, list) else 0
    head = (
        "method trace"
        + (f" ({n} stage pass{'es' if n != 1 else ''})" if n else "")
        + "".join(" " + verdict_badge(v) for v in vs)
    )
    return f'<details class="trace"><summary>{head}</summary>{"".join(parts)}</details>'


def row_html(row: dict[str, Any], trace_rec: dict[str, Any] | None) -> str:
    correct = {True: "correct", False: "wrong"}.get(row.get("correct"), "unknown")
    wrong = [f["name"] for f in row.get("fields") or [] if f.get("correct") is False]
    trace = (trace_rec or {}).get("trace")
    tokens = verdict_tokens(trace)
    head = [f'<span class="rid">{esc(row["id"])}</span>']
    if row.get("group") is not None:
        head.append(badge(str(row["group"]), "group"))
    head.append(badge(correct, {"correct": "ok", "wrong": "bad"}.get(correct, "info")))
    if row.get("error"):
        head.append(badge("error", "bad"))
    head += [badge(t, k) for t, k in row.get("badges") or []]
    head += [verdict_badge(v) for v in verdicts(trace)[-1:]]
    if "not-accepted" in tokens:
        head.append(badge("not accepted", "bad"))
    media = "".join(media_html(m) for m in row.get("media") or [])
    texts = "".join(f'<dt>{esc(k)}</dt><dd><pre class="txt">{esc(v)}</pre></dd>' for k, v in row.get("texts") or [])
    meta = "".join(f"<dt>{esc(k)}</dt><dd>{value_html(v)}</dd>" for k, v in row.get("meta") or [])
    err = f'<p class="err">error: {esc(row["error"])}</p>' if row.get("error") else ""
    raw = (
        f'<details class="raw"><summary>raw answer</summary><pre class="txt">{esc(row["raw"])}</pre></details>'
        if row.get("raw") is not None
        else ""
    )
    no_trace = '<p class="muted">no trace record for this instance</p>' if trace_rec is None else ""
    body = (
        f'<div class="media">{media}</div><div class="content">'
        + (f'<dl class="texts">{texts}</dl>' if texts else "")
        + fields_html(row.get("fields") or [])
        + err
        + (f'<dl class="meta">{meta}</dl>' if meta else "")
        + raw
        + calls_html((trace_rec or {}).get("calls") or [])
        + trace_html(trace)
        + no_trace
        + "</div>"
    )
    attrs = (
        f'data-id="{esc(row["id"])}" data-group="{esc("" if row.get("group") is None else str(row["group"]))}"'
        f' data-correct="{correct}" data-error="{"yes" if row.get("error") else "no"}"'
        f' data-wrong="{esc(" ".join(wrong))}" data-verdict="{esc(" ".join(tokens))}"'
    )
    return (
        f'<article class="row {correct}" {attrs}><header>{" ".join(head)}</header>'
        f'<div class="body">{body}</div></article>\n'
    )


def select_html(name: str, label: str, options: Iterable[tuple[str, str]]) -> str:
    opts = "".join(f'<option value="{esc(v)}">{esc(t)}</option>' for v, t in [("", "all"), *options])
    return f'<label>{esc(label)} <select id="f-{esc(name)}" name="{esc(name)}">{opts}</select></label>'


CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#f4f5f7}
header.top{background:#1f2a37;color:#fff;padding:12px 20px}header.top h1{font-size:18px;margin:0 0 4px}
header.top .sum{color:#cfd8e3}header.top details{color:#cfd8e3;font-size:12px}header.top details>summary{color:#cfd8e3}
header.top code{color:#fff}
nav.filters{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #d8dde3;padding:8px 20px;
  display:flex;flex-wrap:wrap;gap:14px;align-items:center}
nav.filters select,nav.filters input{font:inherit;padding:2px 4px}#count{margin-left:auto;color:#555}
main{padding:12px 20px}[hidden]{display:none!important}
article.row{background:#fff;border:1px solid #d8dde3;border-left:5px solid #9aa5b1;border-radius:4px;margin:0 0 12px}
article.row.correct{border-left-color:#2e7d32}article.row.wrong{border-left-color:#c62828}
article.row>header{padding:6px 10px;border-bottom:1px solid #eceff2;
  display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.rid{font-weight:600;font-family:ui-monospace,monospace}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;background:#e3e8ef;color:#334}
.badge.ok{background:#dff3e0;color:#1b5e20}.badge.bad{background:#fde2e1;color:#b71c1c}
.badge.group{background:#e3ecfa;color:#1a4a8a}
.body{display:grid;grid-template-columns:minmax(180px,300px) 1fr;gap:12px;padding:10px}
.media{display:flex;flex-wrap:wrap;gap:6px;align-content:flex-start}
figure{margin:0;font-size:11px;color:#555;max-width:100%}figure.frame{width:calc(50% - 3px)}
figure img{display:block;max-width:100%;height:auto;border:1px solid #ccd}
figure.missing .ph{width:160px;height:90px;display:flex;align-items:center;justify-content:center;
  background:#eee;border:1px dashed #aaa;color:#777}
.warn{color:#b26a00}.err{color:#b71c1c;margin:4px 0}.muted{color:#6b7785}.none{color:#9aa5b1}
pre.txt{white-space:pre-wrap;word-break:break-word;margin:0;font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;
  background:#f7f8fa;padding:4px 6px;border-radius:3px}
dl.texts{margin:0 0 8px}dl.texts dt,dl.meta dt{font-size:12px;color:#6b7785}dl.texts dd{margin:0 0 6px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:0 10px;font-size:12px;margin:6px 0}dl.meta dd{margin:0}
table.fields{border-collapse:collapse;margin:4px 0 6px;min-width:60%}
table.fields th,table.fields td{border:1px solid #e1e5ea;padding:3px 8px;text-align:left;vertical-align:top}
table.fields thead th{background:#f4f6f8;font-size:12px}td.pred.wrong{background:#fdecea}
td.pred.right{background:#edf7ee}
.mark.ok{color:#2e7d32;font-weight:700}.mark.bad{color:#c62828;font-weight:700}
.note,.opts{font-size:11.5px;color:#6b7785}
details{margin:6px 0}details>summary{cursor:pointer;color:#1a4a8a}
.call{border:1px solid #e1e5ea;border-radius:3px;margin:4px 0;padding:4px 6px}.call.bad{border-color:#f0b4b0}
.call-head{margin-bottom:3px}
details.stage{border-left:3px solid #9fb3d1;padding-left:8px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:2px 0}
dl.kv dt{color:#6b7785;font-size:12px}dl.kv dd{margin:0}
ol.tree{margin:2px 0;padding-left:20px}#empty{color:#6b7785;padding:20px}#notice{color:#b26a00}
@media (max-width:700px){.body{grid-template-columns:1fr}}
""".strip()

# The filters: each select matches a data- attribute of the rows (wrong field and checker verdict
# are token lists); the search matches the row's text. The URL hash holds the state (#group=g1&
# correct=wrong; expand=1 opens every row's calls and trace), so a link or a bookmark opens the page filtered.
JS = """
(function(){
var F=["group","correct","error","field","verdict"];
var rows=Array.prototype.slice.call(document.querySelectorAll("article.row"));
var q=document.getElementById("f-q");var ex=document.getElementById("f-expand");
function expand(){document.querySelectorAll("details.calls,details.trace").forEach(function(d){d.open=ex.checked;});}
function sel(n){return document.getElementById("f-"+n);}
function val(n){var e=sel(n);return e?e.value:"";}
function has(list,t){return (" "+list+" ").indexOf(" "+t+" ")>=0;}
function apply(save){
  var v={};F.forEach(function(n){v[n]=val(n);});var text=q.value.trim().toLowerCase();var shown=0;
  rows.forEach(function(r){
    var d=r.dataset;
    var ok=(!v.group||d.group===v.group)&&(!v.correct||d.correct===v.correct)&&(!v.error||d.error===v.error)
      &&(!v.field||has(d.wrong,v.field))&&(!v.verdict||has(d.verdict,v.verdict))
      &&(!text||r.textContent.toLowerCase().indexOf(text)>=0);
    r.hidden=!ok;if(ok){shown++;}
  });
  document.getElementById("shown").textContent=String(shown);
  document.getElementById("empty").hidden=shown>0;
  if(save){
    var p=new URLSearchParams();F.forEach(function(n){if(v[n]){p.set(n,v[n]);}});if(text){p.set("q",text);}
    if(ex.checked){p.set("expand","1");}
    var h=p.toString();
    try{history.replaceState(null,"",h?"#"+h:location.pathname+location.search);}catch(e){location.hash=h;}
  }
}
function fromHash(){
  var p=new URLSearchParams(location.hash.replace(/^#/,""));var bad=[];
  F.forEach(function(n){var e=sel(n);if(!e){if(p.get(n)){bad.push(n);}return;}var want=p.get(n)||"";e.value=want;
    if(e.value!==want){bad.push(n+"="+want);e.value="";}});
  q.value=p.get("q")||"";
  var open=p.get("expand")==="1";if(open!==ex.checked){ex.checked=open;expand();}
  document.getElementById("notice").textContent=bad.length?"ignored unknown filter: "+bad.join(", "):"";
  apply(false);
}
F.forEach(function(n){var e=sel(n);if(e){e.addEventListener("change",function(){apply(true);});}});
q.addEventListener("input",function(){apply(true);});
ex.addEventListener("change",function(){expand();apply(true);});
window.addEventListener("hashchange",fromHash);
fromHash();
document.body.setAttribute("data-ready","1");
})();
""".strip()

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


def render_page(run: Run, rows: list[dict[str, Any]], problems: Sequence[str] = ()) -> str:
    """The whole page for checked rows (their media already embedded)."""
    title = f"{run.benchmark} · {run.model} · {run.method}"
    n = len(rows)
    n_ok = sum(1 for r in rows if r.get("correct") is True)
    n_bad = sum(1 for r in rows if r.get("correct") is False)
    n_err = sum(1 for r in rows if r.get("error"))
    groups = sorted({str(r["group"]) for r in rows if r.get("group") is not None})
    group_label = next((r["group_label"] for r in rows if r.get("group_label")), "group")
    fields = list(dict.fromkeys(f["name"] for r in rows for f in r.get("fields") or []))
    tokens = sorted({t for r in rows for t in verdict_tokens((run.traces.get(r["id"]) or {}).get("trace"))})
    by_group = " · ".join(f"{esc(g)} {sum(1 for r in rows if str(r.get('group')) == g)}" for g in groups)
    summary = f"{n} instances · {n_ok} correct · {n_bad} wrong · {n_err} with an error" + (
        f" · {esc(group_label)}: {by_group}" if groups else ""
    )
    inputs = "".join(
        f"<li>{esc(w)}: <code>{esc(p)}</code> sha256 <code>{esc(h[:16])}</code></li>" for w, p, h in run.inputs
    )
    probs = ""
    if problems:
        probs = (
            f"<details><summary>{len(problems)} media file(s) not shown or changed (marked in their rows)</summary><ul>"
            + "".join(f"<li>{esc(p)}</li>" for p in problems)
            + "</ul></details>"
        )
    filters = [
        select_html("group", group_label, [(g, g) for g in groups]) if groups else "",
        select_html(
            "correct",
            "correct",
            [("correct", "all fields correct"), ("wrong", "some field wrong")]
            + ([("unknown", "not scored")] if n_ok + n_bad < n else []),
        ),
        select_html("error", "error", [("yes", "with an error"), ("no", "without an error")]),
        select_html("field", "wrong field", [(f, f) for f in fields]) if fields else "",
        select_html("verdict", "checker", [(t, t) for t in tokens]) if tokens else "",
        '<label>search <input id="f-q" type="search" placeholder="id, text, output"></label>',
        '<label><input id="f-expand" type="checkbox"> open calls and traces</label>',
        f'<span id="count">showing <strong id="shown">{n}</strong> of {n}</span>',
        '<span id="notice"></span>',
    ]
    body = "".join(row_html(r, run.traces.get(r["id"])) for r in rows)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>"
        f'<header class="top"><h1>{esc(title)}</h1><div class="sum">{summary}</div>'
        f"<details><summary>inputs</summary><ul>{inputs}</ul></details>{probs}</header>\n"
        f'<nav class="filters">{"".join(f for f in filters if f)}</nav>\n'
        '<noscript><p class="muted">The filters need JavaScript; every instance is shown.</p></noscript>\n'
        f'<main>\n{body}<p id="empty" hidden>No instance matches the filters.</p></main>\n'
        f"<script>{JS}</script></body></html>\n"
    )


# ---- the whole stage -------------------------------------------------------------------------
@dataclass(frozen=True)
class Page:
    html: str
    rows: int
    problems: list[str]


def build_page(
    bench,
    instances: Path,
    predictions: Path,
    traces: Path | None,
    *,
    media_root: Path = Path("."),
    thumb_px: int = THUMB_PX,
    frame_px: int = FRAME_PX,
    max_frames: int = MAX_FRAMES,
    media_roots: MediaRoots | None = None,
) -> Page:
    """Read a run, let the benchmark say what each row shows, embed the media and render the page."""
    for name, v in (("thumb_px", thumb_px), ("frame_px", frame_px), ("max_frames", max_frames)):
        if v < 1:
            raise SocialbenchError(f"--{name.replace('_', '-')} must be at least 1, got {v}")
    run = read_run(bench, instances, predictions, traces)
    rows = bench.viewer_rows(run.instances, run.predictions, run.traces)
    if rows is None:
        rows = default_rows(run.instances, run.predictions, run.traces)
    rows = check_rows(rows, run.instances, bench.name)
    problems = embed_media(rows, media_root, thumb_px, frame_px, max_frames, media_roots)
    return Page(render_page(run, rows, problems), len(rows), problems)
