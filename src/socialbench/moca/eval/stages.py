"""CoDAR's stage contracts (MoCA appendices C.2 and D.2): what each stage sees, how its answer is read
and its JSON schema. Pure functions; the chain that runs them is :mod:`socialbench.moca.methods.codar`."""

from __future__ import annotations

import json
import re
from typing import Any

from socialbench.moca.eval.parsing import fence_hint, unfence
from socialbench.moca.eval.retrieval import ROUTES
from socialbench.moca.schema.methods import CODAR, Variant

ACCEPTED, REJECTED = "ACCEPTED", "REJECTED"
#: The decoder's answer fields in the order of its output (D.2 Stage 4: Subject, Target, Mechanism, Label).
ANSWER_ORDER = ("subject", "target", "mechanism", "label")

#: What each stage sees by default: D.2's [Input] lists, by block name.
PAPER_INPUTS: dict[str, frozenset[str]] = {
    "query": frozenset({"perception"}),
    # the retrieved evidence is the social query's answer (5.2: "The resulting evidence is synthesized")
    "context": frozenset({"social_query", "evidence", "perception"}),
    "conflict": frozenset({"perception", "social_context"}),
    "decoder": frozenset({"conflict", "slots"}),
    "checker": frozenset({"perception", "social_context", "the_conflict", "decoded"}),
}
#: What each named extra input (setting ``extra_inputs``) adds, by stage.
EXTRA_SHOWS: dict[str, dict[str, frozenset[str]]] = {
    "text": {s: frozenset({"text"}) for s in ("query", "context", "conflict", "decoder", "checker")},
    "decoder_chain": {"decoder": frozenset({"perception", "social_query", "social_context"})},
    "checker_chain": {"checker": frozenset({"social_query", "evidence", "conflict", "substeps"})},
    "checker_candidates": {"checker": frozenset({"slots", "candidates"})},
}


class StageOutputError(ValueError):
    """A stage's answer that does not meet its contract (the reason, in one line)."""


def _text(obj: dict[str, Any], key: str, empty_ok: bool = False) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise StageOutputError(f"{key}: expected a string, got {type(value).__name__}")
    if not empty_ok and not value.strip():
        raise StageOutputError(f"{key}: empty")
    return value


def normalize_route(value: Any) -> str | None:
    """A route as the chain names it (``Web Search``, ``web-search``: ``web_search``), or None if unknown."""
    if not isinstance(value, str):
        return None
    key = re.sub(r"[\s_\-]+", "_", value.strip().casefold())
    return key if key in ROUTES else None


def _query(obj: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The social query, unknown or missing routes as model_prior, and the entities that fell back."""
    entities, questions = obj["entities"], obj["questions"]
    if not isinstance(entities, list):
        raise StageOutputError(f"entities: expected a list, got {type(entities).__name__}")
    out, unknown = [], []
    for i, e in enumerate(entities):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str) or not e["name"].strip():
            raise StageOutputError(f"entities[{i}]: expected an object with a non-empty name")
        route = normalize_route(e.get("route"))
        if route is None:
            unknown.append({"name": e["name"], "route": e.get("route")})
            route = "model_prior"
        out.append({"name": e["name"], "route": route})
    if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
        raise StageOutputError("questions: expected a list of strings")
    return {"entities": out, "questions": [q for q in questions if q.strip()]}, unknown


def _checker(obj: dict[str, Any], breakpoints: tuple[int, ...]) -> dict[str, Any]:
    status = obj["status"]
    if not isinstance(status, str) or status.strip().upper() not in (ACCEPTED, REJECTED):
        raise StageOutputError(f"status: {status!r} is neither ACCEPTED nor REJECTED")
    status = status.strip().upper()
    bp = obj["breakpoint"]
    refine = _text(obj, "refine", empty_ok=True)
    if status == ACCEPTED:
        if bp is not None:
            raise StageOutputError(f"breakpoint: must be null with ACCEPTED, got {bp!r}")
    else:
        if isinstance(bp, bool) or not isinstance(bp, int) or bp not in breakpoints:
            raise StageOutputError(f"breakpoint: REJECTED needs one of {list(breakpoints)}, got {bp!r}")
        if not refine.strip():
            raise StageOutputError("refine: REJECTED needs a note for the failed stage")
    return {"status": status, "breakpoint": bp, "refine": refine}


def read_stage(
    stage: str, text: str | None, variant: Variant = CODAR, code_fence: str = "strict", extra_keys: str = "ignore"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """An intermediate stage's or the checker's answer and notes on the reading; else a StageOutputError."""
    if stage == "decoder":
        raise ValueError("the decoder's answer is read by moca.eval.parsing.read_answer, as the direct answer")
    if text is None:
        raise StageOutputError("no text in the response")
    body = text.strip()
    fence_removed = code_fence == "tolerate" and unfence(body) is not None
    if fence_removed:
        body = unfence(body).strip()
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        raise StageOutputError(f"not JSON ({exc.msg} at char {exc.pos}){fence_hint(body, code_fence)}") from None
    if not isinstance(obj, dict):
        raise StageOutputError(f"a JSON {type(obj).__name__}, not an object")
    keys = variant.keys(stage)
    missing = [k for k in keys if k not in obj]
    extra = sorted(set(obj) - set(keys))
    if missing or (extra and extra_keys == "invalid"):
        problems = [f"missing key(s) {missing}"] if missing else []
        if extra:
            problems.append(
                f"unexpected key(s) {extra}"
                + (" (params moca.answer.extra_keys: invalid)" if extra_keys == "invalid" else "")
            )
        raise StageOutputError("; ".join(problems))
    notes: dict[str, Any] = {"fence_removed": fence_removed, "ignored_keys": extra, "unknown_routes": []}
    if stage == "query":
        parsed, notes["unknown_routes"] = _query(obj)
        return parsed, notes
    if stage == "checker":
        return _checker(obj, variant.breakpoints), notes
    for k in keys:
        _text(obj, k)
    return {k: obj[k] for k in keys}, notes


def _object(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


def stage_schema(stage: str, variant: Variant, direct_schema: dict[str, Any], constrained: bool) -> dict[str, Any]:
    """A stage's JSON schema, every key required; with ``constrained`` the allowed values as enums too."""
    string = {"type": "string"}

    def enum(values: list[Any], base: dict[str, Any]) -> dict[str, Any]:
        return {**base, "enum": values} if constrained else base

    if stage == "query":
        entity = _object({"name": string, "route": enum(list(ROUTES), string)})
        return _object(
            {
                "entities": {"type": "array", "items": entity},
                "questions": {"type": "array", "items": string, "minItems": 2, "maxItems": 3},
            }
        )
    if stage == "checker":
        return _object(
            {
                "status": enum([ACCEPTED, REJECTED], string),
                "breakpoint": enum([None, *variant.breakpoints], {"type": ["integer", "null"]}),
                "refine": string,
            }
        )
    if stage == "decoder":
        props = direct_schema["properties"] if constrained else {}
        return _object({k: props.get(k, string) for k in variant.decoder_keys})
    return _object({k: string for k in variant.keys(stage)})


def compact(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def shown_value(value: Any) -> str:
    """A field's value in a prompt: a string as it is, nothing for a missing one, else compact JSON."""
    return value if isinstance(value, str) else "" if value is None else compact(value)
