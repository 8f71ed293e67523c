"""The settings a MoCA method run takes (``moca.answer``, ``moca.retrieval``, CoDAR's options and
ablations), checked when params load and when a method starts, importing no method code."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from socialbench.core.benchmarks import settings_sources
from socialbench.core.errors import ConfigError
from socialbench.core.run_name import RunName
from socialbench.core.runner import MAX_ROUNDS
from socialbench.core.secrets import holds_secret

ANSWER_KEYS = ("mechanism", "label", "subject", "target")
#: A code fence around the JSON answer: ``strict`` (unparsable, as D.1) or ``tolerate`` (one removed).
CODE_FENCE = ("strict", "tolerate")
#: Keys beyond an answer's contract: ``ignore`` (dropped, noted) or ``invalid`` (a format failure).
EXTRA_KEYS = ("ignore", "invalid")
#: The most format retries per call params may ask for (each one is a model call).
MAX_FORMAT_RETRIES = 3


def _one_of(key: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{key}: {value!r} is not one of {', '.join(allowed)}")


def _names_of(key: str, value: Any, allowed: tuple[str, ...]) -> frozenset[str]:
    """``value``, a list of distinct names of ``allowed``; else a ConfigError naming params ``key``."""
    if not isinstance(value, list) or len(set(map(str, value))) != len(value):
        raise ConfigError(f"{key}: expected a list of distinct names of {', '.join(allowed)}")
    for name in value:
        _one_of(key, name, allowed)
    return frozenset(value)


def _whole(key: str, value: Any, low: int, high: int | None = None, null: bool = False) -> None:
    """A ConfigError naming params ``key`` unless ``value`` is a whole number from ``low`` (to ``high``)."""
    if null and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f">= {low}" + (" or null" if null else "")
        raise ConfigError(f"{key}: expected a whole number {span}, got {value!r}")


def answer_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The answer-format policy (params ``moca.answer``, the same for every MoCA method), defaults filled."""
    answer = dict(settings.get("answer") or {})
    fence = answer.pop("code_fence", "strict")
    _one_of("moca.answer.code_fence", fence, CODE_FENCE)
    extra = answer.pop("extra_keys", "ignore")
    _one_of("moca.answer.extra_keys", extra, EXTRA_KEYS)
    retries = answer.pop("retries", 0)
    _whole("moca.answer.retries", retries, 0, MAX_FORMAT_RETRIES)
    if answer:
        unknown = ", ".join(sorted(answer))
        raise ConfigError(f"moca.answer: unknown option(s) {unknown} (known: code_fence, extra_keys, retries)")
    return {"code_fence": fence, "extra_keys": extra, "retries": retries}


#: params ``moca.retrieval``: the keys and their defaults (the schema's; the paper searches the web).
DEFAULTS: dict[str, Any] = {"retriever": "web", "k": 3, "options": {}}
WHERE = "moca.retrieval"


@dataclass(frozen=True)
class RetrievalSettings:
    """params ``moca.retrieval``: retriever name, passages per query (``k``), the retriever's options."""

    retriever: str = "none"  # core.retrieval.NONE; not imported: the retrievers are no dep of a direct run
    k: int = 3
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, config: Any, where: str = WHERE) -> RetrievalSettings:
        """The settings of a ``moca.retrieval`` block; None (a method built without params): ``none``."""
        if config is None:
            return cls()
        if not isinstance(config, dict):
            raise ConfigError(f"{where}: expected a mapping (retriever, k, options), got {config!r}")
        unknown = sorted(set(config) - set(DEFAULTS))
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {unknown}; it takes {sorted(DEFAULTS)}")
        c = {**DEFAULTS, **config}
        if not isinstance(c["retriever"], str) or not c["retriever"]:
            raise ConfigError(f"{where}.retriever: expected a retriever name (none, bm25, web), got {c['retriever']!r}")
        _whole(f"{where}.k", c["k"], 1, 20)
        if not isinstance(c["options"] or {}, dict):
            raise ConfigError(f"{where}.options: expected a mapping, got {c['options']!r}")
        secret = [k for k, v in (c["options"] or {}).items() if holds_secret(str(k), v)]
        if secret:
            why = "secrets are never written into params (they would end up in git, DVC and MLflow)"
            how = "put it in an environment variable and name that variable in options.api_key_env"
            raise ConfigError(f"{where}.options.{secret[0]}: looks like a secret; {why}: {how}")
        # name and options are checked against the retriever's schema by retriever_problem
        return cls(c["retriever"], c["k"], dict(c["options"] or {}))


def retriever_problem(registry: Any, name: str, options: dict[str, Any], where: str = WHERE) -> str | None:
    """Why ``<where>.retriever`` and ``.options`` cannot be used (per ``registry``), or None."""
    import jsonschema

    if name == "none":  # core.retrieval.NONE
        return None if not options else f"{where}.options: retriever none takes no options, got {sorted(options)}"
    if name not in registry:
        return f"{where}.retriever: unknown retriever {name!r}; available: {', '.join(['none', *registry.names()])}"
    schema = registry.options_schema(name)
    if schema is None:
        return None
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(options), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    err = errors[0]
    key = ".".join(str(p) for p in [f"{where}.options", *err.absolute_path])
    known = ", ".join(sorted(schema.get("properties", {})))
    if err.validator == "additionalProperties" and not err.absolute_path:
        extra = sorted(set(err.instance) - set(schema.get("properties", {})))
        return f"{key}: unknown option(s) {', '.join(extra)} (retriever {name} takes: {known})"
    if err.validator == "required":
        return f"{key}: {err.message} (retriever {name} takes: {known})"
    return f"{key}: {err.message}"


STAGES = ("observer", "query", "context", "conflict", "decoder", "checker")
#: The checker's breakpoint (the paper's stage number, C.3) -> the stages it re-enters.
BREAKPOINT_STAGES: dict[int, tuple[str, ...]] = {
    1: ("observer",),
    2: ("query", "context"),
    3: ("conflict",),
    4: ("decoder",),
}
CHAIN_KEYS: dict[str, tuple[str, ...]] = {
    "observer": ("explicit_perception",),
    "query": ("entities", "questions"),
    "context": ("fact", "connection", "social_norm"),
    "conflict": ("context_expectation", "explicit_reality", "the_conflict", "abductive_question"),
    "checker": ("status", "breakpoint", "refine"),
}
#: The Context Synthesizer's fourth field with setting ``context_uncertainty`` (a variant; D.2 has three).
UNCERTAINTY_KEY = "uncertainty"
DECODER_KEYS = ("counterfactual_cost", "conflict_utility", "subject", "target", "mechanism", "label")
#: Setting ``decoding``: the paper's JSON mode, each stage's schema, or the schema with enums (a variant).
DECODINGS = ("json_object", "json_schema", "constrained")
#: The decoder's substeps (i) and (ii): kept in the trace, never scored; a missing one is counted, not refused.
SUBSTEP_KEYS = ("counterfactual_cost", "conflict_utility")
#: The stages whose output is an intermediate representation (C.2): one not read as its structure goes on as text.
INTERMEDIATE_STAGES = ("observer", "query", "context", "conflict")
#: What a stage sees beyond D.2's [Input] lists (setting ``extra_inputs``; ``moca.eval.stages.EXTRA_SHOWS``).
EXTRA_INPUTS = ("text", "decoder_chain", "checker_chain", "checker_candidates")
#: Who sends a scenario-invalid decoder tuple back to Stage 4 (C.3): ``rule`` (no checker call) or ``checker``.
INVALID_TUPLE = ("rule", "checker")
#: What the answering prompts add to D.1's text: the scenario's question, A.1's boundary rule between scenarios.
PROMPT_ADDITIONS = ("scenario_question", "scenario_boundary")


def prompt_additions(settings: dict[str, Any], where: str) -> frozenset[str]:
    return _names_of(f"{where}.prompt_additions", settings.get("prompt_additions", []), PROMPT_ADDITIONS)


@dataclass(frozen=True)
class Variant:
    """The stages a CoDAR run executes (the chain or a Table 5 ablation) and what its decoder returns."""

    stages: tuple[str, ...]
    decoder_keys: tuple[str, ...] = DECODER_KEYS
    #: The Context Synthesizer's fields: D.2's three, or with ``uncertainty`` (setting ``context_uncertainty``).
    context_keys: tuple[str, ...] = CHAIN_KEYS["context"]

    @classmethod
    def of(cls, stages: Sequence[str]) -> Variant:
        """The variant that runs ``stages``; without the conflict stage its decoder answers the direct fields."""
        return cls(tuple(stages), DECODER_KEYS if "conflict" in stages else ANSWER_KEYS)

    @property
    def substeps(self) -> tuple[str, ...]:
        return tuple(k for k in self.decoder_keys if k in SUBSTEP_KEYS)

    def keys(self, stage: str) -> tuple[str, ...]:
        return {"context": self.context_keys, "decoder": self.decoder_keys}.get(stage) or CHAIN_KEYS[stage]

    @property
    def uncertainty(self) -> bool:
        return UNCERTAINTY_KEY in self.context_keys

    def system_file(self, stage: str) -> str:
        return "context_uncertainty.system.txt" if stage == "context" and self.uncertainty else f"{stage}.system.txt"

    @property
    def checks(self) -> bool:
        return "checker" in self.stages

    @property
    def breakpoints(self) -> tuple[int, ...]:
        return tuple(b for b, sts in BREAKPOINT_STAGES.items() if any(s in self.stages for s in sts))

    def rerun_from(self, breakpoint: int) -> list[str]:
        """The stages a REJECTED with this breakpoint reruns: its own and every later one."""
        first = min(self.stages.index(s) for s in BREAKPOINT_STAGES[breakpoint] if s in self.stages)
        return list(self.stages[first:])

    def templates(self) -> tuple[str, ...]:
        files = [f for s in self.stages for f in (self.system_file(s), f"{s}.user.txt")] + ["retry.txt"]
        if self.checks:
            files += ["revision.txt", "previous_check.txt", "invalid_tuple.txt", "checker_candidates.txt"]
        return tuple(files)

    def rounds_at_most(self, revision_rounds: int, retries: int = 0) -> int:
        """Model rounds an instance can take: every stage of every pass retried ``retries`` times."""
        return (1 + retries) * len(self.stages) * (revision_rounds + 1 if self.checks else 1)


CODAR = Variant(STAGES)

#: A stage's answer line in its system template: one JSON object; the checker's lists its breakpoints.
_ANSWER_LINE = re.compile(r"^\{.*\}$")
_ANSWER_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')
_BREAKPOINTS = re.compile(r'"breakpoint"\s*:\s*null((?:\s*\|\s*\d+)*)')


def _top_level_keys(line: str) -> list[str]:
    """The keys of the outermost object of an answer line (not always JSON: ``"a" | "b"``), in order."""
    keys, depth, at = [], 0, 0
    while at < len(line):
        ch = line[at]
        if ch == '"':
            end = line.find('"', at + 1)
            while end > 0 and line[end - 1] == "\\":
                end = line.find('"', end + 1)
            if end < 0:
                break
            found = _ANSWER_KEY.match(line, at) if depth == 1 else None
            if found:
                keys.append(found[1])
            at = end + 1
            continue
        depth += 1 if ch in "{[" else -1 if ch in "}]" else 0
        at += 1
    return keys


def answer_line_problem(variant: Variant, stage: str, text: str) -> str | None:
    """Why ``stage``'s system template (``text``) does not fit a run of ``variant``, or None: its answer
    line (the last one-JSON-object line) asks for other keys than the run reads, or offers a breakpoint of
    a stage the run leaves out. A template with no answer line is not checked."""
    lines = [line.strip() for line in text.splitlines() if _ANSWER_LINE.match(line.strip())]
    if not lines:
        return None
    asked = _top_level_keys(lines[-1])
    wanted = variant.keys(stage)
    problems, extra, missing = [], [k for k in asked if k not in wanted], [k for k in wanted if k not in asked]
    if extra:
        problems.append(f"asks for {', '.join(extra)}, which the run's {stage} does not give")
    if missing:
        problems.append(f"does not ask for {', '.join(missing)}, which the run's {stage} gives")
    found = _BREAKPOINTS.search(lines[-1]) if stage == "checker" else None
    if found:
        offered = [int(n) for n in re.findall(r"\d+", found[1])]
        left_out = [b for b in offered if b not in variant.breakpoints]
        if left_out:
            names = ", ".join(f"{b} ({'/'.join(BREAKPOINT_STAGES.get(b, ('no stage',)))})" for b in left_out)
            problems.append(f"offers breakpoint {names}, a stage the run leaves out")
    return "; ".join(problems) or None


#: The defaults of CoDAR's settings (those the schema leaves to the method; ``stages``: all six).
CODAR_DEFAULTS: dict[str, Any] = {
    "revision_rounds": 1,
    "invalid_tuple": "rule",
    "max_tokens": None,
    "decoding": "json_object",
    "extra_inputs": [],
    "context_uncertainty": False,
    "prompt_additions": [],
}
#: The settings of a CoDAR run; an ablation entry's ``table`` and ``label`` are the tables', not the chain's.
SETTINGS = frozenset({"stages", *CODAR_DEFAULTS})
TABLE_KEYS = frozenset({"table", "label"})
#: Settings of an order run (params moca.robustness; eval.prompts.Order), read by every MoCA method alike.
ORDER_KEYS = frozenset({"order", "reorder_lists"})


def stage_variant(name: str, settings: dict[str, Any]) -> Variant:
    """The variant run ``name`` executes (setting ``stages``; ``context_uncertainty``: four context fields)."""
    uncertainty = settings.get("context_uncertainty", CODAR_DEFAULTS["context_uncertainty"])
    if not isinstance(uncertainty, bool):
        kind, entry = settings_sources(str(RunName.parse(name).run))[0]
        raise ConfigError(f"moca.{kind}.{entry}.context_uncertainty: expected true or false, got {uncertainty!r}")
    variant = _stages_variant(name, settings.get("stages"))
    if uncertainty:
        return replace(variant, context_keys=(*CHAIN_KEYS["context"], UNCERTAINTY_KEY))
    return variant


def _stages_variant(name: str, stages: Any) -> Variant:
    if stages is None:
        return CODAR
    kind, entry = settings_sources(str(RunName.parse(name).run))[-1]  # a variant run's stages are its ablation's
    where = f"moca.{kind}.{entry}.stages"
    if not isinstance(stages, list) or stages != [s for s in STAGES if s in stages]:
        raise ConfigError(f"{where}: expected stages of {', '.join(STAGES)}, each once, in that order; got {stages!r}")
    missing = [s for s in ("observer", "decoder") if s not in stages]
    if missing:
        why = "cannot be left out (the observer sees, the decoder answers)"
        raise ConfigError(f"{where}: {' and '.join(missing)} {why}")
    if ("query" in stages) != ("context" in stages):
        raise ConfigError(f"{where}: query and context (Step 2) run together or not at all")
    return Variant.of(stages)


def codar_settings(name: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The checked settings of CoDAR run ``name``, defaults filled; a bad key is a ConfigError naming it."""
    kind, entry = settings_sources(name)[0]  # messages name the method's options, for an ablation's keys too
    where = f"moca.{kind}.{entry}"
    variant = stage_variant(name, settings)
    settings = {k: v for k, v in settings.items() if k not in TABLE_KEYS | ORDER_KEYS}
    answer = answer_settings(settings)
    settings.pop("answer", None)
    retrieval = RetrievalSettings.parse(settings.pop("retrieval", None))
    unknown = sorted(set(settings) - SETTINGS)
    if unknown:
        hint = " (Step 2's retriever is params moca.retrieval)" if "retriever" in unknown else ""
        raise ConfigError(f"{where}: unknown key(s) {unknown}; CoDAR takes {sorted(SETTINGS)}{hint}")
    rounds = settings.get("revision_rounds", CODAR_DEFAULTS["revision_rounds"])
    _whole(f"{where}.revision_rounds", rounds, 0)
    retries = answer["retries"]
    if variant.rounds_at_most(rounds, retries) > MAX_ROUNDS:
        most = MAX_ROUNDS // ((1 + retries) * len(variant.stages)) - 1
        why = f"could take more than the runner's {MAX_ROUNDS} rounds per instance with moca.answer.retries {retries}"
        raise ConfigError(f"{where}.revision_rounds: {rounds} {why}; at most {most}")
    max_tokens = settings.get("max_tokens")
    _whole(f"{where}.max_tokens", max_tokens, 1, null=True)
    invalid_tuple = settings.get("invalid_tuple", CODAR_DEFAULTS["invalid_tuple"])
    _one_of(f"{where}.invalid_tuple", invalid_tuple, INVALID_TUPLE)
    decoding = settings.get("decoding", CODAR_DEFAULTS["decoding"])
    _one_of(f"{where}.decoding", decoding, DECODINGS)
    extra = _names_of(
        f"{where}.extra_inputs", settings.get("extra_inputs", CODAR_DEFAULTS["extra_inputs"]), EXTRA_INPUTS
    )
    return {
        "variant": variant,
        "revision_rounds": rounds if variant.checks else 0,
        "invalid_tuple": invalid_tuple,
        "max_tokens": max_tokens,
        "decoding": decoding,
        "extra_inputs": extra,
        "prompt_additions": prompt_additions(settings, where),
        "code_fence": answer["code_fence"],
        "extra_keys": answer["extra_keys"],
        "retries": retries,
        "retrieval": retrieval,
    }


#: The placeholders of CoDAR's input blocks (each on a line of its own; an empty block drops its line).
INPUT_BLOCKS = tuple(
    (
        "in_text in_perception in_social_query in_evidence in_social_context in_conflict in_the_conflict "
        "in_slots in_decoded candidate_sets"
    ).split()
)
#: The placeholders of CoDAR's templates: a stage's prompt values and the small templates' own.
CODAR_PLACEHOLDERS = frozenset(
    {
        *"modality_name text visual audio scenario scenario_question scenario_line boundary_line".split(),
        *"mechanism_options label_options subject_slot_ids target_slot_ids revision".split(),
        *INPUT_BLOCKS,
        *"reason refine previous problems".split(),
    }
)


def direct_settings(name: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The checked settings of a direct run: ``prompt_additions`` (default none) and ``moca.answer``."""
    kind, entry = settings_sources(name)[0]
    where = f"moca.{kind}.{entry}"
    answer = answer_settings(settings)
    unknown = sorted(set(settings) - {"answer", "prompt_additions"} - ORDER_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; it takes prompt_additions")
    return {"prompt_additions": prompt_additions(settings, where), **answer}


@dataclass(frozen=True)
class MethodHooks:
    """A method class's ``check_settings`` and ``reads`` (the benchmark-wide blocks its runs read)."""

    check: Callable[[str, dict[str, Any]], Any] | None = None
    reads: frozenset[str] = frozenset()


#: Each MoCA method class's hooks, declared here so loading params imports no method code.
HOOKS: dict[str, MethodHooks] = {
    "codar": MethodHooks(codar_settings, frozenset({"retrieval"})),
    "direct": MethodHooks(direct_settings),
    "direct_constrained": MethodHooks(direct_settings),
}


#: What changed an answer (``format.repairs``): a format retry, a code fence removed, CoDAR's invalid-tuple rule.
REPAIRS = ("retry", "code_fence", "invalid_tuple")


def answer_format(retries: int = 0, repairs=(), ignored_keys=(), last_tuple_kept: str | None = None) -> dict[str, Any]:
    """A record's ``format``: retries, repairs, keys dropped, and the stage that left the last tuple kept."""
    unknown = set(repairs) - set(REPAIRS)
    if unknown:
        raise ValueError(f"unknown repair(s) {sorted(unknown)}; known: {', '.join(REPAIRS)}")
    return {
        "retries": retries,
        "repairs": sorted(set(repairs)),
        "ignored_keys": sorted(set(ignored_keys)),
        "last_tuple_kept": last_tuple_kept,
    }
