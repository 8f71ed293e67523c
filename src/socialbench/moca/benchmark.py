"""MoCA as a benchmark plug-in: its params, methods' settings, prediction records and what its predictions
depend on. Instances, the data stages, scoring (section 3.3) and the tables are its stage hooks
(``schema/``, ``dataset/``, ``eval/``, ``results/`` ``hooks.py``), imported when a stage asks: the registry
imports this module to read the class, and a command that needs no pandas should not pay for them."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from socialbench.core.benchmarks import Benchmark, Final, Need, request_pointer, template_problem
from socialbench.core.errors import ConfigError
from socialbench.core.retrieval import RETRIEVERS
from socialbench.core.run_name import RunName
from socialbench.moca.schema.methods import (
    ANSWER_KEYS,
    CODAR_PLACEHOLDERS,
    HOOKS,
    MethodHooks,
    answer_format,
    answer_line_problem,
    retriever_problem,
)
from socialbench.moca.schema.taxonomy import Taxonomy, load_taxonomy, taxonomy_hash


class MocaBenchmark(Benchmark):
    name = "moca"
    #: The scripted test double of CoDAR's stages (``backend: codar_script``), for tests and the demo.
    backends = {"codar_script": ("socialbench.moca.eval.testing", "CodarScriptBackend")}
    undefined_reasons = {
        "faith": "no label correct: Faith's denominator (correct labels) is 0",
        "c_sem_dyad": "Dyad is 0: C_sem|dyad's denominator is 0",
    }

    #: Per-instance outcomes: intervals, tests and Table 7 need them.
    tables_per_instance = True

    @cached_property
    def taxonomy(self) -> Taxonomy:
        return load_taxonomy(self.options.get("taxonomy"))

    subset_by = "scenario"  # a subset (params moca.subset) keeps each scenario's share

    def subset_stratum(self, instance: dict[str, Any]) -> str:
        return str(instance["scenario"])

    def dev_answers(self, dev_instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Slots are shuffled per instance, so only the mechanism and label have a prior.
        return [
            {"group": i["scenario"], "answers": {"mechanism": i["mechanism"], "label": i["label"]}}
            for i in dev_instances
        ]

    def method_settings(self, section: dict[str, Any], method: str) -> dict[str, Any]:
        """``method_options.<method>`` plus ``moca.answer`` and the blocks the method reads (CoDAR: ``retrieval``)."""
        settings = {**super().method_settings(section, method), "answer": dict(section.get("answer") or {})}
        for block in HOOKS.get(RunName.parse(method).method, MethodHooks()).reads:  # the method's Method.reads
            if block in section:
                settings[block] = dict(section[block] or {})
        if settings.get("order"):  # an order run: whether its order moves the mechanism and label lists too
            settings["reorder_lists"] = bool((section.get("robustness") or {}).get("reorder_lists", False))
        return settings

    def settings_keys(self, section: dict[str, Any], run: str) -> list[str]:
        """Core's, the answer options every run reads, Step 2's retriever where the run retrieves, and
        an order run's ``robustness.reorder_lists``."""
        settings = self.method_settings(section, run)
        return [
            *super().settings_keys(section, run),
            "answer",
            *(["retrieval"] if "retrieval" in settings else []),
            *(["robustness.reorder_lists"] if settings.get("order") else []),
        ]

    #: What every MoCA run shows its model (MoCA 6.1): images or sampled frames; a text-only model the text alone.
    INSTANCE_NEEDS = (
        Need(("image",), "MoCA's images", text_only="the text without its images"),
        Need(("frames",), "MoCA's video frames", text_only="the text without its frames"),
    )

    def run_needs(self, section: dict[str, Any], run: str) -> tuple[Need, ...]:
        """The method's needs (CoDAR: free text) and what MoCA's instances show (:attr:`INSTANCE_NEEDS`)."""
        return (*super().run_needs(section, run), *self.INSTANCE_NEEDS)

    def params_problems(self, section: dict[str, Any]) -> list[str]:
        """Core's checks and each run's settings as its ``check_settings`` hook reads them (no retriever made)."""
        problems = super().params_problems(section)
        if problems:
            return problems
        # Step 2's retriever: a typo in its name or options fails here, not in the middle of a run
        retrieval = section.get("retrieval") or {}
        problem = retriever_problem(RETRIEVERS, retrieval.get("retriever", "none"), retrieval.get("options") or {})
        if problem:
            problems.append(problem.removeprefix("moca."))
        known = set(self.method_names())
        runs = dict.fromkeys([*(k for k in section.get("method_options") or {} if k in known), *section.get("methods")])
        for run in runs:
            check = HOOKS.get(RunName.parse(run).method, MethodHooks()).check
            if check is None:
                continue  # a method that reads no settings: the schema's closed list of keys is its check
            try:
                checked = check(run, self.method_settings(section, run))
                problems += self.run_template_problems(run, checked)
            except ConfigError as exc:
                message = str(exc).removeprefix("moca.")
                if message not in problems:  # an ablation's run repeats its method's problem
                    problems.append(message)
        return problems

    def run_template_problems(self, run: str, checked: dict[str, Any]) -> list[str]:
        """Each template file a CoDAR run reads, rendered with dummy values and held to its stages' answer lines."""
        if "variant" not in checked:
            return []
        rn = RunName.parse(run)
        base, variant = rn.method, rn.ablation
        key = f"ablations.{variant}" if variant else f"method_options.{base}"
        own = f"templates/{base}/{variant}"
        out, shared = [], []
        stage_of = {checked["variant"].system_file(s): s for s in checked["variant"].stages}
        for name in checked["variant"].templates():
            folder = self.template_folder(run, name)
            where = f"{folder}/{name}"
            try:
                text = self.template(run, name)
            except ConfigError as exc:  # not found
                out.append(f"{key}: {exc}")
                continue
            problem = template_problem(text, where, CODAR_PLACEHOLDERS)
            if problem:
                out.append(f"{key}: {problem}")
            fit = answer_line_problem(checked["variant"], stage_of[name], text) if name in stage_of else None
            if fit:
                if variant and folder != own:  # the method's file, written for its own stages
                    shared.append(f"{name} {fit}")
                else:
                    out.append(f"{key}: template {where}: {fit}")
        if shared:
            out.append(
                f"{key}: the method's templates (templates/{base}/) do not fit its stages: {'; '.join(shared)};"
                f" write its own in src/socialbench/moca/{own}/ (docs/codar-prompts.md, Ablations)"
            )
        return out

    def prediction_record(self, instance: dict[str, Any], final: Final, *, model: str, method: str) -> dict[str, Any]:
        f = final.fields
        return {
            "id": instance["id"],
            "model": model,
            "method": method,
            "scenario": instance["scenario"],
            "raw": f.get("raw"),
            **{k: f.get(k) for k in ANSWER_KEYS},
            "error": final.error,
            # a method that stopped before its answering call (an error) has no parsed fields
            "field_errors": f["field_errors"]
            if "field_errors" in f
            else {k: final.error for k in ANSWER_KEYS if final.error},
            "slots": f.get("slots"),
            # an order run's (params moca.robustness): the order asked, the one shown, how many are distinct
            **({"order": f["order"]} if f.get("order") else {}),
            "request_key": f.get("request_key"),
            "inputs": f.get("inputs", []),
            "finish_reason": f.get("finish_reason"),
            # media that could not be shown: answered without a call, scored invalid, counted
            "media_error": f.get("media_error"),
            # what the answer-format policy (params moca.answer) did
            "format": f.get("format") or answer_format(),
            # for error analysis from this one file: the gold answer, and where the request is
            "gold": {k: instance.get(k) for k in ("subject", "target", "mechanism", "label")},
            "request": request_pointer(self.name, model, method, instance["id"], f.get("request_key")),
        }

    def provenance(self, method: str, settings: dict[str, Any]) -> dict[str, Any]:
        order = RunName.parse(method).order  # an order run's (params moca.robustness), logged with it
        return {
            "prompt_template_sha256": self.prompt_hash(method, settings),
            "taxonomy_sha256": taxonomy_hash(self.taxonomy),
            **({"option_order": order, "reorder_lists": bool(settings.get("reorder_lists"))} if order else {}),
        }


BENCHMARK = MocaBenchmark
