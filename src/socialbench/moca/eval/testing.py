"""TEST DOUBLE (backend ``codar_script``): a deterministic, stage-aware scripted backend for CoDAR and the
direct method, for tests and the demo's pipeline check; not a model. It answers a canned JSON object for
``task["stage"]``, picking answer values from ``task["choices"]`` by a hash of the instance id shifted by
the revision pass (read from the request id, ``<instance>/<method>/<stage>[.rev<k>][.retry1]``).

Options (``models.<name>.options``):
  reject_every   int (default 3; 0 = never): an instance whose id hashes to 0 modulo this is REJECTED
                 at its first checker pass, at a breakpoint of ``task["breakpoints"]`` by the same hash
  breakpoint     force this breakpoint for those rejections (when the checker offers it)
  never_accept   instance ids the checker REJECTS at every pass
  unparsable     request ids answered with text that is not JSON (list the ``.retry1`` id too)
  invalid_values instance ids whose decoder answers an invalid mechanism on its first pass
  route          the retrieval route the query stage gives its (first) entity (default model_prior)
  entities       id (default): the query names "entity of <instance id>"; text: the hashtag or the
                 "(about ...)" person of the request's "Text:" line (with ``route``) and its quoted
                 remark (model_prior), for a retriever over the demo's corpus
  fail_ids       request ids answered with a call error (transient: not in the identity)
  malformed_rate share of calls (0 to 1) answered off their format, by a hash of instance, stage, pass
                 and retry: prose, or a query with routes spelled otherwise and one unknown; an
                 instance's first answering call is picked alike for direct and CoDAR's decoder
  malformed_calls intermediate (default): answering calls keep their format (the decoder drops its
                 substeps); all: they are prose too
Every call is recorded in ``calls`` (request ids, in order)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Any, ClassVar

from socialbench.core.backend import Backend, ModelSpec, Request, Response
from socialbench.core.errors import ConfigError

OPTIONS = (
    "reject_every",
    "breakpoint",
    "never_accept",
    "unparsable",
    "invalid_values",
    "route",
    "entities",
    "fail_ids",
    "malformed_rate",
    "malformed_calls",
)
# the instance text: the prompt's "Text:" line, or (a stage that sees only the explicit perception) the
# on-screen text the scripted caption records
_TEXT_LINE = re.compile(r"^(?:Text: |Explicit perception: .*?On-screen text: )(?P<text>.*)$", re.MULTILINE)
_RID = re.compile(r"^(?P<iid>.+)/(?P<method>[^/]+)/(?P<stage>[a-z_]+)(?:\.rev(?P<rev>\d+))?(?:\.retry(?P<retry>\d+))?$")


def _hash(*parts: str) -> int:
    return int(hashlib.sha256(":".join(parts).encode("utf-8")).hexdigest()[:12], 16)


def parse_request_id(request_id: str) -> tuple[str, int]:
    """(instance id, revision pass) of a request id; pass 0 when the id has no ``.rev<k>``."""
    m = _RID.match(request_id)
    if not m:
        return request_id, 0
    return m["iid"], int(m["rev"] or 0)


def pick_answer(task: dict[str, Any], iid: str, shift: int = 0) -> dict[str, str]:
    """One value per field of ``task["choices"]`` (in answer order), picked by hash."""
    out: dict[str, str] = {}
    for choice in task.get("choices") or []:
        values = [o["value"] for o in choice["options"]]
        if choice.get("distinct_from") in out and len(values) > 1:
            values = [v for v in values if v != out[choice["distinct_from"]]] or values
        out[choice["field"]] = values[(_hash(iid, choice["field"]) + shift) % len(values)]
    return out


def text_entities(prompt: str, route: str) -> list[dict[str, str]]:
    """Option ``entities: text``: what the prompt's "Text:" line names (pure): its hashtag, else the
    person it is "(about ...)", routed ``route``; its quoted remark, routed model_prior."""
    m = _TEXT_LINE.search(prompt)
    text = m["text"] if m else ""
    out = []
    named = re.search(r"#\w+", text) or re.search(r"\(about ([^)]+)\)", text)
    if named:
        out.append({"name": named[1] if named.re.groups else named[0], "route": route})
    quoted = re.search(r'"([^"]+)"', text)
    if quoted:
        out.append({"name": quoted[1], "route": "model_prior"})
    return out


def stage_answer(
    task: dict[str, Any],
    iid: str,
    pass_no: int,
    options: dict[str, Any],
    keys: list[str] | None = None,
    prompt: str = "",
) -> dict[str, Any] | None:
    """The canned answer of one stage (None for an unknown stage). ``keys``: the answering stage's
    keys in order (``task["keys"]``, else the request schema's properties), when known; its free-text
    keys get canned text. ``prompt``: the request's text (option ``entities: text`` reads it)."""
    stage = task.get("stage")
    tag = f"{iid}, pass {pass_no}"
    if stage == "observer":
        m = _TEXT_LINE.search(prompt)
        seen = f" On-screen text: {m['text']}" if m else ""
        return {"explicit_perception": f"Scripted caption of {tag}: a person, a caption, no interpretation.{seen}"}
    if stage == "query" and options.get("entities") == "text":
        entities = text_entities(prompt, options.get("route", "model_prior"))
        if entities:
            return {
                "entities": entities,
                "questions": [
                    f"Which background knowledge explains {entities[0]['name']}?",
                    "Which social norms usually apply in such a setting?",
                ],
            }
    if stage == "query":
        return {
            "entities": [{"name": f"entity of {iid}", "route": options.get("route", "model_prior")}],
            "questions": [f"What is the entity of {tag}?", "Which norms usually apply in such a setting?"],
        }
    if stage == "context":
        context = {
            "fact": f"Scripted fact ({tag}).",
            "connection": "Scripted connection.",
            "social_norm": "Scripted norm.",
            "uncertainty": "Rests on the script only.",
        }
        # the fields asked for: D.2's three, uncertainty only with setting context_uncertainty
        return {k: v for k, v in context.items() if k in keys} if keys else context
    if stage == "conflict":
        return {
            "context_expectation": f"Scripted expectation ({tag}).",
            "explicit_reality": "Scripted reality.",
            "the_conflict": "Scripted cue departs from the scripted expectation.",
            "abductive_question": "Why is this presented?",
        }
    if stage in ("decoder", "answer"):
        values = pick_answer(task, iid, shift=pass_no)
        if stage == "decoder" and pass_no == 0 and iid in options.get("invalid_values", ()):
            values["mechanism"] = "not a mechanism"
        if not keys:
            return values
        return {k: values[k] if k in values else f"Scripted {k.replace('_', ' ')} ({tag})." for k in keys}
    if stage == "checker":
        bps = list(task.get("breakpoints") or [1, 2, 3, 4])
        every = int(options.get("reject_every", 3))
        reject = iid in options.get("never_accept", ()) or (
            pass_no == 0 and every > 0 and _hash(iid, "reject") % every == 0
        )
        if not reject:
            return {"status": "ACCEPTED", "breakpoint": None, "refine": ""}
        forced = options.get("breakpoint")
        bp = forced if forced in bps else bps[_hash(iid, "breakpoint") % len(bps)]
        return {"status": "REJECTED", "breakpoint": bp, "refine": f"Scripted note for stage {bp} ({tag})."}
    return None


_ROUTE_SPELLINGS = ("Web Search", "web search", "web-search", "Model Prior", "HYBRID")


def is_malformed(request_id: str, stage: str, rate: float) -> bool:
    """Whether the double answers this call off its format (option ``malformed_rate``; pure). An
    instance's first answering call (the direct ``answer``, CoDAR's pass-0 ``decoder``) is one draw."""
    if rate <= 0:
        return False
    m = _RID.match(request_id)
    iid, rev, retry = (m["iid"], m["rev"] or "0", m["retry"] or "0") if m else (request_id, "0", "0")
    role = "answer" if stage in ("answer", "decoder") and rev == "0" else stage
    return _hash(iid, role, rev, retry, "malformed") % 10_000 < round(rate * 10_000)


def malformed_answer(stage: str, answer: dict[str, Any], calls: str, iid: str) -> str:
    """The text of a call answered off its format (pure): prose for a stage's structure, a query whose
    routes are spelled otherwise (and one unknown), the decoder without its substeps."""
    if stage in ("answer", "decoder") and calls == "all":
        return "I would say " + ", ".join(f"the {k} is {v}" for k, v in answer.items() if k in ANSWER_FIELDS) + "."
    if stage == "answer":
        return json.dumps(answer, ensure_ascii=False)
    if stage == "decoder":
        return json.dumps({k: v for k, v in answer.items() if k in ANSWER_FIELDS}, ensure_ascii=False)
    if stage == "query" and _hash(iid, "spelling") % 2:
        spelled = [
            {"name": e["name"], "route": _ROUTE_SPELLINGS[_hash(iid, e["name"]) % len(_ROUTE_SPELLINGS)]}
            for e in answer["entities"]
        ]
        return json.dumps({**answer, "entities": [*spelled, {"name": "a search", "route": "google"}]})
    if stage == "observer":
        return "Sure! " + answer["explicit_perception"]
    return "Here is my analysis. " + " ".join(f"{k.replace('_', ' ').capitalize()}: {v}." for k, v in answer.items())


ANSWER_FIELDS = ("mechanism", "label", "subject", "target")


class CodarScriptBackend(Backend):
    """TEST DOUBLE (see the module docstring)."""

    accepts: ClassVar[frozenset[str]] = frozenset({"image", "video", "audio"})
    #: A test double: this module's code is its behaviour, hashed into its identity, so a changed answer
    #: (e.g. what the observer sees) is a cache miss and never an answer of the code before.
    answers_from_code = True

    def __init__(self, spec: ModelSpec, context=None):
        super().__init__(spec, context)
        opts = dict(spec.options or {})
        unknown = sorted(set(opts) - set(OPTIONS))
        if unknown:
            raise ConfigError(
                f"models.{spec.name}.options: unknown key(s) {unknown} for backend codar_script;"
                f" known: {', '.join(OPTIONS)}"
            )
        every = opts.get("reject_every", 3)
        if isinstance(every, bool) or not isinstance(every, int) or every < 0:
            raise ConfigError(f"models.{spec.name}.options.reject_every: expected a whole number >= 0, got {every!r}")
        if opts.get("route", "model_prior") not in ("model_prior", "web_search", "hybrid"):
            raise ConfigError(f"models.{spec.name}.options.route: one of model_prior, web_search, hybrid")
        if opts.get("entities", "id") not in ("id", "text"):
            raise ConfigError(f"models.{spec.name}.options.entities: one of id, text")
        rate = opts.get("malformed_rate", 0)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ConfigError(f"models.{spec.name}.options.malformed_rate: expected a number from 0 to 1, got {rate!r}")
        if opts.get("malformed_calls", "intermediate") not in ("intermediate", "all"):
            raise ConfigError(f"models.{spec.name}.options.malformed_calls: one of intermediate, all")
        for key in ("never_accept", "unparsable", "invalid_values", "fail_ids"):
            if not isinstance(opts.get(key, []), list):
                raise ConfigError(f"models.{spec.name}.options.{key}: expected a list of ids")
        self.options = opts
        self._lock = threading.Lock()
        self.calls: list[str] = []

    def identity(self) -> dict[str, Any]:
        # Injected call failures are transient, like a network error: not part of what it answers.
        script = {k: v for k, v in sorted(self.options.items()) if k != "fail_ids"}
        return {**super().identity(), "script": script}

    def complete(self, request: Request) -> Response:
        with self._lock:
            self.calls.append(request.request_id)
        text_in = "".join(m.text() for m in request.messages)
        n_in = len(text_in) // 4 + 85 * len(request.images())
        if request.request_id in self.options.get("fail_ids", ()):
            return Response(text=None, error="scripted failure", finish_reason="error")
        if request.request_id in self.options.get("unparsable", ()):
            text = "Sure! Here is my analysis, not as JSON."
            return Response(text=text, input_tokens=n_in, output_tokens=len(text) // 4, finish_reason="stop")
        iid, pass_no = parse_request_id(request.request_id)
        keys = list(request.task.get("keys") or ((request.decoding.json_schema or {}).get("properties") or {}))
        answer = stage_answer(request.task, iid, pass_no, self.options, keys, text_in)
        if answer is None:
            return Response(
                text=None,
                error=f"codar_script: no canned answer for stage {request.task.get('stage')!r}",
                finish_reason="error",
            )
        stage = str(request.task.get("stage"))
        if is_malformed(request.request_id, stage, float(self.options.get("malformed_rate", 0))):
            text = malformed_answer(stage, answer, self.options.get("malformed_calls", "intermediate"), iid)
        else:
            text = json.dumps(answer, ensure_ascii=False)
        return Response(text=text, input_tokens=n_in, output_tokens=len(text) // 4 + 1, finish_reason="stop")
