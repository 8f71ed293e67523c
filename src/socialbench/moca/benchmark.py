"""MoCA as a benchmark plug-in: instances, answers, scoring (section 3.3), Tables 2-4 and what its
predictions depend on. Imports stay inside the methods: the registry imports this module to read the
class, and commands that need no pandas or taxonomy should not pay for them."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from socialbench.core.benchmarks import Benchmark, Final, Need, pair_excluded
from socialbench.core.run_name import RunName


def macro(scores: dict[str, dict[str, Any]], metric: str) -> float | None:
    """The unweighted mean of a metric over the scenarios, 2 decimals half-up; None when a scenario's value
    is undefined (a mean of fewer scenarios would not compare across models)."""
    from socialbench.results.numbers import mean

    return mean(sc.get(metric) for sc in scores.values())


def tables_5_to_7(paper: Any) -> tuple[dict[str, Any], list[Any]]:
    """Tables 5-7 (md, csv, tex, ci.md, ci.csv), tests.csv and answers.csv of a ``PaperTables``; and
    the tables themselves, for all.md. Here, where the modules of the paper's tables meet."""
    from socialbench.moca.results.ablations import table5, table5_other_backbones
    from socialbench.moca.results.answers import answers_csv
    from socialbench.moca.results.completion import table7
    from socialbench.moca.results.scaling import table6
    from socialbench.moca.results.significance import tests_csv
    from socialbench.results.tables import formats

    out, shown = {}, []
    for name, (t, ci) in zip(
        ("table5", "table5_other_backbones", "table6", "table7"),
        (table5(paper), table5_other_backbones(paper), table6(paper), table7(paper)),
    ):
        out.update(formats(name, t))
        out.update(formats(f"{name}.ci", ci, ("md", "csv")))
        shown.append(t)
    out["tests.csv"] = tests_csv(paper.comparisons)
    out["answers.csv"] = answers_csv(paper.answers or {})
    return out, shown


def overall_table(scores: dict[tuple[str, str], dict[str, Any]], categories: dict[str, str]) -> Any:
    """all.md's overall table: each run's metrics as the macro over the scenarios, rows in params order."""
    from socialbench.moca.results.tables import COLUMNS, row_name
    from socialbench.results.tables import Block, Num, Row, Table

    scenarios = sorted({s for sc in scores.values() for s in sc})
    ns = "/".join(str(n) for n in sorted({sc[s]["n"] for sc in scores.values() for s in sc}))
    order = list(categories)
    rows = []
    for (m, meth), sc in sorted(
        scores.items(), key=lambda kv: (order.index(kv[0][0]) if kv[0][0] in order else len(order), kv[0])
    ):
        values = [macro(sc, key) for _, key in COLUMNS]
        rows.append(Row([categories.get(m, ""), row_name(m, meth), *(Num(v) for v in values)]))
    title = f"Overall: macro over scenarios ({', '.join(scenarios)}; N = {ns} each)"
    return Table(title, [Block(["Category", "Model", *(h for h, _ in COLUMNS)], rows, keys=2)])


class MocaBenchmark(Benchmark):
    name = "moca"
    #: The scripted test double of CoDAR's stages (``backend: codar_script``): no model, for tests and
    #: the demo's pipeline check.
    backends = {"codar_script": ("socialbench.moca.eval.testing", "CodarScriptBackend")}
    undefined_reasons = {
        "faith": "no label correct: Faith's denominator (correct labels) is 0",
        "c_sem_dyad": "Dyad is 0: C_sem|dyad's denominator is 0",
    }

    @cached_property
    def taxonomy(self):
        from socialbench.moca.schema.taxonomy import load_taxonomy

        return load_taxonomy(self.options.get("taxonomy"))

    # ---- stages before inference --------------------------------------------------------------
    def demo(self, params: dict[str, Any], out_dir: Path) -> dict[str, list[dict[str, Any]]]:
        from socialbench.moca.dataset.demo import DemoConfig, generate

        return generate(out_dir, DemoConfig.from_params(params), self.taxonomy)

    def prepare(self, raw: Path, on_invalid: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        from socialbench.moca.dataset.prepare import prepare_file

        return prepare_file(raw, self.taxonomy, on_invalid, media_roots=self.options.get("media_roots"))

    subset_by = "scenario"  # a subset (params moca.subset) keeps each scenario's share

    def subset_stratum(self, instance: dict[str, Any]) -> str:
        return str(instance["scenario"])

    def load_instances(self, path: str | Path) -> list[dict[str, Any]]:
        from socialbench.moca.schema.instances import load_instances

        return load_instances(path, self.taxonomy)

    def dev_answers(self, dev_instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Slots are shuffled per instance, so only the mechanism and label have a prior.
        return [
            {"group": i["scenario"], "answers": {"mechanism": i["mechanism"], "label": i["label"]}}
            for i in dev_instances
        ]

    # ---- answers ------------------------------------------------------------------------------
    def method_settings(self, section: dict[str, Any], method: str) -> dict[str, Any]:
        """``method_options.<method>`` plus ``moca.answer`` and the blocks the method reads (CoDAR: ``retrieval``)."""
        from socialbench.moca.schema.methods import HOOKS, MethodHooks

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

    #: What every MoCA run shows its model (MoCA 6.1): images, or sampled frames (speech as a transcript:
    #: C.1); a model declared text-only gets the text alone (beyond the paper; rows marked text-only).
    INSTANCE_NEEDS = (
        Need(("image",), "MoCA's images", text_only="the text without its images"),
        Need(("frames",), "MoCA's video frames", text_only="the text without its frames"),
    )

    def run_needs(self, section: dict[str, Any], run: str) -> tuple[Need, ...]:
        """The method's needs (CoDAR: free text) and what MoCA's instances show (:attr:`INSTANCE_NEEDS`)."""
        return (*super().run_needs(section, run), *self.INSTANCE_NEEDS)

    def params_problems(self, section: dict[str, Any]) -> list[str]:
        """Core's checks, and each run's method settings as the method reads them (its ``check_settings``
        hook, declared in ``moca.schema.methods.HOOKS`` so loading params imports no method code), without
        making a retriever or reading any file."""
        from socialbench.core.errors import ConfigError
        from socialbench.moca.schema.methods import HOOKS, MethodHooks

        problems = super().params_problems(section)
        if problems:
            return problems
        # Step 2's retriever: a typo in its name or options fails here, not in the middle of a run
        from socialbench.core.retrieval import RETRIEVERS
        from socialbench.moca.schema.methods import retriever_problem

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
        """Each template file a CoDAR run reads (``checked``: its settings as CoDAR checks them), rendered with
        dummy values, and each stage's system template held to what the run reads of that stage
        (``answer_line_problem``): a missing one, an unknown placeholder or one written for other stages fails
        here, naming the run's key, not at its first call."""
        from socialbench.core.benchmarks import template_problem
        from socialbench.core.errors import ConfigError
        from socialbench.moca.schema.methods import CODAR_PLACEHOLDERS, answer_line_problem

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
        from socialbench.core.benchmarks import request_pointer
        from socialbench.moca.eval.prompts import ANSWER_KEYS, answer_format

        f = final.fields
        record = {
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
        return record

    # ---- scoring, tables, provenance -------------------------------------------------------------
    def score(
        self,
        instances: list[dict[str, Any]],
        predictions: list[dict[str, Any]],
        *,
        source: str,
        lines: Sequence[int] | None = None,
        instances_source: str = "instances",
    ) -> dict[str, Any]:
        from socialbench.moca.eval.scoring import score

        labels, mechanisms = self.taxonomy.as_sets()
        return score(
            instances, predictions, labels, mechanisms, source=source, lines=lines, instances_source=instances_source
        )

    def unpredicted(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> list[str]:
        from socialbench.moca.eval.scoring import unpredicted

        return unpredicted(instances, predictions)

    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        from socialbench.moca.eval.scoring import parse_scores

        return parse_scores(data, source)

    tables_per_instance = True

    def outcomes(
        self,
        instances: list[dict[str, Any]],
        predictions: list[dict[str, Any]],
        *,
        source: str,
        lines: Sequence[int] | None = None,
        instances_source: str = "instances",
    ) -> list[dict[str, Any]]:
        """Per instance, each field's correctness, invalid, the resolved answer and its format flags."""
        from socialbench.moca.eval.outcomes import outcome_rows

        labels, mechanisms = self.taxonomy.as_sets()
        return outcome_rows(
            instances, predictions, labels, mechanisms, source=source, lines=lines, instances_source=instances_source
        )

    def run_summary(self, rows: list[dict[str, Any]], *, source: str) -> Any:
        """Per scenario the correctness matrix and answer counts; per instance the resolved answer's code."""
        from socialbench.moca.results.correctness import run_summary

        return run_summary(rows, source)

    def tables(
        self,
        scores: dict[tuple[str, str], dict[str, Any]],
        params: dict[str, Any],
        instances: list[dict[str, Any]] | None = None,
        summaries: dict[tuple[str, str], Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Tables 2-4 per scenario, Tables 5-7 and Figures 6, 7 and 9; given the instances and the runs'
        summaries, a 95% bootstrap interval for every cell and paired tests."""
        from socialbench.moca.results.correctness import correctness_cells
        from socialbench.moca.results.paper import PaperTables
        from socialbench.moca.results.paper_figures import paper_figures
        from socialbench.moca.results.settings import TableSettings
        from socialbench.moca.results.tables import exclusions_table, row_name, scenario_table
        from socialbench.results.scores import row_category
        from socialbench.results.tables import Document, formats, json_mode_note, temperature_note

        categories = {m: row_category(e) for m, e in params["models"].items()}  # "(text-only)" where declared
        # pairs params exclude have no score files; one given anyway gets no row
        scores = {
            (m, meth): sc for (m, meth), sc in scores.items() if pair_excluded(params, self.name, m, meth) is None
        }
        section = params.get(self.name) or {}
        settings = TableSettings.from_params(params, self.name)
        cells = answers = None
        if instances is not None and summaries is not None:
            cells = correctness_cells(summaries, scores)
            answers = {(m, meth, s): c for (m, meth) in scores for s, c in summaries[(m, meth)].answers.items()}
        paper = PaperTables(scores, categories, section.get("methods", []), settings, cells, answers)
        files: dict[str, Any] = {}
        shown_tables = []
        for s in paper.scenarios:
            rows = paper.named_rows(s)
            row_n = {row_name(m, meth): sc[s]["n"] for (m, meth), sc in scores.items() if s in sc}
            n = max(row_n.values(), default=None)  # the table's N; a row on fewer instances prints its own
            media = {row_name(m, meth): sc[s].get("media_errors", 0) for (m, meth), sc in scores.items() if s in sc}
            shown = {m for (m, _), sc in scores.items() if s in sc}
            # the Markdown's notes: the rows' and intervals', and rows whose runs sent no temperature or
            # whose JSON constraint the server ignored
            decoding = [temperature_note(params["models"], shown), json_mode_note(params["models"], shown)]
            t = scenario_table(s, rows, n, media, paper.changes(s), row_n)
            t.md_notes = [*paper.scenario_notes(s), *(x for x in decoding if x)]
            shown_tables.append(t)
            files.update(formats(s, t))
            files.update(formats(f"{s}.ci", paper.scenario_ci(s), ("md", "csv")))
        grids, grid_tables = tables_5_to_7(paper)
        files.update(grids)
        files.update(paper_figures(paper))
        # the overall table after Tables 2-4 (which it summarises); the pairs params exclude at the end
        excluded = exclusions_table(params, section.get("methods", []))
        files["all.md"] = Document(
            [
                *shown_tables,
                overall_table(scores, categories),
                *grid_tables,
                files["figures/fig9_means.md"],
                *([excluded] if excluded else []),
            ]
        )
        headline = {
            f"{m}.{meth}": {
                **{s: {k: sc[s][k] for k in ("dyad", "faith", "holis")} for s in sc},
                "overall": {k: macro(sc, k) for k in ("dyad", "faith", "holis")},
            }
            for (m, meth), sc in sorted(scores.items())
        }
        return files, headline

    def stability_tables(
        self,
        scores: dict[tuple[str, str], dict[str, Any]],
        params: dict[str, Any],
        instances: list[dict[str, Any]] | None = None,
        summaries: dict[tuple[str, str], Any] | None = None,
    ) -> dict[str, str | bytes]:
        """stability.md/.csv/.tex: answer stability under option order, from the order runs' summaries."""
        from socialbench.moca.results.stability import stability_files

        return dict(stability_files(instances, summaries, params, self.taxonomy))

    def provenance(self, method: str, settings: dict[str, Any]) -> dict[str, Any]:
        from socialbench.moca.schema.taxonomy import taxonomy_hash

        order = RunName.parse(method).order  # an order run's (params moca.robustness), logged with it
        return {
            "prompt_template_sha256": self.prompt_hash(method, settings),
            "taxonomy_sha256": taxonomy_hash(self.taxonomy),
            **({"option_order": order, "reorder_lists": bool(settings.get("reorder_lists"))} if order else {}),
        }

    def viewer_rows(
        self, instances: list[dict[str, Any]], predictions: dict[str, dict[str, Any]], traces: dict[str, dict[str, Any]]
    ) -> list[dict[str, Any]]:
        from socialbench.moca.results.viewer import rows

        labels, mechanisms = self.taxonomy.as_sets()
        return rows(instances, predictions, traces, labels, mechanisms)


BENCHMARK = MocaBenchmark
