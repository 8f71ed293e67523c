"""CoDAR, Conflict-Driven Abductive Reasoning (MoCA section 5, appendices C.2-C.3 and D.2), as a
multi-round method on the generic runner, and its ablations (Table 5) as variant runs of the same
chain (``codar__<ablation>``: params ``moca.ablations.<ablation>`` names the stages it runs).

Six role-conditioned stages, one call each, pass structured intermediate representations (strict
JSON objects with fixed keys): observer -> query (-> the retrieval step, not a model call) -> context
-> conflict -> decoder -> checker. The checker's REJECTED names a breakpoint in the paper's stage
numbers (1 observer, 2 query + context, 3 conflict, 4 decoder); the chain re-enters there, keeps the
components before it, and reruns the rest, for at most ``revision_rounds`` rounds. Every stage
answer is read under the answer-format policy of every MoCA method (params ``moca.answer``): a stage
output that does not meet its contract is asked for again ``retries`` times (default 0, as the
paper; same request plus a note, request id ``....retry<k>``), then becomes the instance's error,
unless the decoder has already answered: then its last tuple is the answer (a checker verdict that
cannot be read never voids a valid tuple; the trace and the run summary count it). The decoder's four
answer fields are read one by one, as the direct answer's. Decisions where the paper is silent:
docs/codar-prompts.md.

The chain's state is a pure function of the exchanges (methods must be deterministic given the
responses, so a killed run resumes from the request cache): each step continues the state built from
the same earlier exchanges, or replays them from the start when they differ.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from string import Template
from typing import Any, ClassVar

from socialbench.core.backend import Decoding, Message, ModelSpec, Request
from socialbench.core.benchmarks import Benchmark, Exchange, Final, Method
from socialbench.core.errors import ConfigError, SocialbenchError
from socialbench.core.traces import TraceSection, staged_section
from socialbench.moca.eval.prompts import (
    ANSWER_KEYS,
    MediaUnavailable,
    answer_choices,
    answer_format,
    answer_schema,
    answer_summary,
    media_error_answer,
    options_block,
    slot_maps,
    visual_description,
    visual_parts,
)
from socialbench.moca.eval.retrieval import ROUTES, Retrieval, RetrievalError, make_retriever, retrieve
from socialbench.moca.schema.methods import (  # noqa: F401 (the chain's settings and stages, re-exported)
    BREAKPOINT_STAGES,
    CHAIN_KEYS,
    CODAR,
    DECODER_KEYS,
    DECODINGS,
    INVALID_TUPLE,
    SETTINGS,
    STAGES,
    TABLE_KEYS,
    Variant,
    codar_settings,
    stage_variant,
)

ACCEPTED, REJECTED = "ACCEPTED", "REJECTED"
#: Placeholders filled from the instance (the rest come from earlier stages; those go into the trace).
INSTANCE_PLACEHOLDERS = frozenset(
    {
        "modality_name",
        "text",
        "visual",
        "audio",
        "scenario",
        "scenario_question",
        "mechanism_options",
        "label_options",
        "subject_slot_ids",
        "target_slot_ids",
        "subject_slots",
        "target_slots",
    }
)


# ---- parsing each stage's JSON (pure) -----------------------------------------------------------
class StageOutputError(ValueError):
    """A stage's answer that does not meet its contract (the reason, in one line)."""


def _text(obj: dict[str, Any], key: str, empty_ok: bool = False) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise StageOutputError(f"{key}: expected a string, got {type(value).__name__}")
    if not empty_ok and not value.strip():
        raise StageOutputError(f"{key}: empty")
    return value


def _query(obj: dict[str, Any]) -> None:
    entities, questions = obj["entities"], obj["questions"]
    if not isinstance(entities, list):
        raise StageOutputError(f"entities: expected a list, got {type(entities).__name__}")
    for i, e in enumerate(entities):
        if not isinstance(e, dict) or set(e) != {"name", "route"}:
            raise StageOutputError(f"entities[{i}]: expected an object with exactly name and route")
        if not isinstance(e["name"], str) or not e["name"].strip():
            raise StageOutputError(f"entities[{i}].name: expected a non-empty string")
        if e["route"] not in ROUTES:
            raise StageOutputError(f"entities[{i}].route: {e['route']!r} is not one of {', '.join(ROUTES)}")
    if not isinstance(questions, list) or not 2 <= len(questions) <= 3:
        raise StageOutputError("questions: expected a list of two or three questions")
    for i, q in enumerate(questions):
        if not isinstance(q, str) or not q.strip():
            raise StageOutputError(f"questions[{i}]: expected a non-empty string")


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
    """A stage's answer and what the answer-format policy did to it (``fence_removed``,
    ``ignored_keys``). The answer is one strict JSON object with the stage's keys and well-typed values.
    ``code_fence`` and ``extra_keys`` are params ``moca.answer``, as for the direct answer: ``tolerate``
    removes one enclosing fence; keys beyond the stage's are dropped (``ignore``) or a format failure
    (``invalid``). The decoder's four answer fields are read field by field, as the direct answer's: a
    missing or ill-typed one is kept as it is (None when missing) and, like a value outside the
    candidate sets, resolved as invalid later (a scenario-invalid tuple, not a format error)."""
    from socialbench.moca.eval.parsing import unfence

    if text is None:
        raise StageOutputError("no text in the response")
    body = text.strip()
    fence_removed = code_fence == "tolerate" and unfence(body) is not None
    if fence_removed:
        body = unfence(body).strip()
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        fenced = (
            " (a code fence around the answer; params moca.answer.code_fence: tolerate accepts one)"
            if (code_fence == "strict" and unfence(body) is not None)
            else ""
        )
        raise StageOutputError(f"not JSON ({exc.msg} at char {exc.pos}){fenced}") from None
    if not isinstance(obj, dict):
        raise StageOutputError(f"a JSON {type(obj).__name__}, not an object")
    keys = variant.keys(stage)
    per_field = ANSWER_KEYS if stage == "decoder" else ()
    missing = [k for k in keys if k not in obj and k not in per_field]
    extra = sorted(set(obj) - set(keys))
    if missing or (extra and extra_keys == "invalid"):
        problems = [f"missing key(s) {missing}"] if missing else []
        if extra:
            problems.append(
                f"unexpected key(s) {extra}"
                + (" (params moca.answer.extra_keys: invalid)" if extra_keys == "invalid" else "")
            )
        raise StageOutputError("; ".join(problems))
    notes = {"fence_removed": fence_removed, "ignored_keys": extra}
    if stage == "query":
        _query(obj)
        return {
            "entities": [{"name": e["name"], "route": e["route"]} for e in obj["entities"]],
            "questions": list(obj["questions"]),
        }, notes
    if stage == "checker":
        return _checker(obj, variant.breakpoints), notes
    for k in keys:
        if k not in per_field:
            _text(obj, k)
    return {k: obj.get(k) for k in keys}, notes


def parse_stage(
    stage: str, text: str | None, variant: Variant = CODAR, code_fence: str = "strict", extra_keys: str = "ignore"
) -> dict[str, Any]:
    """A stage's answer (:func:`read_stage` without the notes)."""
    return read_stage(stage, text, variant, code_fence, extra_keys)[0]


# ---- stage schemas ----------------------------------------------------------------------------
def _object(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


def stage_schema(stage: str, variant: Variant, direct_schema: dict[str, Any], constrained: bool) -> dict[str, Any]:
    """A stage's JSON schema: its keys, all required, and their types. With ``constrained`` the
    allowed values are enums too: the decoder's four fields as in the direct prompt's answer schema
    (``direct_schema``), the chain's own route, status and breakpoint."""
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


def _render(text: str, values: dict[str, str], where: str) -> str:
    try:
        return Template(text).substitute(values)
    except KeyError as exc:
        raise ConfigError(f"template {where}: placeholder ${exc.args[0]} has no value at this stage") from exc
    except ValueError as exc:
        raise ConfigError(f"template {where}: {exc} (write a literal dollar sign as $$)") from exc


def compact(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


# ---- settings -------------------------------------------------------------------------------------
def parse_settings(name: str, settings: dict[str, Any], *, create_retriever: bool = True) -> dict[str, Any]:
    """The settings of run ``name``, checked (:func:`socialbench.moca.schema.methods.codar_settings`), and
    Step 2's retriever (``retriever``; ``retrieval_k`` passages per query). ``create_retriever`` False:
    checked only (params load), no retriever made."""
    opts = codar_settings(name, settings)
    retrieval = opts.pop("retrieval")
    # made once, before any call: a missing key or corpus stops the run here
    retriever = make_retriever(retrieval) if create_retriever and "query" in opts["variant"].stages else None
    return {**opts, "retriever": retriever, "retrieval_k": retrieval.k}


# ---- the method -------------------------------------------------------------------------------------
class CodarMethod(Method):
    """The chain. A Table 5 ablation is a variant run ``codar__<ablation>``: its settings name the
    stages it runs (``stages``); it reads its own template files from ``templates/codar/<ablation>/``
    and the others from ``templates/codar/`` (``Benchmark.template``)."""

    templates: ClassVar[tuple[str, ...]] = CODAR.templates()

    def __init__(
        self,
        benchmark: Benchmark,
        spec: ModelSpec,
        seed: int,
        settings: dict[str, Any] | None = None,
        *,
        run: str | None = None,
    ):
        super().__init__(benchmark, spec, seed, settings, run=run)
        opts = parse_settings(self.name, self.settings)
        self.variant: Variant = opts["variant"]
        self.revision_rounds: int = opts["revision_rounds"]
        self.invalid_tuple: str = opts["invalid_tuple"]
        self.max_tokens: int = opts["max_tokens"] or spec.max_tokens
        self.decoding: str = opts["decoding"]
        self.code_fence: str = opts["code_fence"]
        self.extra_keys: str = opts["extra_keys"]
        self.retries: int = opts["retries"]
        self.retriever = opts["retriever"]
        self.retrieval_k: int = opts["retrieval_k"]
        self._images: dict[str, list[Any]] = {}
        self._chains: dict[str, Chain] = {}
        self._retrievals: dict[tuple[str, int, str], Retrieval] = {}

    # ---- the template files of its stages ------------------------------------------------------
    @classmethod
    def template_files(cls, settings: dict[str, Any]) -> tuple[str, ...]:
        """The files of the stages the run executes (its prompt hash covers them; the options'
        criteria and boundary rules are the taxonomy's, in its own hash)."""
        return stage_variant(cls.name, settings).templates()

    # ---- the runner's interface --------------------------------------------------------------
    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        iid = instance["id"]
        if not rounds:
            chain = self._chains[iid] = Chain(self, instance)
            try:
                return [chain.request()]
            except MediaUnavailable as exc:
                del self._chains[iid]
                # Media that cannot be shown: answered without a call, scored invalid (N never shrinks).
                return media_error_answer(instance, exc.message, self.seed)
        # The chain is a pure function of the exchanges: continue the one built from the rounds so
        # far when they are the same calls (the runner's normal course), else replay from the start.
        chain = self._chains.get(iid)
        if (
            chain is None
            or chain.fed > len(rounds)
            or chain.keys != [ex.key for exs in rounds[: chain.fed] for ex in exs]
        ):
            chain = Chain(self, instance)
        for k in range(chain.fed, len(rounds)):
            exchanges = rounds[k]
            if len(exchanges) != 1:
                raise SocialbenchError(
                    f"method {self.name}: instance {iid}: round {k + 1} has"
                    f" {len(exchanges)} exchanges, a CoDAR round has one"
                )
            out = chain.feed(exchanges[0])
            if out is not None:
                self._chains.pop(iid, None)
                if k != len(rounds) - 1:
                    raise SocialbenchError(
                        f"method {self.name}: instance {iid}: the chain ended at round {k + 1} of {len(rounds)}"
                    )
                return out
        self._chains[iid] = chain
        return [chain.request()]

    trace_filter: ClassVar[str] = "checker"

    @classmethod
    def trace_section(cls, trace: dict[str, Any]) -> TraceSection:
        """The viewer's section of a chain's trace: a block per stage pass, the verdicts of its own
        ``verdicts`` list (the checker's and the rule's), and the checker filter (``not_accepted`` set,
        else ``accepted``, decides accepted or not)."""
        accepted = False if trace.get("not_accepted") else trace.get("accepted")
        return staged_section(trace, trace.get("verdicts") or [], accepted if isinstance(accepted, bool) else None)

    def summary(self, finals: list[Final]) -> dict[str, float]:
        """The answer-format numbers every MoCA method reports (``answer_summary``), and the chain's:
        revisions, acceptance, the scenario-invalid tuples the rule sent back to the decoder, and the
        instances whose answer is the decoder's last tuple because a later stage failed
        (``last_tuple_kept``; ``checker_unparsable``: the checker's verdict could not be read)."""
        n = len(finals)
        traces = [f.trace or {} for f in finals]
        out: dict[str, float] = answer_summary(finals)
        if self.variant.checks:
            out["invalid_tuple_rejections"] = float(
                sum(1 for t in traces for v in t.get("verdicts", []) if v.get("by") == "rule")
            )
            out["revisions_mean"] = round(sum(t.get("revisions", 0) for t in traces) / n, 4) if n else 0.0
            out["acceptance_rate"] = round(sum(t.get("accepted") is True for t in traces) / n, 4) if n else 0.0
            out["not_accepted"] = float(sum(t.get("accepted") is False for t in traces))
        return out

    # ---- helpers the chain uses ----------------------------------------------------------------
    def images(self, instance: dict[str, Any]) -> list[Any]:
        iid = instance["id"]
        if iid not in self._images:
            self._images[iid] = visual_parts(instance, self.spec)
        return self._images[iid]

    def retrieval(self, iid: str, pass_no: int, social_query: dict[str, Any]) -> Retrieval:
        # Memoised: the chain is replayed on every step, the retriever must run once per query (and
        # through the request cache: a resumed run repeats no search).
        key = (iid, pass_no, compact(social_query))
        if key not in self._retrievals:
            self._retrievals[key] = retrieve(social_query, self.retriever, self.retrieval_k, self.cache)
        return self._retrievals[key]


class Chain:
    """The state of one instance's chain, rebuilt by feeding it the exchanges so far."""

    def __init__(self, method: CodarMethod, instance: dict[str, Any]):
        self.m = method
        self.v = method.variant
        self.inst = instance
        self.tax = method.benchmark.taxonomy
        self.maps = slot_maps(instance, method.seed)
        self.todo: list[str] = list(self.v.stages)
        self.attempt = 1
        self.retry_reason: str | None = None
        self.pass_no = 0
        self.outputs: dict[str, dict[str, Any]] = {}
        self.exchanges: dict[str, Exchange] = {}
        self.revision: dict[str, str] = {}
        self.last_check: dict[str, Any] | None = None
        self.retrieved: Retrieval | None = None
        self.keys: list[str] = []  # cache keys of the exchanges fed so far, in order
        # what the answer-format policy did: repairs that the answer depends on, keys dropped, and
        # the scenario-invalid tuples the rule sent back (to tell whether the final one differs)
        self.repairs: set[str] = set()
        self.ignored_keys: set[str] = set()
        self.rejected_tuples: list[dict[str, Any]] = []
        self.retry_baselines: list[dict[str, Any]] = []
        self.trace: dict[str, Any] = {
            "method": method.name,
            "stages_run": list(self.v.stages),
            "revision_rounds": method.revision_rounds,
            "decoding": method.decoding,
            "invalid_tuple": method.invalid_tuple if self.v.checks else None,
            "stages": [],
            "verdicts": [],
            "retrieval": [],
            "retries": 0,
            "revisions": 0,
            "accepted": None,
        }

    # ---- what the next request is ------------------------------------------------------------
    @property
    def fed(self) -> int:
        return len(self.keys)

    @property
    def stage(self) -> str:
        return self.todo[0]

    def request_id(self) -> str:
        rid = f"{self.inst['id']}/{self.m.name}/{self.stage}"
        if self.pass_no:
            rid += f".rev{self.pass_no}"
        if self.attempt > 1:
            rid += f".retry{self.attempt - 1}"
        return rid

    def values(self) -> dict[str, str]:
        inst, s = self.inst, self.inst["scenario"]
        video = inst["modality"] == "video_text"
        values = {
            "modality_name": "video" if video else "image",
            "text": inst["text"],
            "visual": visual_description(self.m.images(inst), video),
            "audio": inst.get("transcript") or "(none)",
            "scenario": s,
            "scenario_question": (self.tax.questions or {}).get(s, ""),
            "mechanism_options": options_block(self.tax.mechanisms[s]),
            "label_options": options_block(self.tax.labels[s]),
            "subject_slot_ids": ", ".join(self.maps["subject"]),
            "target_slot_ids": ", ".join(self.maps["target"]),
            "subject_slots": "\n".join(f"{k}: {v}" for k, v in self.maps["subject"].items()),
            "target_slots": "\n".join(f"{k}: {v}" for k, v in self.maps["target"].items()),
        }
        for stage, out in self.outputs.items():
            if stage == "query":
                values["social_query"] = compact(out)
            elif stage != "checker":
                # the decoder's answer fields are read one by one: one may be missing or not a string
                values.update({k: v if isinstance(v, str) else "" if v is None else compact(v) for k, v in out.items()})
        if self.retrieved is not None:
            values["retrieved_evidence"] = self.retrieved.rendered()
        values["revision"] = self.revision.get(self.stage, "")
        return values

    def _file(self, name: str) -> tuple[str, str]:
        return self.m.template(name), f"{self.m.benchmark.template_folder(self.m.name, name)}/{name}"

    def _rendered(self, name: str, values: dict[str, str]) -> str:
        text, where = self._file(name)
        return _render(text, values, where)

    def stage_inputs(self) -> dict[str, str]:
        """What this stage got from earlier stages (and its revision block): kept in the trace."""
        text, _ = self._file(f"{self.stage}.user.txt")
        values = self.values()
        return {
            k: values[k]
            for k in Template(text).get_identifiers()
            if k not in INSTANCE_PLACEHOLDERS and k in values and values[k]
        }

    def request(self) -> Request:
        stage, values = self.stage, self.values()
        system = self._rendered(f"{stage}.system.txt", values).rstrip()
        user = self._rendered(f"{stage}.user.txt", values).rstrip()
        if self.attempt > 1:
            user += "\n" + self._rendered("retry.txt", {"reason": self.retry_reason or ""}).rstrip()
        content = (*self.m.images(self.inst), user) if stage == "observer" else (user,)
        # ``keys``: the answer's keys in order, the structured view for backends that read no prose
        task: dict[str, Any] = {
            "benchmark": "moca",
            "method": self.m.name,
            "stage": stage,
            "keys": list(self.v.keys(stage)),
        }
        if stage == "decoder":
            task.update(answer_choices(self.inst, self.tax, self.maps))
        if stage == "checker":
            task["breakpoints"] = list(self.v.breakpoints)
        if self.m.decoding == "json_object":
            decoding = Decoding(max_tokens=self.m.max_tokens, temperature=0.0, json_object=True)
        else:
            direct = answer_schema(self.inst["scenario"], self.tax, self.maps)
            schema = stage_schema(stage, self.v, direct, constrained=self.m.decoding == "constrained")
            decoding = Decoding(max_tokens=self.m.max_tokens, temperature=0.0, json_schema=schema)
        return Request(
            request_id=self.request_id(),
            messages=(Message("system", (system,)), Message("user", tuple(content))),
            task=task,
            decoding=decoding,
        )

    # ---- taking an answer --------------------------------------------------------------------
    def feed(self, ex: Exchange) -> Final | None:
        """Take the answer to the current request; the Final answer when the chain ends."""
        stage = self.stage
        expected = self.request_id()
        if ex.request.request_id != expected:
            raise SocialbenchError(
                f"method {self.m.name}: replay out of step: expected {expected}, got {ex.request.request_id}"
            )
        self.keys.append(ex.key)
        resp = ex.response
        entry: dict[str, Any] = {
            "stage": stage,
            "pass": self.pass_no,
            "attempt": self.attempt,
            "request_id": expected,
            "inputs": self.stage_inputs(),
            "output": None,
            "error": None,
        }
        self.trace["stages"].append(entry)
        if resp.error:
            entry["error"] = f"call failed: {resp.error}"
            return self.fail(stage, entry["error"], ex)
        try:
            parsed, notes = read_stage(stage, resp.text, self.v, self.m.code_fence, self.m.extra_keys)
        except StageOutputError as exc:
            reason = str(exc) + (" (the answer was cut at max_tokens)" if resp.truncated else "")
            entry["error"] = reason
            if self.attempt <= self.m.retries:
                self.attempt, self.retry_reason = self.attempt + 1, reason
                self.trace["retries"] += 1
                return None
            tried = self.attempt - 1
            after = f" after {tried} {'retry' if tried == 1 else 'retries'}" if tried else ""
            return self.fail(stage, f"unparsable{after}: {reason}", ex)
        entry["output"] = parsed
        if self.attempt > 1:
            # without the retry the instance would have failed, or (once the decoder has answered)
            # kept the tuple it had then: the retry changed the answer only if the final one differs
            if "decoder" in self.exchanges:
                self.retry_baselines.append(self.resolve()[0])
            else:
                self.repairs.add("retry")
        if notes["fence_removed"]:
            self.repairs.add("code_fence")
        if notes["ignored_keys"]:
            entry["ignored_keys"] = notes["ignored_keys"]
            self.ignored_keys.update(f"{stage}.{k}" for k in notes["ignored_keys"])
        self.attempt, self.retry_reason = 1, None
        self.outputs[stage], self.exchanges[stage] = parsed, ex
        self.todo.pop(0)
        if stage == "query":
            try:
                self.retrieved = self.m.retrieval(self.inst["id"], self.pass_no, parsed)
            except RetrievalError as exc:
                entry["error"] = f"retrieval failed: {exc}"
                return self.fail(stage, entry["error"], ex)
            self.trace["retrieval"].append({"pass": self.pass_no, **self.retrieved.as_trace()})
        elif stage == "decoder":
            fields, problems = self.resolve()
            if problems and self.v.checks and self.m.invalid_tuple == "rule":
                self.rejected_tuples.append(fields)
                # A scenario-invalid tuple returns to Stage 4 (C.3); that needs no model to see.
                refine = self._rendered(
                    "invalid_tuple.txt", {"problems": "; ".join(f"{k}: {v}" for k, v in problems.items())}
                ).strip()
                return self.rejected({"status": REJECTED, "breakpoint": 4, "refine": refine, "by": "rule"})
        elif stage == "checker":
            if parsed["status"] == ACCEPTED:
                self.trace["verdicts"].append({"pass": self.pass_no, **parsed, "by": "checker"})
                return self.finish(accepted=True)
            out = self.rejected({**parsed, "by": "checker"})
            self.last_check = parsed
            return out
        if not self.todo:
            return self.finish(accepted=None)  # no checker in this variant
        return None

    def rejected(self, verdict: dict[str, Any]) -> Final | None:
        self.trace["verdicts"].append({"pass": self.pass_no, **verdict})
        if self.pass_no >= self.m.revision_rounds:
            return self.finish(accepted=False)
        bp = verdict["breakpoint"]
        self.pass_no += 1
        self.trace["revisions"] += 1
        self.todo = self.v.rerun_from(bp)
        self.revision = {}
        for s in BREAKPOINT_STAGES[bp]:
            if s in self.v.stages:
                self.revision[s] = self._rendered(
                    "revision.txt", {"refine": verdict["refine"], "previous": compact(self.outputs[s])}
                ).rstrip()
        previous = verdict if verdict["by"] == "checker" else self.last_check
        if previous is not None:
            prev = {k: previous[k] for k in CHAIN_KEYS["checker"]}
            self.revision["checker"] = self._rendered("previous_check.txt", {"previous": compact(prev)}).rstrip()
        return None

    # ---- the answer ----------------------------------------------------------------------------
    def resolve(self) -> tuple[dict[str, Any], dict[str, str]]:
        """The decoder's four fields resolved as the direct answer's are (normalized names, slot ids
        mapped to option text), and the problems of those that are not valid."""
        from socialbench.moca.eval.parsing import parse_answer

        out = self.outputs["decoder"]
        s = self.inst["scenario"]
        fields, problems, _ = parse_answer(
            compact({k: out[k] for k in ANSWER_KEYS if out.get(k) is not None}),
            self.tax.mechanism_names(s),
            self.tax.label_names(s),
            self.maps,
        )
        return fields, problems

    def _inputs(self) -> list[dict[str, Any]]:
        ex = self.exchanges.get("observer")
        return [{"sha256": p.sha256, "timestamp": p.timestamp} for p in ex.request.images()] if ex else []

    def finish(self, accepted: bool | None) -> Final:
        ex = self.exchanges["decoder"]
        fields, problems = self.resolve()
        self.trace.update(accepted=accepted, final_pass=self.pass_no)
        if self.rejected_tuples and fields != self.rejected_tuples[0]:
            self.repairs.add("invalid_tuple")
        if any(fields != b for b in self.retry_baselines):
            self.repairs.add("retry")
        if accepted is False:
            self.trace["not_accepted"] = (
                f"no ACCEPTED within {self.m.revision_rounds} revision round(s): the output is the last decoder answer"
            )
        return Final(
            fields={
                "raw": ex.response.text,
                **fields,
                "field_errors": problems,
                "slots": self.maps,
                "request_key": ex.key,
                "inputs": self._inputs(),
                "finish_reason": ex.response.finish_reason,
                "format": answer_format(
                    self.trace["retries"],
                    self.repairs,
                    self.ignored_keys,
                    (self.trace.get("last_tuple_kept") or {}).get("stage"),
                ),
            },
            error=None,
            trace=self.trace,
        )

    def fail(self, stage: str, reason: str, ex: Exchange) -> Final:
        """The instance's error (scored invalid): no answer fields, the failing call's bookkeeping.
        Once the decoder has answered, a later failure (the checker's verdict unreadable, a stage of a
        revision pass failing) does not void its tuple: the last one is the answer, field by field,
        and the trace says why (``last_tuple_kept``)."""
        if "decoder" in self.exchanges:
            self.trace["last_tuple_kept"] = {"stage": stage, "pass": self.pass_no, "reason": reason}
            return self.finish(accepted=None)
        self.trace.update(accepted=None, error_stage=stage, final_pass=self.pass_no)
        return Final(
            fields={
                "raw": ex.response.text if stage == "decoder" else None,
                "slots": self.maps,
                "request_key": ex.key,
                "inputs": self._inputs(),
                "finish_reason": ex.response.finish_reason,
                "format": answer_format(self.trace["retries"], (), self.ignored_keys),
            },
            error=f"{self.m.name} stage {stage}: {reason}",
            trace=self.trace,
        )


METHOD = CodarMethod
