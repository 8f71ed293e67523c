"""The benchmark and method plug-in kinds, and their registries.

A **benchmark** is a package ``socialbench.<name>`` with a ``benchmark.py`` module whose ``BENCHMARK``
is a :class:`Benchmark` subclass (or a third-party class named by an entry point in the group
``socialbench.benchmarks``). It knows how to load and validate its instances, its methods, how to
score predictions, its tables and headline metrics, and what its predictions depend on. It is found
by its folder, imported only when used, and the core (runner, cache, tracking, CLI) never imports
one by name: adding a benchmark touches no core file.

A **method** is a module ``socialbench.<benchmark>/methods/<name>.py`` whose ``METHOD`` is a
:class:`Method` subclass. It turns an instance into requests in rounds: :meth:`Method.step` gets
the instance and the exchanges of the rounds so far and returns the next round's requests or the
:class:`Final` answer. The core runner (``socialbench.core.runner``) drives every method the same way.
Its prompt templates are files under ``socialbench/<benchmark>/templates/<method>/``.

A **variant run** ``<method>__<variant>`` is the method with the settings of its params entry
``<benchmark>.ablations.<variant>`` over the method's own (an ablation): no module and no class of
its own. Its template files are the method's, except those in ``templates/<method>/<variant>/``,
which replace the method's files of the same name.

An **order run** ``<run>__order<k>`` (k >= 1) is run ``<run>`` (a method or a variant run) asked again
with its options shown in order ``k`` (params ``<benchmark>.robustness``: answer stability under option
order, docs/decisions/answer-stability.md). Its settings are ``<run>``'s plus ``{"order": k}``; the
benchmark decides what order ``k`` shows. Order 0 is the run itself, unchanged. Order runs make their own
files, calls and MLflow runs like any run, but never enter the paper tables: only the stability tables read
them.

See docs/architecture.md for the data contracts and how to add either.
"""

from __future__ import annotations

import abc
import functools
import importlib
import importlib.metadata
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from socialbench.core.backend import ModelSpec, Request, Response, add_source
from socialbench.core.errors import ConfigError, MissingDependency, SocialbenchError
from socialbench.core.hashing import sha256_bytes
from socialbench.core.modalities import backend_declaration, model_modalities
from socialbench.core.plugins import Entry, Registry
from socialbench.core.run_name import ORDER_NAME, ORDER_PREFIX, RunName
from socialbench.core.subset import SubsetInfo, stratified_subset
from socialbench.core.traces import TraceSection

ENTRY_POINT_GROUP = "socialbench.benchmarks"


# ---- methods ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Exchange:
    """One call of a round: the request, its response and its cache key; ``images_sent``: the
    [width, height] of each image the backend sent with it (None: it sends no pixels)."""

    request: Request
    response: Response
    key: str
    images_sent: list[list[int]] | None = None


@dataclass
class Final:
    """A method's answer for one instance: ``fields`` go into the prediction record (the benchmark
    names which); ``error`` is set when no valid answer was reached (scored invalid); ``trace`` is
    whatever the method wants kept beside the calls (stage outputs, verdicts, revisions)."""

    fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    trace: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Need:
    """What a run needs of its model: one of the capabilities ``any_of`` (a modality of
    ``core.backend.MODALITIES``, or :data:`FREE_TEXT`); ``what`` names what needs it in the tables' reason
    (``"the chain's free-text stages"``, ``"native video (ingestion: native)"``)."""

    any_of: tuple[str, ...]
    what: str
    #: What a text-only model (one whose params entry declares ``modalities: []``) gets instead, when the
    #: protocol has such a form (e.g. the text alone); None: a text-only model cannot run it.
    text_only: str | None = None


#: The capability of writing free text (every backend but those that answer choices only).
FREE_TEXT = "free_text"


class Method(abc.ABC):
    """Base class of all methods. Subclasses implement :meth:`step` and nothing else is required.

    A method must be deterministic given the instance and the responses (the runner replays
    finished rounds from the request cache when a killed run resumes)."""

    #: The run's name: the method's module name (set on the class by the registry), or on an
    #: instance of a variant run ``<method>__<variant>`` that run's name (request ids and records
    #: carry it; :meth:`Benchmark.template` reads the variant's own template files by it).
    name: str = ""
    #: Template files under ``templates/<name>/`` whose content is the method's prompt hash.
    templates: ClassVar[tuple[str, ...]] = ()
    #: The run's request cache, set by the runner before the first step: a method that looks things up
    #: besides its model calls (a retriever, ``core.retrieval.cached_search``) stores them there, so a
    #: resumed run repeats none. None when the method is stepped without the runner.
    cache: Any = None

    def __init__(
        self,
        benchmark: Benchmark,
        spec: ModelSpec,
        seed: int,
        settings: dict[str, Any] | None = None,
        *,
        run: str | None = None,
    ):
        self.benchmark = benchmark
        self.spec = spec
        self.seed = seed
        self.settings = dict(settings or {})
        if run is not None:  # known from the start: a method that checks its settings names the run
            self.name = run

    @abc.abstractmethod
    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        """The next round's requests for ``instance`` given the rounds so far (empty at first), or
        its :class:`Final` answer. An instance that cannot become a request (its media missing) is
        an :class:`InstanceInputError`."""

    #: Benchmark-wide params blocks a run of this method reads besides its own ``method_options`` (e.g. a
    #: method that retrieves reads the benchmark's ``retrieval`` block); the benchmark adds them to its settings.
    reads: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def check_settings(cls, run: str, settings: dict[str, Any]) -> dict[str, Any] | None:
        """Run ``run``'s settings as the method reads them, checked (a ConfigError naming the param), or
        None: the method reads no settings of its own (its params schema's closed list of keys is its
        check). Default None. A benchmark whose params loading may import no method code checks them
        at load through a declaration of these hooks in its schema, keyed by method name and held to the
        classes by a test."""
        return None

    @classmethod
    def needs(cls, settings: dict[str, Any]) -> tuple[Need, ...]:
        """What a run with these settings needs of its model beyond text in and a JSON answer out (a
        model that lacks one is not run with it: :func:`excluded`, the reason from both declarations).
        Default: nothing more."""
        return ()

    def call_bounds(self, instance: dict[str, Any], first: Sequence[Request]) -> tuple[int, int]:
        """The fewest and the most calls an instance whose first round is ``first`` makes in all, when
        its calls succeed (``socialbench plan`` bounds a run with it before any call). Default: the first
        round is the only one (a single-call method). A method that may make more rounds (format
        retries, a chain, revisions) says how many calls they take at most."""
        return len(first), len(first)

    #: The label of the trace viewer's filter by the tags of :meth:`trace_section` (a run whose rows
    #: have no tags has no such filter).
    trace_filter: ClassVar[str] = "trace"

    @classmethod
    def trace_section(cls, trace: dict[str, Any]) -> TraceSection | None:
        """How the trace viewer shows what this method keeps (``Final.trace``, non-empty): its blocks,
        marks and filter tags (``socialbench.core.traces``). Default None: the trace drawn as a tree
        of its JSON, no marks, no filter."""
        return None

    def summary(self, finals: list[Final]) -> dict[str, float]:
        """Numbers about the whole run that only the method knows (revisions, acceptance...); the
        runner stores them in ``RunStats.method`` and tracking logs them as ``method.<key>``."""
        return {}

    # ---- helpers -----------------------------------------------------------------------------
    def template(self, name: str) -> str:
        return self.benchmark.template(self.name, name)

    @classmethod
    def template_files(cls, settings: dict[str, Any]) -> tuple[str, ...]:
        """The template files a run with these settings reads, in order: ``templates``, unless the
        settings choose among them (e.g. the stages a chain runs)."""
        return cls.templates

    @classmethod
    def prompt_hash(cls, benchmark: Benchmark, run: str, settings: dict[str, Any]) -> str:
        """sha256 over the files run ``run`` reads (a variant's own where it has them), in order
        (MLflow records it)."""
        texts = (benchmark.template(run, n) for n in cls.template_files(settings))
        return sha256_bytes("\0".join(texts).encode("utf-8"))


class InstanceInputError(SocialbenchError):
    """An instance that cannot be given to a model (no sampled frames, an image that cannot be read):
    the runner turns it into a DataError naming the instances file, the record and the field."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"field {field!r}: {message}")


def robustness_runs(section: dict[str, Any], model: str, runs: Sequence[str]) -> list[str]:
    """The order runs model ``model`` makes on a benchmark besides its ``runs`` (the runs params give
    it): for each run params ``robustness.methods`` name that it makes, orders 1..K-1
    (``robustness.orders``), when ``robustness.models`` name the model; none without a
    ``robustness`` section."""
    spec = section.get("robustness") or None
    if not spec or model not in (spec.get("models") or []):
        return []
    wanted = [r for r in spec.get("methods") or [] if r in runs]
    return [str(RunName.parse(r).with_order(k)) for r in wanted for k in range(1, int(spec["orders"]))]


def settings_sources(run: str) -> list[tuple[str, str]]:
    """Where the settings of run ``run`` come from in its benchmark's params section, in the order they
    apply: ``("method_options", <method>)``, for a variant run ``<method>__<variant>``
    ``("ablations", <variant>)`` over it, and for an order run ``<run>__order<k>`` ``("robustness",
    "order<k>")`` over ``<run>``'s (:meth:`Benchmark.method_settings`; a method names a setting's params
    key by them)."""
    rn = RunName.parse(run)
    return [
        ("method_options", rn.method),
        *([("ablations", rn.ablation)] if rn.ablation is not None else []),
        *([("robustness", f"{ORDER_PREFIX}{rn.order}")] if rn.order else []),
    ]


def template_problem(text: str, where: str, placeholders: frozenset[str]) -> str | None:
    """Why a ``$``-template cannot be rendered, or None: filled with a dummy value for each of
    ``placeholders``, a ``$name`` none of them names or a lone ``$`` fails as it would in a run (pure;
    check-params renders each run's templates with it, naming the run's key)."""
    from string import Template

    try:
        Template(text).substitute(dict.fromkeys(placeholders, "x"))
    except KeyError as exc:
        return f"template {where}: placeholder ${exc.args[0]} has no value (known: {', '.join(sorted(placeholders))})"
    except ValueError as exc:
        return f"template {where}: {exc} (write a literal dollar sign as $$)"
    return None


# ---- benchmarks -------------------------------------------------------------------------------
class Benchmark(abc.ABC):
    """Base class of all benchmarks. Every benchmark provides :meth:`load_instances`, :meth:`score`,
    :meth:`parse_scores` and :meth:`tables` (abstract: a benchmark missing one fails when the class is
    instantiated, not in the middle of a run); the other hooks have working defaults."""

    #: The benchmark's name: its package, its params section and its folder under data/ and results/.
    name: ClassVar[str] = ""
    #: The package that holds it (``socialbench.<name>``); set by the registry.
    package: ClassVar[str] = ""
    #: Backends the benchmark contributes to the backend registry (``core.backend``), e.g. a scripted
    #: test double of its methods: {backend name: (module, class)}, imported only when a model uses one.
    backends: ClassVar[dict[str, tuple[str, str]]] = {}
    #: Why a metric may be undefined (null in a score file), by metric name: tracking logs it beside the NaN.
    undefined_reasons: ClassVar[dict[str, str]] = {}

    def __init__(self, options: dict[str, Any] | None = None):
        #: Benchmark-specific command options (e.g. a taxonomy file), None when unset.
        self.options = {k: v for k, v in (options or {}).items() if v is not None}

    @classmethod
    def params_schema(cls) -> dict[str, Any]:
        """The JSON schema of its params section (``<package>/spec/params.schema.json``, or
        ``<package>/params.schema.json``; defaults filled at load); a benchmark without one takes an
        empty section."""
        import json

        root = resources.files(cls.package)
        f = next(
            (c for c in (root / "schema" / "params.schema.json", root / "params.schema.json") if c.is_file()), None
        )
        if f is None:
            return {"type": "object", "additionalProperties": False, "properties": {}}
        return json.loads(f.read_text("utf-8"))

    #: What a subset (params ``<benchmark>.subset``) is stratified by, as the note under its tables
    #: names it ("" : no strata, a simple random sample).
    subset_by: ClassVar[str] = ""

    # ---- instances ----------------------------------------------------------------------------
    def subset_stratum(self, instance: dict[str, Any]) -> str:
        """The stratum of an instance in a subset (``core.subset``); default: one stratum."""
        return ""

    def subset(
        self, section: dict[str, Any], instances: list[dict[str, Any]], seed: int
    ) -> tuple[list[dict[str, Any]], SubsetInfo | None]:
        """The instances a run answers: all of them, or the subset params ``<benchmark>.subset``
        (``{n, seed}``; seed null: the master ``seed``) asks for, with what it is (None: no subset)."""
        spec = section.get("subset")
        if not spec:
            return instances, None
        s = spec.get("seed")
        return stratified_subset(
            instances, int(spec["n"]), int(seed if s is None else s), self.subset_stratum, self.subset_by
        )

    # ---- stages before inference (optional hooks: a benchmark without one refuses the stage) -----
    def demo(self, params: dict[str, Any], out_dir: Path) -> dict[str, list[Any]]:
        """Write the benchmark's embedded demo raw files into ``out_dir`` (deterministic from params'
        seed); what was written, per split. Default: the benchmark has no embedded demo."""
        raise SocialbenchError(f"benchmark {self.name!r} has no embedded demo")

    def prepare(self, raw: Path, on_invalid: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Validate raw instances: (kept records, dropped records with their reasons); ``on_invalid``
        ``drop`` or ``fail``. Default: the benchmark has no prepare stage (its data stages validate)."""
        raise SocialbenchError(f"benchmark {self.name!r} has no prepare stage")

    def run_template_problems(self, run: str, checked: dict[str, Any]) -> list[str]:
        """Why run ``run``'s template files cannot be used (missing, a placeholder the method does not
        fill), from its settings as its method checked them (:meth:`Method.check_settings`); each names
        the run's params key. A method runs it when it starts. Default: none found."""
        return []

    @abc.abstractmethod
    def load_instances(self, path: str | Path) -> list[dict[str, Any]]:
        """Validated instances from a JSON-lines file (a DataError naming file, record and field)."""

    def dev_answers(self, dev_instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``[{"group", "answers": {field: value}}]`` of the dev split, for the prior baseline: the
        fields it may answer by majority within each group (other fields it answers by chance)."""
        return []

    # ---- methods ------------------------------------------------------------------------------
    def methods_dir(self) -> Path:
        return Path(str(resources.files(self.package).joinpath("methods")))

    def methods(self) -> Registry[Method]:
        """The benchmark's method registry: one entry per module ``methods/<method>.py`` (its ``METHOD``),
        found on disk, imported when first used."""
        registry = _METHODS.get(self.package)
        if registry is None:
            registry = _METHODS[self.package] = Registry("method", Method)
            package, folder = self.package, self.methods_dir()
            registry.add_source(
                lambda: {
                    p.stem: (f"{package}.methods.{p.stem}", "METHOD", None)
                    for p in (folder.glob("*.py") if folder.is_dir() else ())
                    if not p.stem.startswith("_")
                }
            )
        return registry

    def method_names(self) -> list[str]:
        return self.methods().names()

    def method_class(self, name: str) -> type[Method]:
        """The class of a run: the method module ``methods/<method>.py`` of ``<method>`` or of a
        variant run ``<method>__<variant>`` (one class per module; a variant is settings, not a class)."""
        try:
            base = RunName.parse(name).method
        except ValueError as exc:
            raise ConfigError(f"benchmark {self.name}: {exc}") from exc
        if base not in self.method_names():
            known = ", ".join(self.method_names()) or "none"
            raise ConfigError(f"benchmark {self.name}: unknown method {base!r}; known methods: {known}")
        return self.methods().get(base)

    def method_settings(self, section: dict[str, Any], method: str) -> dict[str, Any]:
        """What run ``method`` gets as ``Method.settings`` from the benchmark's params section:
        ``method_options.<method>``, for a variant run ``<method>__<variant>`` the entry
        ``ablations.<variant>`` over it, and for an order run ``<run>__order<k>`` ``{"order": k}`` over
        ``<run>``'s; a benchmark may add benchmark-wide options (e.g. how answers are parsed, what an
        order reorders)."""
        settings: dict[str, Any] = {}
        for kind, name in settings_sources(method):
            if kind == "robustness":
                settings["order"] = RunName.parse(method).order
                continue
            entries = section.get(kind) or {}
            if kind == "ablations" and name not in entries:
                raise ConfigError(
                    f"{self.name}: run {method!r} names the ablation {name!r}, which {self.name}.ablations does not"
                    f" define (defined: {', '.join(sorted(entries)) or 'none'})"
                )
            settings.update(entries.get(name) or {})  # an ablation's table and label too: methods ignore them
        return settings

    def settings_keys(self, section: dict[str, Any], run: str) -> list[str]:
        """The keys of the params section (dotted, relative to it) that :meth:`method_settings` reads
        for ``run``: the params an inference stage declares for it (rules/infer.smk), so editing
        one method's settings reruns, under Snakemake and DVC alike, only the models that run it. A
        benchmark that adds benchmark-wide options to the settings adds their keys."""
        return [kind if kind == "robustness" else f"{kind}.{name}" for kind, name in settings_sources(run)]

    def run_needs(self, section: dict[str, Any], run: str) -> tuple[Need, ...]:
        """What run ``run`` needs of its model (:class:`Need`), from the params section: its method's
        :meth:`Method.needs` with the run's settings. A benchmark adds what its instances need (e.g.
        images) by extending this."""
        return self.methods().get(RunName.parse(run).method).needs(self.method_settings(section, run))

    def params_problems(self, section: dict[str, Any]) -> list[str]:
        """What in the benchmark's params section (schema-valid, defaults filled) names nothing, each as
        ``<key>: <why>`` (key relative to the section): a run of ``methods`` whose method is no module
        of ``methods/`` or whose variant no entry of ``ablations``, a ``method_options`` key that is no
        method, an ablation named like an order run's variant (``order<k>``), a ``robustness.methods``
        entry that is no run of ``methods``. A benchmark adds its own (closed lists, cross references)
        by extending this. (``robustness.models`` name models: checked with the models, core.config.)"""
        known = self.method_names()
        ablations = section.get("ablations") or {}
        problems = []
        for name in ablations:
            if ORDER_NAME.match(name):
                problems.append(
                    f"ablations.{name}: {ORDER_PREFIX}<k> names the option orders of robustness runs;"
                    " rename the ablation"
                )
        for i, run in enumerate(section.get("methods") or []):
            try:
                rn = RunName.parse(run)
            except ValueError as exc:
                problems.append(f"methods.{i}: {exc}")
                continue
            base, variant = rn.method, rn.ablation
            if rn.order:
                problems.append(
                    f"methods.{i}: {run!r} is an order run; ask for it with robustness (orders, models, methods)"
                )
            elif base not in known:
                problems.append(f"methods.{i}: {run!r} names no method of {self.name} (known: {', '.join(known)})")
            elif variant is not None and variant not in ablations:
                problems.append(
                    f"methods.{i}: {run!r} names the ablation {variant!r}, which {self.name}.ablations does not"
                    f" define (defined: {', '.join(sorted(ablations)) or 'none'})"
                )
        for name in section.get("method_options") or {}:
            if name not in known:
                problems.append(f"method_options.{name}: names no method of {self.name} (known: {', '.join(known)})")
        robustness = section.get("robustness") or {}
        runs = list(section.get("methods") or [])
        for i, run in enumerate(robustness.get("methods") or []):
            if run not in runs:
                problems.append(
                    f"robustness.methods.{i}: {run!r} is no run of {self.name}.methods"
                    f" ({', '.join(runs) or 'none'}): only a run that is made can be asked again in other orders"
                )
        return problems

    def method(self, name: str, spec: ModelSpec, seed: int, settings: dict[str, Any] | None = None) -> Method:
        # a variant run keeps its own name (its request ids, its records, its template files)
        return self.method_class(name)(self, spec, seed, settings, run=name)

    def template_folder(self, run: str, name: str) -> str:
        """Where run ``run`` reads template ``name``, relative to the package: a variant run's own
        file ``templates/<method>/<variant>/<name>`` when there is one, else the method's
        ``templates/<method>/<name>``. An order run reads the files of the run it reorders."""
        rn = RunName.parse(run)
        base, variant = rn.method, rn.ablation
        if (
            variant is not None
            and resources.files(self.package).joinpath(f"templates/{base}/{variant}/{name}").is_file()
        ):
            return f"templates/{base}/{variant}"
        return f"templates/{base}"

    def template(self, method: str, name: str) -> str:
        folder = self.template_folder(method, name)
        try:
            return resources.files(self.package).joinpath(f"{folder}/{name}").read_text("utf-8")
        except FileNotFoundError as exc:
            raise ConfigError(
                f"benchmark {self.name}: method {method}: template {name} not found"
                f" (expected in {self.package.replace('.', '/')}/{folder}/)"
            ) from exc

    def prompt_hash(self, method: str, settings: dict[str, Any]) -> str:
        """The prompt hash of run ``method`` with its settings (``method_settings``): they may choose
        which template files it reads."""
        return self.method_class(method).prompt_hash(self, method, settings)

    # ---- scoring, tables, tracking ------------------------------------------------------------
    @abc.abstractmethod
    def score(
        self,
        instances: list[dict[str, Any]],
        predictions: list[dict[str, Any]],
        *,
        source: str,
        lines: Sequence[int] | None = None,
        instances_source: str = "instances",
    ) -> dict[str, Any]:
        """Scores of one (model, method): ``{group: {metric: value}}``."""

    def prediction_record(self, instance: dict[str, Any], final: Final, *, model: str, method: str) -> dict[str, Any]:
        """The prediction record of one instance (one JSON line in results/predictions/...)."""
        return {"id": instance["id"], "model": model, "method": method, **final.fields, "error": final.error}

    @abc.abstractmethod
    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        """A score file read back and checked (tables and tracking read them)."""

    #: Whether :meth:`tables` takes per-instance data (``instances``, and a :meth:`run_summary` of each
    #: run's outcomes) when the tables command is given ``--instances`` and ``--outcomes-dir``
    #: (intervals, paired tests). Such a benchmark defines :meth:`outcomes`, which the score command
    #: writes once per run beside its scores; the tables read them and never score again.
    tables_per_instance: ClassVar[bool] = False

    def outcomes(
        self,
        instances: list[dict[str, Any]],
        predictions: list[dict[str, Any]],
        *,
        source: str,
        lines: Sequence[int] | None = None,
        instances_source: str = "instances",
    ) -> list[dict[str, Any]]:
        """One run's outcome per instance, as :meth:`score` scores it, in the instances' order (the run's
        outcomes file, one JSON line each): a JSON object with the instance's ``id``, its ``group`` (the
        score file's group it counts in) and what :meth:`run_summary` reads. With ``tables_per_instance``
        only; bad predictions as in :meth:`score`."""
        raise NotImplementedError(f"benchmark {self.name}: no per-instance outcomes (tables_per_instance)")

    def run_summary(self, rows: list[dict[str, Any]], *, source: str) -> Any:
        """What :meth:`tables` and :meth:`stability_tables` need of one run's :meth:`outcomes` (read
        from ``source``, their ids and groups checked against the instances and the score file), with
        ``tables_per_instance``. The tables command reads the runs one at a time and keeps only this, so
        a summary of a few numbers per instance (correctness flags, answer codes) keeps its memory flat
        in the number of runs; a bad row is a DataError naming ``source``. Default: ``(source, rows)``."""
        return source, rows

    @abc.abstractmethod
    def tables(
        self,
        scores: dict[tuple[str, str], dict[str, Any]],
        params: dict[str, Any],
        instances: list[dict[str, Any]] | None = None,
        summaries: dict[tuple[str, str], Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``({file name: content; names may hold a folder}, headline metrics)`` from the scores of every
        (model, method); with ``tables_per_instance``, also the instances and each pair's
        :meth:`run_summary`, when the command has them. A table is a ``results.tables.Table`` (or a
        ``Document`` of tables) until the stage writes it in its name's format (``render_file``); a
        figure is bytes, other data text."""

    def stability_tables(
        self,
        scores: dict[tuple[str, str], dict[str, Any]],
        params: dict[str, Any],
        instances: list[dict[str, Any]] | None = None,
        summaries: dict[tuple[str, str], Any] | None = None,
    ) -> dict[str, Any]:
        """``{file name: table}`` of the answer-stability tables (params ``<benchmark>.robustness``) from
        every run, its order runs included, which :meth:`tables` never gets (their :meth:`run_summary`
        with ``tables_per_instance``). Default: none."""
        return {}

    def group_size(self, metrics: dict[str, Any]) -> int:
        """How many instances a score file's group stands for (its ``n`` unless the benchmark says
        otherwise): every run must cover the same groups with the same sizes to share a table."""
        return metrics["n"]

    def provenance(self, method: str, settings: dict[str, Any]) -> dict[str, Any]:
        """What the predictions of run ``method`` with its settings depend on besides the data files
        and the code (hashes of prompts, taxonomies...), recorded by infer and logged by track.
        ``prompt_template_sha256`` at least."""
        return {"prompt_template_sha256": self.prompt_hash(method, settings)}

    def viewer_rows(
        self, instances: list[dict[str, Any]], predictions: dict[str, dict[str, Any]], traces: dict[str, dict[str, Any]]
    ) -> list[dict[str, Any]] | None:
        """What the trace viewer shows of each instance (one row each; keys in ``viewer.ROW_KEYS``);
        predictions and traces by id. Default None: the viewer's own rows (``results.viewer.default_rows``:
        fields the prediction shares with the instance)."""
        return None


#: The trace file (its pipeline path) of the run whose prediction records are being built: set by the
#: runner from what the stage passes (the results layout is results/layout's, which core does not import).
TRACE_POINTER: ContextVar[str | None] = ContextVar("socialbench_trace_pointer", default=None)


def request_pointer(benchmark: str, model: str, method: str, instance_id: str, key: str | None) -> dict[str, Any]:
    """Where a prediction's answering request is: the trace file (at its pipeline path, as the stage
    running the method gave it; None outside a stage), the line of the instance and, in it, the call with
    this request-cache key (its response; the request itself is in the request cache under the key). A
    pointer, so predictions stay small."""
    return {"trace": TRACE_POINTER.get(), "id": instance_id, "key": key}


def excluded(entry: Mapping[str, Any], benchmark: str, method: str, needs: Sequence[Need] = ()) -> str | None:
    """Why params exclude a (model, method) pair of a benchmark, or None: the model runs on other
    benchmarks only (``benchmarks:``), or only some runs of this one (``only_methods:``), or it excludes
    the method (``exclude_methods:``, whose entry for a method covers its variant runs too), or it lacks
    what the run ``needs`` (:func:`unmet`: derived from the model's and the run's declarations). Such a
    pair has no run at all (no job, no files); the tables show the reason instead of a row. An order run
    (``<run>__order<k>``) is excluded when its run is."""
    rn = RunName.parse(method).run
    method = str(rn)
    only = entry.get("benchmarks")
    if only is not None and benchmark not in only:
        return f"runs on {', '.join(only) or 'no benchmark'} only (benchmarks in params)"
    runs = (entry.get("only_methods") or {}).get(benchmark)
    if runs is not None and method not in runs:
        return f"runs {', '.join(runs) or 'nothing'} only on {benchmark} (only_methods in params)"
    exclude = entry.get("exclude_methods") or {}
    reason = exclude.get(method) or exclude.get(rn.method)
    return reason or unmet(entry, needs)


def unmet(entry: Mapping[str, Any], needs: Sequence[Need]) -> str | None:
    """Why the model of a params entry cannot give a run what it ``needs``, or None: the first need none
    of whose capabilities the model has. Free text: its backend answers choices only (the backend's
    declaration says why). A modality: the model's ``modalities`` (or its backend's default) lack it."""
    if "backend" not in entry:  # not a loaded params entry (the schema requires a backend): nothing declared
        return None
    for need in needs:
        if need.any_of == (FREE_TEXT,):
            choices_only = backend_declaration(entry["backend"]).choices_only
            if choices_only is None:
                continue
            return f"{choices_only}, not {need.what}"
        takes, declared = model_modalities(entry)
        if takes & set(need.any_of):
            continue
        if declared and not takes and need.text_only is not None:
            continue  # a declared text-only model gets the run's text form (its rows are marked text-only)
        source = "modalities in params" if declared else f"the default of backend {entry['backend']}"
        shown = ", ".join(m for m in ("image", "frames", "video", "audio") if m in takes) or "text only"
        return f"takes {shown} ({source}), not {need.what}"
    return None


@functools.cache
def _run_needs(benchmark: str, section_json: str, run: str) -> tuple[Need, ...]:
    import json

    bench = get_benchmark_class(benchmark)()
    section = json.loads(section_json)
    try:
        rn = RunName.parse(run).run  # an order run needs what its run needs
    except ValueError:
        return ()  # no run name: no run params can make, which declares nothing
    run, base, variant = str(rn), rn.method, rn.ablation
    if base not in bench.method_names() or (variant is not None and variant not in (section.get("ablations") or {})):
        return ()  # a run params cannot make (a removed method or ablation) declares nothing
    return bench.run_needs(section, run)


def run_needs(params: Mapping[str, Any], benchmark: str, run: str) -> tuple[Need, ...]:
    """What run ``run`` of ``benchmark`` needs of its model, from params (the benchmark's section);
    nothing when params have no section for it."""
    import json

    section = params.get(benchmark)
    if section is None:
        return ()
    return _run_needs(benchmark, json.dumps(section, sort_keys=True, default=str), run)


def pair_excluded(params: Mapping[str, Any], benchmark: str, model: str, run: str) -> str | None:
    """Why params exclude the pair (``model``, ``run``) of ``benchmark``, or None: :func:`excluded` with
    the run's needs (:func:`run_needs`). A model params do not name has no declaration: it is not excluded."""
    entry = (params.get("models") or {}).get(model)
    if entry is None:
        return None
    return excluded(entry, benchmark, run, run_needs(params, benchmark, run))


# ---- registry ---------------------------------------------------------------------------------
#: Method registries, one per benchmark package (``Benchmark.methods``).
_METHODS: dict[str, Registry[Method]] = {}


@functools.cache  # the package's folders do not change within a process; deciding pairs asks thousands of times
def _builtin_names() -> tuple[str, ...]:
    root = resources.files("socialbench")
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and p.joinpath("benchmark.py").is_file()))


@functools.cache  # installed distributions do not change within a process; the scan is slow
def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _packaged() -> dict[str, Entry]:
    """The benchmarks found without registering: installed plug-ins (entry points) and the packages of
    socialbench with a ``benchmark.py`` (their ``BENCHMARK``)."""
    out: dict[str, Entry] = {name: (ep.module, ep.attr, "demo") for name, ep in _entry_points().items()}
    out.update({name: (f"socialbench.{name}.benchmark", "BENCHMARK", "demo") for name in _builtin_names()})
    return out


#: The benchmark registry (``core.plugins.Registry``): a params section names an entry.
BENCHMARKS: Registry[Benchmark] = Registry("benchmark", Benchmark)
BENCHMARKS.add_source(_packaged)


def register(cls: type[Benchmark]) -> type[Benchmark]:
    """Register a benchmark class directly (tests, notebooks); packages are found without it."""
    if not cls.package:
        cls.package = cls.__module__.rsplit(".", 1)[0]
    return BENCHMARKS.add_class(cls.name, cls)


def available_benchmarks() -> list[str]:
    return BENCHMARKS.names()


def get_benchmark_class(name: str) -> type[Benchmark]:
    cls = BENCHMARKS.get(name)
    if not cls.package:
        cls.package = cls.__module__.rsplit(".", 1)[0]
    return cls


def get_benchmark(name: str, options: dict[str, Any] | None = None) -> Benchmark:
    return get_benchmark_class(name)(options)


def benchmark_backends() -> dict[str, tuple[str, str]]:
    """The backends every available benchmark contributes ({name: (module, class)}); a benchmark whose
    package cannot be imported (a missing optional dependency) contributes none."""
    out: dict[str, tuple[str, str]] = {}
    for name in available_benchmarks():
        try:
            out.update(get_benchmark_class(name).backends)
        except MissingDependency:
            continue
    return out


add_source(benchmark_backends)
