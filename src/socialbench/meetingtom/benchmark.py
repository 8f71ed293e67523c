"""MeetingToM as a benchmark plug-in; a run ``<method>__<ablation>`` applies ``meetingtom.ablations.<ablation>``.
The data stages are ``socialbench meetingtom ...`` commands (cli.py); instances, the demo, scoring and the
tables are its stage hooks (``schema/``, ``dataset/``, ``eval/``, ``results/`` ``hooks.py``)."""

from __future__ import annotations

from typing import Any

from socialbench.core.benchmarks import Benchmark, Final, Need, request_pointer, template_problem
from socialbench.core.errors import ConfigError
from socialbench.core.run_name import RunName
from socialbench.meetingtom.schema.methods import TEMPLATE_PLACEHOLDERS, method_templates, settings_of
from socialbench.meetingtom.schema.mining import MiningParams
from socialbench.meetingtom.schema.settings import clips_per_task_problem


class MeetingToMBenchmark(Benchmark):
    name = "meetingtom"
    undefined_reasons = {
        "macro_f1": "Macro-F1 is reported for MeetingToM Task 1 and Task 3.1 only (MeetingToM 4.1)",
        "accuracy": (
            "no instance counts (n = 0): MeetingToM Task 3.2 is scored only where the paired Task 3.1 answer is"
            " correct, and none was; Task 1 is not evaluated with contextual priors (MeetingToM Table 4)"
        ),
    }

    #: Macro-F1's intervals, Task 3.2's conditional intervals and Figure 4 need per-instance data.
    tables_per_instance = True

    def group_size(self, metrics: dict[str, Any]) -> int:
        """``n_total`` where a group has it: Task 3.2's ``n`` is each run's own conditional denominator."""
        return metrics.get("n_total", metrics["n"])

    # ---- stages before inference --------------------------------------------------------------
    subset_by = "task"  # a subset (params meetingtom.subset) keeps each task's share

    def subset_stratum(self, instance: dict[str, Any]) -> str:
        return str(instance["task"])

    def dev_answers(self, dev_instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Options are shuffled per instance: the prior counts each task's gold classes (option values) on
        # the dev split. Task 3.2 selects sets: no prior (the prior baseline answers it by chance).
        return [
            {"group": i["task"], "answers": {"answer": i["gold"]}}
            for i in dev_instances
            if isinstance(i.get("gold"), str)
        ]

    # ---- methods and their ablations (runs <method>__<ablation>: core's variant runs) ----------
    def method_settings(self, section: dict[str, Any], method: str) -> dict[str, Any]:
        """``method_options.<method>`` with the ablation's entry over it, and the marker list."""
        settings = super().method_settings(section, method)
        if settings.get("remove_markers"):
            settings["markers"] = list(section.get("discourse_markers") or [])
        return settings

    def settings_keys(self, section: dict[str, Any], run: str) -> list[str]:
        """Core's, and the marker list where the run removes markers."""
        markers = ["discourse_markers"] if "markers" in self.method_settings(section, run) else []
        return [*super().settings_keys(section, run), *markers]

    def run_needs(self, section: dict[str, Any], run: str) -> tuple[Need, ...]:
        """What a run needs of its model (B.5): the video as ``ingestion`` says, where its modality shows it."""
        s = settings_of(self.method_settings(section, run))
        shown = [s["modality"]] if s["modality"] else [(section.get(x) or {}).get("modality") for x in ("demo", "ami")]
        if not any(m in ("video", "both") for m in shown):
            return ()
        needs = {
            "native": Need(("video",), "native video (ingestion: native)"),
            "frames": Need(("frames",), "video frames (ingestion: frames)"),
        }
        return (needs.get(s["ingestion"]) or Need(("video", "frames"), "the clip's video"),)

    def params_problems(self, section: dict[str, Any]) -> list[str]:
        """Core's checks, and the method settings, meetings, mining thresholds and demo length."""
        problems = super().params_problems(section)
        markers = list(section.get("discourse_markers") or [])
        for where in ("method_options", "ablations"):
            for name, entry in (section.get(where) or {}).items():
                try:
                    settings_of({**entry, "markers": markers} if entry.get("remove_markers") else entry)
                except ConfigError as exc:
                    problems.append(f"{where}.{name}: {str(exc).split(': ', 1)[-1]}")
        demo, ami = section.get("demo") or {}, section.get("ami") or {}
        corpus = demo.get("corpus") or []
        problems += [
            f"demo.meetings: {m} is not a meeting of the demo release (demo.corpus: {', '.join(corpus)})"
            for m in demo.get("meetings") or []
            if m not in corpus
        ]
        if "seconds" in demo and (
            problem := clips_per_task_problem(float(demo["seconds"]), demo.get("clips_per_task"))
        ):
            problems.append(problem)
        known = [*corpus, *(ami.get("meetings") or [])]
        for m in section.get("dev_meetings") or []:
            if m not in known:
                problems.append(f"dev_meetings: {m} is a meeting of no source (demo.corpus, ami.meetings)")
        try:
            MiningParams.from_mapping(section.get("mining"))
        except ConfigError as exc:
            problems.append(str(exc))
        if not problems:  # every run's methods and settings are known: render what each reads
            known = set(self.method_names())
            runs = [*(k for k in section.get("method_options") or {} if k in known), *(section.get("methods") or [])]
            for run in dict.fromkeys(runs):
                problems += self._template_problems(run)
        return problems

    def _template_problems(self, run: str) -> list[str]:
        """Each template file the run reads, rendered with dummy placeholders: a bad one fails here, not mid-run."""
        rn = RunName.parse(run)
        key = f"ablations.{rn.ablation}" if rn.ablation else f"method_options.{rn.method}"
        out = []
        for name in method_templates(rn.method):  # schema/, not the method's module: loading params imports no method
            where = f"{self.template_folder(run, name)}/{name}"
            placeholders = TEMPLATE_PLACEHOLDERS.get(name)
            try:
                text = self.template(run, name)
                problem = template_problem(text, where, placeholders) if placeholders is not None else None
            except ConfigError as exc:  # not found
                problem = str(exc)
            except ValueError as exc:  # not UTF-8
                problem = f"template {where}: not UTF-8 text ({exc})"
            if problem:
                out.append(f"{key}: {problem}")
        return out

    def provenance(self, method: str, settings: dict[str, Any]) -> dict[str, Any]:
        """The prompt hash, the method and ablation (MLflow params the runs table groups by), an order run's order."""
        rn = RunName.parse(method)
        return {
            "prompt_template_sha256": self.prompt_hash(method, settings),
            "prompting": rn.method,
            "ablation": rn.ablation or "none",
            **({"option_order": rn.order} if rn.order else {}),
        }

    def prediction_record(self, instance: dict[str, Any], final: Final, *, model: str, method: str) -> dict[str, Any]:
        f = final.fields
        return {
            "id": instance["id"],
            "model": model,
            "method": method,
            "task": instance["task"],
            "source": instance["source"],
            **{k: f.get(k) for k in ("raw", "answer", "value", "note", "reasoning", "request_key", "finish_reason")},
            "inputs": f.get("inputs", []),
            "error": final.error,
            # for error analysis from this one file: the gold answer, and where the request is
            "gold": instance.get("answer"),
            "gold_value": instance.get("gold"),
            "request": request_pointer(self.name, model, method, instance["id"], f.get("request_key")),
            # an instance the setting leaves out; an order run's (meetingtom.robustness) order asked and shown
            **{k: f[k] for k in ("not_evaluated", "order") if f.get(k)},
        }


BENCHMARK = MeetingToMBenchmark
