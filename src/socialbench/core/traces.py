"""What the trace viewer shows of a method's trace (``Final.trace``): the return type of
:meth:`socialbench.core.benchmarks.Method.trace_section` and a builder for a chain of stages with a
checker. Pure data (the viewer in ``socialbench.results`` draws it), so methods import no viewer code."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: A mark: ``(text, kind)``, kind ``ok`` | ``bad`` | ``info`` (a badge in the viewer).
Mark = tuple[str, str]
VERDICTS = ("ACCEPTED", "REJECTED")
#: Keys that name a stage's pass (its title, not its body).
STAGE_TITLE_KEYS = ("stage", "pass", "round", "revision", "attempt")


@dataclass(frozen=True)
class TracePass:
    """One block: title and marks, ``body`` as a tree, ``given`` (what the pass was given) folded."""

    title: str
    body: Any = None
    given: Any = None
    marks: tuple[Mark, ...] = ()


@dataclass(frozen=True)
class TraceSection:
    """A method's trace as shown: ``passes`` in order, ``rest`` as a tree, ``title``/``title_marks`` on the
    summary, ``marks`` in the row's header, ``tags`` for the run's trace filter."""

    passes: tuple[TracePass, ...] = ()
    rest: dict[str, Any] = field(default_factory=dict)
    title: str = "method trace"
    title_marks: tuple[Mark, ...] = ()
    marks: tuple[Mark, ...] = ()
    tags: tuple[str, ...] = ()


def verdict(v: Any) -> dict[str, Any] | None:
    """``{status, breakpoint}`` of an object whose ``status`` is ACCEPTED or REJECTED, else None."""
    if isinstance(v, dict) and isinstance(v.get("status"), str) and v["status"].upper() in VERDICTS:
        return {"status": v["status"].upper(), "breakpoint": v.get("breakpoint")}
    return None


def nested_verdicts(v: Any) -> list[dict[str, Any]]:
    """Every verdict object inside ``v``, wherever nested, in order."""
    if isinstance(v, dict):
        own = verdict(v)
        return ([own] if own else []) + [x for y in v.values() for x in nested_verdicts(y)]
    return [x for y in v for x in nested_verdicts(y)] if isinstance(v, list) else []


def verdict_mark(v: dict[str, Any]) -> Mark:
    """ACCEPTED (ok), or REJECTED with the stage it sends the chain back to (bad)."""
    if v["status"] == "ACCEPTED":
        return ("ACCEPTED", "ok")
    bp = v.get("breakpoint")
    return ("REJECTED" + (f" → stage {bp}" if bp is not None else ""), "bad")


def stage_pass(item: Any) -> TracePass:
    """A stage pass titled by stage and pass (retries numbered), marked by verdicts and error, ``inputs`` folded."""
    if not isinstance(item, dict):
        return TracePass("step", body=item)
    bits = [str(item["stage"]) if "stage" in item else "step"]
    bits += [
        f"{k} {item[k]}"
        for k in STAGE_TITLE_KEYS[1:]
        if item.get(k) is not None and not (k == "attempt" and item[k] == 1)
    ]
    marks = [verdict_mark(v) for v in nested_verdicts(item)] + ([("error", "bad")] if item.get("error") else [])
    body = {k: x for k, x in item.items() if k not in STAGE_TITLE_KEYS and x is not None and k != "inputs"}
    return TracePass(" · ".join(bits), body=body or None, given=item.get("inputs") or None, marks=tuple(marks))


def staged_section(
    trace: dict[str, Any], verdicts: Sequence[Any], accepted: bool | None, stages_key: str = "stages"
) -> TraceSection:
    """A chain of stages with a checker: a block per ``trace[stages_key]`` item, verdicts on the summary, tags
    ``revised`` and ``accepted``/``not-accepted`` (``accepted``, else the last verdict); none without verdicts."""
    stages = trace.get(stages_key)
    passes = tuple(stage_pass(s) for s in stages) if isinstance(stages, list) else ()
    rest = {k: x for k, x in trace.items() if not (k == stages_key and isinstance(stages, list))}
    vs = [v for v in map(verdict, verdicts) if v is not None]
    tags: list[str] = []
    marks: list[Mark] = []
    if vs:
        tags = ["revised"] if any(v["status"] == "REJECTED" for v in vs) else []
        ok = accepted if accepted is not None else vs[-1]["status"] == "ACCEPTED"
        tags.append("accepted" if ok else "not-accepted")
        marks = [verdict_mark(vs[-1])] + ([] if ok else [("not accepted", "bad")])
    n = len(passes)
    title = "method trace" + (f" ({n} stage pass{'es' if n != 1 else ''})" if n else "")
    return TraceSection(passes, rest, title, tuple(verdict_mark(v) for v in vs), tuple(marks), tuple(tags))
