"""The trace viewer's row HTML (pure): one ``<article>`` per instance, its trace section drawn from the
method's :class:`socialbench.core.traces.TraceSection` (else as a JSON tree). Every text goes through
``html.escape``: markup in instance text or model output stays text."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any

from socialbench.core.traces import Mark, TraceSection


def esc(v: Any) -> str:
    """Text for HTML (attributes too): markup in instance text or model output stays text."""
    return html.escape(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True), quote=True)


def value_html(v: Any) -> str:
    """A field value: a string as it is, anything else as JSON, a missing one as a dash."""
    if v is None:
        return '<span class="none">—</span>'
    return esc(v)


def tree_html(v: Any) -> str:
    """Any JSON value as nested lists: objects as key/value lists, long or multi-line text as a block."""
    if isinstance(v, dict):
        if not v:
            return '<span class="none">{}</span>'
        items = "".join(f"<dt>{esc(k)}</dt><dd>{tree_html(x)}</dd>" for k, x in v.items())
        return f'<dl class="kv">{items}</dl>'
    if isinstance(v, list):
        if not v:
            return '<span class="none">[]</span>'
        if all(not isinstance(x, (dict, list)) for x in v) and sum(len(esc(x)) for x in v) < 160:
            return '<span class="list">' + " · ".join(esc(x) for x in v) + "</span>"
        return '<ol class="tree">' + "".join(f"<li>{tree_html(x)}</li>" for x in v) + "</ol>"
    if isinstance(v, str):
        if "\n" in v or len(v) > 120:
            return f'<pre class="txt">{esc(v)}</pre>'
        return f'<span class="s">{esc(v)}</span>'
    if v is None:
        return '<span class="none">null</span>'
    return f'<span class="n">{esc(v)}</span>'


def badge(text: str, kind: str = "info") -> str:
    return f'<span class="badge {esc(kind)}">{esc(text)}</span>'


def marks_html(marks: Iterable[Mark]) -> str:
    return "".join(" " + badge(t, k) for t, k in marks)


def media_html(m: dict[str, Any]) -> str:
    cap = esc(m.get("caption") or m["path"])
    title = esc(m["path"])
    warn = f'<div class="warn">{esc(m["problem"])}</div>' if m.get("problem") else ""
    if m.get("src"):
        cls = "frame" if m["kind"] == "frame" else "image"
        return (
            f'<figure class="{cls}"><img src="{esc(m["src"])}" width="{m["width"]}" height="{m["height"]}"'
            f' alt="{title}" title="{title}" loading="lazy"><figcaption>{cap}</figcaption>{warn}</figure>'
        )
    return (
        f'<figure class="missing" title="{title}"><div class="ph">{esc(m["kind"])}'
        f" not shown</div><figcaption>{cap}</figcaption>{warn}</figure>"
    )


#: The mark before a scored prediction, and its cell's class, by its ``correct``.
MARKS = {
    True: '<span class="mark ok" title="correct">✓</span> ',
    False: '<span class="mark bad" title="wrong">✗</span> ',
}
CLASSES = {True: "right", False: "wrong"}


def fields_html(fields: list[dict[str, Any]]) -> str:
    if not fields:
        return ""
    rows = []
    for f in fields:
        c = f.get("correct")
        mark, cls = MARKS.get(c, ""), CLASSES.get(c, "unscored")
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


def same_answer(orders: list[dict[str, Any]]) -> bool:
    """Whether an instance's answer is the same under every option order (each field's prediction)."""
    answers = {json.dumps([[f["name"], f.get("pred")] for f in o["fields"]], sort_keys=True) for o in orders}
    return len(answers) == 1


def orders_html(orders: list[dict[str, Any]] | None) -> str:
    """The instance's answers under each option order side by side: a column per order, a row per field."""
    if not orders or len(orders) < 2:
        return ""
    names = list(dict.fromkeys(f["name"] for o in orders for f in o["fields"]))
    rows = []
    for name in names:
        cells = []
        for o in orders:
            f = next((f for f in o["fields"] if f["name"] == name), {})
            c = f.get("correct")
            cells.append(
                f'<td class="pred {CLASSES.get(c, "unscored")}">{MARKS.get(c, "")}{value_html(f.get("pred"))}</td>'
            )
        rows.append(f"<tr><th>{esc(name)}</th>{''.join(cells)}</tr>")
    whole = "".join(
        f'<td class="pred {CLASSES.get(o.get("correct"), "unscored")}">'
        f"{MARKS.get(o.get('correct'), '')}{esc(row_correct(o))}"
        + (f' <span class="err">error: {esc(o["error"])}</span>' if o.get("error") else "")
        + "</td>"
        for o in orders
    )
    rows.append(f"<tr><th>whole answer</th>{whole}</tr>")
    head = "".join(f"<th>order {esc(o['order'])}</th>" for o in orders)
    return (
        '<table class="fields orders"><caption>answers under each option order</caption>'
        f"<thead><tr><th>field</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
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


def section_html(trace: Any, section: TraceSection | None) -> str:
    """What the method keeps: its section's blocks (each titled and marked; what a pass was given
    folded) and the rest as a tree; without a section (the method has no hook) the trace as a tree."""
    if not isinstance(trace, dict) or not trace:
        return ""
    if section is None:
        return f'<details class="trace"><summary>method trace</summary>{tree_html(trace)}</details>'
    parts = []
    for p in section.passes:
        given = f'<details class="inputs"><summary>inputs</summary>{tree_html(p.given)}</details>' if p.given else ""
        body = tree_html(p.body) if p.body is not None else ""
        parts.append(
            f'<details class="stage" open><summary>{esc(p.title)}{marks_html(p.marks)}</summary>{given}{body}</details>'
        )
    if section.rest:
        parts.append(tree_html(section.rest))
    head = esc(section.title) + marks_html(section.title_marks)
    return f'<details class="trace"><summary>{head}</summary>{"".join(parts)}</details>'


def row_html(row: dict[str, Any], trace_rec: dict[str, Any] | None, section: TraceSection | None) -> str:
    """One instance's ``<article>`` (its ``data-`` attributes repeat what the page's index says)."""
    correct = row_correct(row)
    wrong = [f["name"] for f in row.get("fields") or [] if f.get("correct") is False]
    trace = (trace_rec or {}).get("trace")
    tags = section.tags if section is not None else ()
    head = [f'<span class="rid">{esc(row["id"])}</span>']
    if row.get("group") is not None:
        head.append(badge(str(row["group"]), "group"))
    head.append(badge(correct, {"correct": "ok", "wrong": "bad"}.get(correct, "info")))
    if row.get("error"):
        head.append(badge("error", "bad"))
    head += [badge(t, k) for t, k in row.get("badges") or []]
    if len(row.get("orders") or []) > 1:  # answers under other option orders (params robustness)
        n = len(row["orders"])
        head.append(
            badge(f"same answer under {n} orders", "ok")
            if same_answer(row["orders"])
            else badge("answer changes with order", "bad")
        )
    head += [badge(t, k) for t, k in (section.marks if section is not None else ())]
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
        + orders_html(row.get("orders"))
        + err
        + (f'<dl class="meta">{meta}</dl>' if meta else "")
        + raw
        + calls_html((trace_rec or {}).get("calls") or [])
        + section_html(trace, section)
        + no_trace
        + "</div>"
    )
    attrs = (
        f'data-id="{esc(row["id"])}" data-group="{esc("" if row.get("group") is None else str(row["group"]))}"'
        f' data-correct="{correct}" data-error="{"yes" if row.get("error") else "no"}"'
        f' data-wrong="{esc(" ".join(wrong))}" data-verdict="{esc(" ".join(tags))}"'
    )
    return (
        f'<article class="row {correct}" {attrs}><header>{" ".join(head)}</header>'
        f'<div class="body">{body}</div></article>\n'
    )


def row_correct(row: dict[str, Any]) -> str:
    """``correct``, ``wrong`` or ``unknown`` (the benchmark cannot say)."""
    return {True: "correct", False: "wrong"}.get(row.get("correct"), "unknown")


def select_html(name: str, label: str, options: Iterable[tuple[str, str]]) -> str:
    opts = "".join(f'<option value="{esc(v)}">{esc(t)}</option>' for v, t in [("", "all"), *options])
    return f'<label>{esc(label)} <select id="f-{esc(name)}" name="{esc(name)}">{opts}</select></label>'
