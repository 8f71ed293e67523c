"""CoDAR (MoCA section 5, appendices C.2-C.3 and D.2) as a multi-round method; its Table 5 ablations are
variant runs ``codar__<ablation>``. Six stages, one call each: observer -> query (-> retrieval) -> context
-> conflict -> decoder -> checker, whose REJECTED reruns the chain from a breakpoint for at most
``revision_rounds`` rounds. Decisions where the paper is silent: docs/codar-prompts.md. The chain's state
is a pure function of the exchanges, so a killed run resumes from the request cache."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, ClassVar

from socialbench.core.backend import Decoding, Message, ModelSpec, Request
from socialbench.core.benchmarks import FREE_TEXT, Benchmark, Exchange, Final, Method, Need
from socialbench.core.errors import ConfigError, SocialbenchError
from socialbench.core.run_name import RunName
from socialbench.core.traces import TraceSection, staged_section
from socialbench.moca.eval.parsing import ParsedAnswer, read_answer
from socialbench.moca.eval.prompts import (
    MediaUnavailable,
    Order,
    answer_choices,
    answer_format,
    answer_schema,
    answer_summary,
    media_error_answer,
    option_values,
    render,
    slot_maps,
    visual_description,
    visual_parts,
)
from socialbench.moca.eval.retrieval import Retrieval, RetrievalError, make_retriever, retrieve, unread_query
from socialbench.moca.eval.stages import (
    ACCEPTED,
    ANSWER_ORDER,
    EXTRA_SHOWS,
    PAPER_INPUTS,
    REJECTED,
    StageOutputError,
    compact,
    read_stage,
    shown_value,
    stage_schema,
)
from socialbench.moca.schema.methods import (
    BREAKPOINT_STAGES,
    CHAIN_KEYS,
    CODAR,
    INPUT_BLOCKS,
    INTERMEDIATE_STAGES,
    Variant,
    codar_settings,
    stage_variant,
)
from socialbench.results.numbers import half_up


def parse_settings(name: str, settings: dict[str, Any], *, create_retriever: bool = True) -> dict[str, Any]:
    """The checked settings of run ``name`` and Step 2's retriever (none made with ``create_retriever`` False)."""
    opts = codar_settings(name, settings)
    retrieval = opts.pop("retrieval")
    # made once, before any call: a missing key or corpus stops the run here
    retriever = make_retriever(retrieval) if create_retriever and "query" in opts["variant"].stages else None
    return {**opts, "retriever": retriever, "retrieval_k": retrieval.k}


class CodarMethod(Method):
    """The chain; an ablation run reads its own templates first (``templates/codar/<ablation>/``)."""

    templates: ClassVar[tuple[str, ...]] = CODAR.templates()
    reads: ClassVar[frozenset[str]] = frozenset({"retrieval"})  # Step 2's retriever (params moca.retrieval)

    @classmethod
    def check_settings(cls, run: str, settings: dict[str, Any]) -> dict[str, Any]:
        return codar_settings(run, settings)

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
        # templates held to its stages before any call (for a run asked by name, which check-params misses)
        problems = benchmark.run_template_problems(self.name, self.check_settings(self.name, self.settings))
        if problems:
            raise ConfigError(f"moca.{problems[0]} (run {self.name})")
        opts = parse_settings(self.name, self.settings)
        self.variant: Variant = opts["variant"]
        self.revision_rounds: int = opts["revision_rounds"]
        self.invalid_tuple: str = opts["invalid_tuple"]
        self.max_tokens: int = opts["max_tokens"] or spec.max_tokens
        self.decoding: str = opts["decoding"]
        self.extra_inputs: frozenset[str] = opts["extra_inputs"]
        self.prompt_additions: frozenset[str] = opts["prompt_additions"]
        self.code_fence: str = opts["code_fence"]
        self.extra_keys: str = opts["extra_keys"]
        self.retries: int = opts["retries"]
        self.retriever = opts["retriever"]
        self.retrieval_k: int = opts["retrieval_k"]
        self._images: dict[str, list[Any]] = {}
        self._chains: dict[str, Chain] = {}
        self._retrievals: dict[tuple[str, int, str], Retrieval] = {}

    @classmethod
    def needs(cls, settings: dict[str, Any]) -> tuple[Need, ...]:
        """Its stages write free text (D.2): a choices-only model cannot follow the chain."""
        return (Need((FREE_TEXT,), "CoDAR's free-text stages"),)

    @classmethod
    def template_files(cls, settings: dict[str, Any]) -> tuple[str, ...]:
        """The files of the stages the run executes (its prompt hash covers them)."""
        return stage_variant(cls.name, settings).templates()

    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        iid = instance["id"]
        if not rounds:
            chain = self._chains[iid] = Chain(self, instance)
            try:
                return [chain.request()]
            except MediaUnavailable as exc:
                del self._chains[iid]
                # Media that cannot be shown: answered without a call, scored invalid (N never shrinks).
                order = Order.of(self.settings)
                tax = self.benchmark.taxonomy
                return media_error_answer(instance, exc.message, self.seed, order.index, order.record(instance, tax))
        # continue the chain built from the same earlier exchanges, else replay from the start
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
                why = f"round {k + 1} has {len(exchanges)} exchanges, a CoDAR round has one"
                raise SocialbenchError(f"method {self.name}: instance {iid}: {why}")
            out = chain.feed(exchanges[0])
            if out is not None:
                self._chains.pop(iid, None)
                if k != len(rounds) - 1:
                    why = f"the chain ended at round {k + 1} of {len(rounds)}"
                    raise SocialbenchError(f"method {self.name}: instance {iid}: {why}")
                return out
        self._chains[iid] = chain
        return [chain.request()]

    def call_bounds(self, instance: dict[str, Any], first: Sequence[Request]) -> tuple[int, int]:
        """Fewest: each stage once; most: ``Variant.rounds_at_most`` (a failed stage ends it earlier)."""
        return len(self.variant.stages), self.variant.rounds_at_most(self.revision_rounds, self.retries)

    trace_filter: ClassVar[str] = "checker"

    @classmethod
    def trace_section(cls, trace: dict[str, Any]) -> TraceSection:
        """The viewer's section of a chain's trace: a block per stage pass, its verdicts, accepted or not."""
        accepted = False if trace.get("not_accepted") else trace.get("accepted")
        return staged_section(trace, trace.get("verdicts") or [], accepted if isinstance(accepted, bool) else None)

    def summary(self, finals: list[Final]) -> dict[str, float]:
        """``answer_summary``'s numbers and the chain's: revisions, acceptance, text stages, fallbacks, substeps."""
        n = len(finals)
        traces = [f.trace or {} for f in finals]
        out: dict[str, float] = answer_summary(finals)
        out["unstructured_outputs"] = float(sum(len(t.get("unstructured", [])) for t in traces))
        out["instances_with_unstructured"] = float(sum(bool(t.get("unstructured")) for t in traces))
        out["unknown_routes"] = float(sum(len(t.get("unknown_routes", [])) for t in traces))
        if self.variant.substeps:
            out["substeps_missing"] = float(sum(len(t.get("substeps_missing", [])) for t in traces))
        if self.variant.checks:
            out["invalid_tuple_rejections"] = float(
                sum(1 for t in traces for v in t.get("verdicts", []) if v.get("by") == "rule")
            )
            revisions = Fraction(sum(t.get("revisions", 0) for t in traces))
            accepted = Fraction(sum(t.get("accepted") is True for t in traces))
            out["revisions_mean"] = half_up(revisions / n, 4) if n else 0.0
            out["acceptance_rate"] = half_up(accepted / n, 4) if n else 0.0
            out["not_accepted"] = float(sum(t.get("accepted") is False for t in traces))
        return out

    def images(self, instance: dict[str, Any]) -> list[Any]:
        if instance["id"] not in self._images:
            self._images[instance["id"]] = visual_parts(instance, self.spec)
        return self._images[instance["id"]]

    def retrieval(self, iid: str, pass_no: int, social_query: dict[str, Any]) -> Retrieval:
        # memoised: the chain is replayed on every step, the retriever runs once per query
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
        # an order run's option order (params moca.robustness); its requests carry the shown order's run
        self.order = Order.of(method.settings)
        self.asked_as = self.order.asked_as(method.name, instance, self.tax)
        self.maps = slot_maps(instance, method.seed, self.order.index)
        self.todo: list[str] = list(self.v.stages)
        self.attempt = 1
        self.retry_reason: str | None = None
        self.pass_no = 0
        # a stage's parsed answer, or the text of an unstructured intermediate one
        self.outputs: dict[str, dict[str, Any] | str] = {}
        self.answer: ParsedAnswer | None = None  # the decoder's last answer, read as the direct answer
        self.exchanges: dict[str, Exchange] = {}
        self.revision: dict[str, str] = {}
        self.last_check: dict[str, Any] | None = None
        self.retrieved: Retrieval | None = None
        self.keys: list[str] = []  # cache keys of the exchanges fed so far, in order
        # what the answer-format policy did (repairs, keys dropped, tuples the rule sent back)
        self.repairs: set[str] = set()
        self.ignored_keys: set[str] = set()
        self.rejected_tuples: list[dict[str, Any]] = []
        self.retry_baselines: list[dict[str, Any]] = []
        self.trace: dict[str, Any] = {
            "method": method.name,
            "stages_run": list(self.v.stages),
            "revision_rounds": method.revision_rounds,
            "decoding": method.decoding,
            "extra_inputs": sorted(method.extra_inputs),
            "prompt_additions": sorted(method.prompt_additions),
            "context_uncertainty": self.v.uncertainty,
            "invalid_tuple": method.invalid_tuple if self.v.checks else None,
            **{
                k: [] for k in ("stages", "verdicts", "retrieval", "unstructured", "unknown_routes", "substeps_missing")
            },
            "retries": 0,
            "revisions": 0,
            "accepted": None,
        }

    @property
    def fed(self) -> int:
        return len(self.keys)

    @property
    def stage(self) -> str:
        return self.todo[0]

    def request_id(self) -> str:
        rev = f".rev{self.pass_no}" if self.pass_no else ""
        retry = f".retry{self.attempt - 1}" if self.attempt > 1 else ""
        return f"{self.inst['id']}/{self.asked_as}/{self.stage}{rev}{retry}"

    def shown(self, stage: str) -> frozenset[str]:
        """The input blocks ``stage`` sees: D.2's [Input] list and the run's ``extra_inputs``."""
        out = set(PAPER_INPUTS.get(stage, ()))
        if stage == "decoder" and "conflict" not in self.v.stages:
            out |= {"perception", "social_context"}
        for name in self.m.extra_inputs:
            out |= EXTRA_SHOWS[name].get(stage, frozenset())
        if "conflict" in out:
            out.discard("the_conflict")  # the whole analysis holds it
        return frozenset(out)

    def shown_output(self, stage: str) -> str:
        """A stage's output as a later prompt shows it whole: compact JSON, or the text it was given as."""
        out = self.outputs[stage]
        return out if isinstance(out, str) else compact(out)

    def _sections(self, stage: str) -> str:
        """A representation of named sections, one ``key: value`` line each, or its text."""
        out = self.outputs[stage]
        return out if isinstance(out, str) else "\n".join(f"{k}: {shown_value(v)}" for k, v in out.items())

    def _decoded(self, with_substeps: bool) -> str:
        """The decoder's tuple as the checker sees it: each slot id with the candidate behind it."""
        out = self.outputs["decoder"]
        lines = [f"{k}: {shown_value(out.get(k))}" for k in self.v.substeps] if with_substeps else []
        for k in ANSWER_ORDER:
            value = out.get(k)
            shown = shown_value(value)
            if k in self.maps and isinstance(value, str):
                option = {s.lower(): t for s, t in self.maps[k].items()}.get(value.strip().lower())
                shown += f" ({option})" if option is not None else ""
            lines.append(f"{k}: {shown}")
        return "\n".join(lines)

    def blocks(self) -> dict[str, str]:
        """The input blocks of the current stage's prompts, each with its heading; empty when not shown."""
        shown, got, out = self.shown(self.stage), self.stage_inputs(), dict.fromkeys(INPUT_BLOCKS, "")
        if "text" in shown:
            out["in_text"] = f"Text: {self.inst['text']}"
        if "explicit_perception" in got:
            out["in_perception"] = f"Explicit perception: {got['explicit_perception']}"
        if "social_query" in got:
            out["in_social_query"] = f"Social query: {self.shown_output('query')}"
        if "retrieved_evidence" in got:
            out["in_evidence"] = f"Retrieved evidence: {got['retrieved_evidence']}"
        if "social_context" in got:
            out["in_social_context"] = "Social context:\n" + self._sections("context")
        if "conflict" in got:
            out["in_conflict"] = "Conflict analysis:\n" + self._sections("conflict")
        if "the_conflict" in got:
            out["in_the_conflict"] = "The conflict: " + got["the_conflict"]
        if "slots" in shown:
            listed = {r: "\n".join(f"{k}: {v}" for k, v in self.maps[r].items()) for r in ("subject", "target")}
            out["in_slots"] = f"Subject slots:\n{listed['subject']}\nTarget slots:\n{listed['target']}"
        if "decoded" in got:
            out["in_decoded"] = "Decoded answer:\n" + self._decoded("substeps" in shown)
        return out

    def values(self) -> dict[str, str]:
        inst = self.inst
        values = {
            **option_values(inst, self.tax, self.maps, self.order, self.m.prompt_additions),
            "text": inst["text"],
            "visual": visual_description(self.m.images(inst), inst["modality"] == "video_text"),
            "audio": inst.get("transcript") or "(none)",
            **self.blocks(),
            "revision": self.revision.get(self.stage, ""),
        }
        if "candidates" in self.shown(self.stage):
            # ends with a blank line: the block stands between two sections of the system prompt
            values["candidate_sets"] = self._rendered("checker_candidates.txt", values).rstrip() + "\n"
        return values

    def _file(self, name: str) -> tuple[str, str]:
        return self.m.template(name), f"{self.m.benchmark.template_folder(self.m.name, name)}/{name}"

    def _rendered(self, name: str, values: dict[str, str]) -> str:
        text, where = self._file(name)
        try:
            return render(text, values, where)
        except ConfigError as exc:  # name the run and its params key, not only the package file
            rn = RunName.parse(self.m.name)
            key = f"moca.ablations.{rn.ablation}" if rn.ablation else f"moca.method_options.{rn.method}"
            raise ConfigError(f"{key} (run {self.m.name}): {exc}") from exc

    def stage_inputs(self) -> dict[str, Any]:
        """What this stage got from earlier stages, and its revision block (kept in the trace)."""
        shown, o = self.shown(self.stage), self.outputs
        got: dict[str, Any] = {}
        if "perception" in shown and "observer" in o:
            obs = o["observer"]
            got["explicit_perception"] = obs if isinstance(obs, str) else obs["explicit_perception"]
        if "social_query" in shown and "query" in o:
            got["social_query"] = o["query"]
        if "evidence" in shown and self.retrieved is not None:
            got["retrieved_evidence"] = self.retrieved.rendered()
        if "social_context" in shown and "context" in o:
            got["social_context"] = o["context"]
        if "conflict" in shown and "conflict" in o:
            got["conflict"] = o["conflict"]
        if "the_conflict" in shown and "conflict" in o:
            c = o["conflict"]
            got["the_conflict"] = c if isinstance(c, str) else c["the_conflict"]
        if "decoded" in shown and "decoder" in o:
            keys = (*self.v.substeps, *ANSWER_ORDER) if "substeps" in shown else ANSWER_ORDER
            got["decoded"] = {k: o["decoder"][k] for k in keys if k in o["decoder"]}
        if self.revision.get(self.stage):
            got["revision"] = self.revision[self.stage]
        return got

    def request(self) -> Request:
        stage, values = self.stage, self.values()
        system = self._rendered(self.v.system_file(stage), values).rstrip()
        user = self._rendered(f"{stage}.user.txt", values).rstrip()
        if self.attempt > 1:
            user += "\n" + self._rendered("retry.txt", {"reason": self.retry_reason or ""}).rstrip()
        content = (*self.m.images(self.inst), user) if stage == "observer" else (user,)
        task: dict[str, Any] = {
            "benchmark": "moca",
            "method": self.asked_as,
            "stage": stage,
            "keys": list(self.v.keys(stage)),
        }
        if stage == "decoder":
            task.update(answer_choices(self.inst, self.tax, self.maps, self.order))
        if stage == "checker":
            task["breakpoints"] = list(self.v.breakpoints)
        if self.m.decoding == "json_object":
            keys = stage_schema(stage, self.v, {}, constrained=False)["properties"]
            decoding = Decoding(max_tokens=self.m.max_tokens, temperature=0.0, json_object=True, json_keys=keys)
        else:
            direct = answer_schema(self.inst["scenario"], self.tax, self.maps)
            schema = stage_schema(stage, self.v, direct, constrained=self.m.decoding == "constrained")
            decoding = Decoding(max_tokens=self.m.max_tokens, temperature=0.0, json_schema=schema)
        return Request(
            request_id=self.request_id(),
            messages=(Message("system", (system,)), Message("user", tuple(content))),
            task=task,
            decoding=decoding,
            shown={"slots": self.maps},
        )

    def feed(self, ex: Exchange) -> Final | None:
        """Take the answer to the current request; the Final answer when the chain ends."""
        stage = self.stage
        expected = self.request_id()
        if ex.request.request_id != expected:
            got = ex.request.request_id
            raise SocialbenchError(f"method {self.m.name}: replay out of step: expected {expected}, got {got}")
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
        if stage == "decoder":
            return self.feed_decoder(ex, entry)
        try:
            parsed, notes = read_stage(stage, resp.text, self.v, self.m.code_fence, self.m.extra_keys)
        except StageOutputError as exc:
            reason = str(exc) + (" (the answer was cut at max_tokens)" if resp.truncated else "")
            if self.attempt <= self.m.retries:
                entry["error"] = reason
                return self.retry(reason)
            if stage not in INTERMEDIATE_STAGES:  # the checker: its verdict must be read
                entry["error"] = reason
                return self.unparsable(stage, reason, ex)
            # C.2: an intermediate answer that is not its structure goes on as text
            parsed, notes = (resp.text or "").strip(), {}
            entry["unstructured"] = reason
            self.trace["unstructured"].append({"stage": stage, "pass": self.pass_no, "reason": reason})
        entry["output"] = parsed
        if self.attempt > 1 and stage == "checker":
            # the retry changed the answer only if the final one differs from the tuple kept then
            self.retry_baselines.append(self.resolve()[0])
        self.taken(stage, parsed, ex, entry, notes.get("fence_removed"), notes.get("ignored_keys"))
        if notes.get("unknown_routes"):
            entry["unknown_routes"] = notes["unknown_routes"]
            self.trace["unknown_routes"] += [{"pass": self.pass_no, **e} for e in notes["unknown_routes"]]
        if stage == "query":
            if isinstance(parsed, str):
                self.retrieved = unread_query(self.m.retriever)
            else:
                try:
                    self.retrieved = self.m.retrieval(self.inst["id"], self.pass_no, parsed)
                except RetrievalError as exc:
                    entry["error"] = f"retrieval failed: {exc}"
                    return self.fail(stage, entry["error"], ex)
            self.trace["retrieval"].append({"pass": self.pass_no, **self.retrieved.as_trace()})
        elif stage == "checker":
            if parsed["status"] == ACCEPTED:
                self.trace["verdicts"].append({"pass": self.pass_no, **parsed, "by": "checker"})
                return self.finish(accepted=True)
            out = self.rejected({**parsed, "by": "checker"})
            self.last_check = parsed
            return out
        return None

    def taken(self, stage: str, output: Any, ex: Exchange, entry: dict[str, Any], fence_removed, ignored) -> None:
        """Book an answer the chain goes on with (a fence removed, keys dropped) and move to the next stage."""
        if fence_removed:
            self.repairs.add("code_fence")
        if ignored:
            entry["ignored_keys"] = list(ignored)
            self.ignored_keys.update(f"{stage}.{k}" for k in ignored)
        self.attempt, self.retry_reason = 1, None
        self.outputs[stage], self.exchanges[stage] = output, ex
        self.todo.pop(0)

    def unparsable(self, stage: str, reason: str, ex: Exchange) -> Final:
        tried = self.attempt - 1
        after = f" after {tried} {'retry' if tried == 1 else 'retries'}" if tried else ""
        return self.fail(stage, f"unparsable{after}: {reason}", ex)

    def retry(self, reason: str) -> None:
        self.attempt, self.retry_reason = self.attempt + 1, reason
        self.trace["retries"] += 1

    def feed_decoder(self, ex: Exchange, entry: dict[str, Any]) -> Final | None:
        """Stage 4's answer, read by the direct answer's parser; the substeps kept, counted when missing."""
        resp, s = ex.response, self.inst["scenario"]
        allowed, policy = (self.tax.mechanism_names(s), self.tax.label_names(s)), (self.m.code_fence, self.m.extra_keys)
        a = read_answer(resp.text, *allowed, self.maps, *policy, unscored=self.v.substeps)
        if a.record_error:
            reason = a.record_error.removeprefix("unparsable: ")
            reason += " (the answer was cut at max_tokens)" if resp.truncated else ""
            entry["error"] = reason
            if self.attempt <= self.m.retries:
                return self.retry(reason)
            return self.unparsable("decoder", reason, ex)
        answered = {**a.unscored, **a.values}
        entry["output"] = {k: answered[k] for k in self.v.decoder_keys if k in answered}
        missing = [k for k in self.v.substeps if not (isinstance(a.unscored.get(k), str) and a.unscored[k].strip())]
        if missing:
            entry["substeps_missing"] = missing
            self.trace["substeps_missing"].append({"pass": self.pass_no, "keys": missing})
        if self.attempt > 1:
            # without the retry: a failure, or an earlier pass's tuple kept (then compared at the end)
            if self.answer is not None:
                self.retry_baselines.append(self.resolve()[0])
            else:
                self.repairs.add("retry")
        self.taken("decoder", entry["output"], ex, entry, a.fence_removed, a.extra_keys)
        self.answer = a
        fields, problems = self.resolve()
        if problems and self.v.checks and self.m.invalid_tuple == "rule":
            self.rejected_tuples.append(fields)
            # C.3: a scenario-invalid tuple returns to Stage 4, using a revision round; no model needed
            refine = self._rendered(
                "invalid_tuple.txt", {"problems": "; ".join(f"{k}: {v}" for k, v in problems.items())}
            ).strip()
            return self.rejected({"status": REJECTED, "breakpoint": 4, "refine": refine, "by": "rule"})
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
                    "revision.txt", {"refine": verdict["refine"], "previous": self.shown_output(s)}
                ).rstrip()
        previous = verdict if verdict["by"] == "checker" else self.last_check
        if previous is not None:
            prev = {k: previous[k] for k in CHAIN_KEYS["checker"]}
            self.revision["checker"] = self._rendered("previous_check.txt", {"previous": compact(prev)}).rstrip()
        return None

    def resolve(self) -> tuple[dict[str, Any], dict[str, str]]:
        """The decoder's four fields resolved as the direct answer's, and the invalid ones' problems."""
        assert self.answer is not None
        return dict(self.answer.fields), dict(self.answer.field_errors)

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
            why = (
                f"no ACCEPTED within {self.m.revision_rounds} revision round(s): the output is the last decoder answer"
            )
            self.trace["not_accepted"] = why
        kept_after = (self.trace.get("last_tuple_kept") or {}).get("stage")
        return Final(
            fields={
                "raw": ex.response.text,
                **fields,
                "field_errors": problems,
                "slots": self.maps,
                **self.order_field(),
                "request_key": ex.key,
                "inputs": self._inputs(),
                "finish_reason": ex.response.finish_reason,
                "format": answer_format(self.trace["retries"], self.repairs, self.ignored_keys, kept_after),
            },
            error=None,
            trace=self.trace,
        )

    def order_field(self) -> dict[str, Any]:
        """An order run's ``order`` field (none for order 0, whose records stay as they were)."""
        record = self.order.record(self.inst, self.tax)
        return {"order": record} if record else {}

    def fail(self, stage: str, reason: str, ex: Exchange) -> Final:
        """The instance's error (scored invalid), or once the decoder has answered, its last tuple kept."""
        if "decoder" in self.exchanges:
            self.trace["last_tuple_kept"] = {"stage": stage, "pass": self.pass_no, "reason": reason}
            return self.finish(accepted=None)
        self.trace.update(accepted=None, error_stage=stage, final_pass=self.pass_no)
        return Final(
            fields={
                "raw": ex.response.text if stage == "decoder" else None,
                "slots": self.maps,
                **self.order_field(),
                "request_key": ex.key,
                "inputs": self._inputs(),
                "finish_reason": ex.response.finish_reason,
                "format": answer_format(self.trace["retries"], (), self.ignored_keys),
            },
            error=f"{self.m.name} stage {stage}: {reason}",
            trace=self.trace,
        )


METHOD = CodarMethod
