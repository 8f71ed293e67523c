"""The benchmark and method plug-in kinds, and their registries (docs/architecture.md).

A **benchmark** is a package ``socialbench.<name>`` whose ``benchmark.py`` has ``BENCHMARK``, a :class:`Benchmark`
subclass (or an entry point in ``socialbench.benchmarks``): adding one touches no core file. A **method** is a
module ``socialbench.<benchmark>/methods/<name>.py`` whose ``METHOD`` is a :class:`Method`, stepped in rounds.
A **variant run** ``<method>__<variant>`` adds params ``<benchmark>.ablations.<variant>`` to the method's
settings (templates in ``templates/<method>/<variant>/`` replace the method's); an **order run**
``<run>__order<k>`` asks ``<run>`` again with options in order ``k`` (docs/decisions/answer-stability.md)."""

from __future__ import annotations

import abc
import functools
import importlib
import importlib.metadata
import inspect
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, TypeVar

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
    """One call of a round; ``images_sent``: [width, height] of each image sent (None: no pixels)."""

    request: Request
    response: Response
    key: str
    images_sent: list[list[int]] | None = None


@dataclass
class Final:
    """One instance's answer: ``fields`` for its prediction record, ``error`` if none (scored invalid), ``trace``."""

    fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    trace: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Need:
    """A run needs one of ``any_of`` (a modality or :data:`FREE_TEXT`); ``what`` names it in the tables."""

    any_of: tuple[str, ...]
    what: str
    #: What a text-only model (``modalities: []``) gets instead, if the protocol has such a form; None: it cannot run.
    text_only: str | None = None


#: The capability of writing free text (every backend but those that answer choices only).
FREE_TEXT = "free_text"


class Method(abc.ABC):
    """Base class of all methods (:meth:`step`); deterministic given instance and responses (a resume replays)."""

    #: The run's name: the module name (set by the registry), or a variant run's name on an instance.
    name: str = ""
    #: Template files under ``templates/<name>/``: the prompt hash.
    templates: ClassVar[tuple[str, ...]] = ()
    #: The run's request cache (set by the runner): other look-ups are stored there too.
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
        """The next round's requests, or the :class:`Final` answer; a bad instance is an :class:`InstanceInputError`."""

    #: Benchmark-wide params blocks a run reads besides its ``method_options`` (e.g. ``retrieval``).
    reads: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def check_settings(cls, run: str, settings: dict[str, Any]) -> dict[str, Any] | None:
        """The run's settings checked (a ConfigError naming the param), or None: no settings of its own.
        Benchmarks that import no method code at params load declare these hooks in their schema (held by a test)."""
        return None

    @classmethod
    def needs(cls, settings: dict[str, Any]) -> tuple[Need, ...]:
        """What a run needs of its model beyond text in and JSON out (:func:`excluded`). Default: nothing."""
        return ()

    def call_bounds(self, instance: dict[str, Any], first: Sequence[Request]) -> tuple[int, int]:
        """The fewest and most calls an instance makes when calls succeed (``socialbench plan``); default: one round."""
        return len(first), len(first)

    #: The trace viewer's label for filtering by :meth:`trace_section` tags.
    trace_filter: ClassVar[str] = "trace"

    @classmethod
    def trace_section(cls, trace: dict[str, Any]) -> TraceSection | None:
        """How the trace viewer shows ``Final.trace`` (``core.traces``). Default None: a JSON tree."""
        return None

    def summary(self, finals: list[Final]) -> dict[str, float]:
        """Run-wide numbers only the method knows (``RunStats.method``; tracked as ``method.<key>``)."""
        return {}

    def template(self, name: str) -> str:
        return self.benchmark.template(self.name, name)

    @classmethod
    def template_files(cls, settings: dict[str, Any]) -> tuple[str, ...]:
        """The template files a run reads, in order (settings may choose among ``templates``)."""
        return cls.templates

    @classmethod
    def prompt_hash(cls, benchmark: Benchmark, run: str, settings: dict[str, Any]) -> str:
        """sha256 over the files run ``run`` reads, in order (MLflow records it)."""
        texts = (benchmark.template(run, n) for n in cls.template_files(settings))
        return sha256_bytes("\0".join(texts).encode("utf-8"))


class InstanceInputError(SocialbenchError):
    """An instance that cannot be given to a model (the runner names file, record and field)."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"field {field!r}: {message}")


def robustness_runs(section: dict[str, Any], model: str, runs: Sequence[str]) -> list[str]:
    """The order runs (orders 1..K-1) model ``model`` makes besides ``runs``, per params ``robustness``."""
    spec = section.get("robustness") or None
    if not spec or model not in (spec.get("models") or []):
        return []
    wanted = [r for r in spec.get("methods") or [] if r in runs]
    return [str(RunName.parse(r).with_order(k)) for r in wanted for k in range(1, int(spec["orders"]))]


def settings_sources(run: str) -> list[tuple[str, str]]:
    """Where run ``run``'s settings come from in its params section, in the order they apply:
    ``("method_options", <method>)``, ``("ablations", <variant>)``, ``("robustness", "order<k>")``."""
    rn = RunName.parse(run)
    return [
        ("method_options", rn.method),
        *([("ablations", rn.ablation)] if rn.ablation is not None else []),
        *([("robustness", f"{ORDER_PREFIX}{rn.order}")] if rn.order else []),
    ]


def template_problem(text: str, where: str, placeholders: frozenset[str]) -> str | None:
    """Why a ``$``-template cannot be rendered with ``placeholders`` filled, or None (pure; check-params)."""
    from string import Template

    try:
        Template(text).substitute(dict.fromkeys(placeholders, "x"))
    except KeyError as exc:
        return f"template {where}: placeholder ${exc.args[0]} has no value (known: {', '.join(sorted(placeholders))})"
    except ValueError as exc:
        return f"template {where}: {exc} (write a literal dollar sign as $$)"
    return None


# ---- a benchmark's stage hooks --------------------------------------------------------------------
class Hooks:
    """Hooks that some stages call, kept out of the plug-in class: ``HOOKS`` (a subclass of one kind) in
    ``<package>/<folder>/hooks.py``, imported when a stage first asks (:attr:`Benchmark.eval`, ...). So the
    plug-in class imports none of that folder at load, and a stage's code deps hold the hooks modules of the
    hooks it calls (``stages.dvc_yaml``)."""

    #: The benchmark's sub-folder holding the module.
    folder: ClassVar[str] = ""

    def __init__(self, benchmark: Benchmark):
        self.benchmark = benchmark


class SchemaHooks(Hooks, abc.ABC):
    folder = "schema"

    @abc.abstractmethod
    def load_instances(self, path: str | Path) -> list[dict[str, Any]]:
        """Validated instances from a JSON-lines file (a DataError naming file, record and field)."""


class DatasetHooks(Hooks):
    """The data stages' hooks; a benchmark without one refuses the stage."""

    folder = "dataset"

    def demo(self, params: dict[str, Any], out_dir: Path) -> dict[str, list[Any]]:
        """Write the embedded demo raw files (deterministic from params' seed); what was written, per split."""
        raise SocialbenchError(f"benchmark {self.benchmark.name!r} has no embedded demo")

    def prepare(self, raw: Path, on_invalid: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Validate raw instances: (kept, dropped with reasons); ``on_invalid`` ``drop`` or ``fail``."""
        raise SocialbenchError(f"benchmark {self.benchmark.name!r} has no prepare stage")


#: Records as JSON objects (instances, predictions, outcome rows); every run's scores by (model, run).
Records = list[dict[str, Any]]
RunScores = dict[tuple[str, str], dict[str, Any]]


class EvalHooks(Hooks, abc.ABC):
    """Scoring. ``where`` names the files in errors: ``source`` (the predictions), ``lines`` (their line
    numbers, default 1..n) and ``instances_source``."""

    folder = "eval"

    @abc.abstractmethod
    def score(self, instances: Records, predictions: Records, **where: Any) -> dict[str, Any]:
        """Scores of one (model, method): ``{group: {metric: value}}``."""

    @abc.abstractmethod
    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        """A score file read back and checked."""

    def score_with_outcomes(
        self, instances: Records, predictions: Records, **where: Any
    ) -> tuple[dict[str, Any], Records]:
        """:meth:`score`'s scores and the run's outcome per instance, in order, as scored (objects with ``id``,
        ``group`` and what ``run_summary`` reads), from one pass over the instances. Only with
        ``Benchmark.tables_per_instance``."""
        raise NotImplementedError(f"benchmark {self.benchmark.name}: no per-instance outcomes (tables_per_instance)")


class ResultsHooks(Hooks, abc.ABC):
    """The tables and the viewer; ``instances`` and ``summaries`` (each run's :meth:`run_summary`) are given
    with ``Benchmark.tables_per_instance``."""

    folder = "results"

    def run_summary(self, rows: Records, *, source: str) -> Any:
        """What the tables keep of one run's outcomes (a bad row: a DataError naming ``source``); default: all."""
        return source, rows

    @abc.abstractmethod
    def tables(
        self, scores: RunScores, params: dict[str, Any], instances: Records | None = None, summaries: dict | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``({file name: content}, headline metrics)`` from every run's scores; tables as ``results.tables``
        objects, figures bytes, other data text."""

    def stability_tables(
        self, scores: RunScores, params: dict[str, Any], instances: Records | None = None, summaries: dict | None = None
    ) -> dict[str, Any]:
        """``{file name: table}`` of the answer-stability tables, order runs included. Default: none."""
        return {}

    def viewer_rows(self, instances: Records, predictions: dict[str, dict], traces: dict[str, dict]) -> Records | None:
        """The trace viewer's row per instance (``viewer.ROW_KEYS``); None: ``default_rows``."""
        return None


#: The kinds of stage hooks, one per benchmark sub-folder.
HOOK_KINDS: tuple[type[Hooks], ...] = (SchemaHooks, DatasetHooks, EvalHooks, ResultsHooks)
H = TypeVar("H", bound=Hooks)


# ---- benchmarks -------------------------------------------------------------------------------
class Benchmark:
    """Base class of all benchmarks: its params, methods and runs; what stages call of it besides is in its
    stage hooks (:class:`Hooks`), whose abstract hooks fail when the stage loads them."""

    #: The package, params section and folder under data/ and results/.
    name: ClassVar[str] = ""
    #: Where its methods, templates and stage hooks are: its module's package unless the class names one.
    package: ClassVar[str] = ""

    #: Backends it contributes ({name: (module, class)}), imported only when a model uses one.
    backends: ClassVar[dict[str, tuple[str, str]]] = {}
    #: Why a metric may be null in a score file, by metric name (tracking logs it).
    undefined_reasons: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.package = cls.package or cls.__module__.rsplit(".", 1)[0]

    def __init__(self, options: dict[str, Any] | None = None):
        #: Benchmark-specific command options (e.g. a taxonomy file), None when unset.
        self.options = {k: v for k, v in (options or {}).items() if v is not None}

    @classmethod
    def params_schema(cls) -> dict[str, Any]:
        """The JSON schema of its params section (``[schema/]params.schema.json``; else empty)."""
        import json

        root = resources.files(cls.package)
        for f in (root / "schema" / "params.schema.json", root / "params.schema.json"):
            if f.is_file():
                return json.loads(f.read_text("utf-8"))
        return {"type": "object", "additionalProperties": False, "properties": {}}

    #: What a subset is stratified by, as the tables' note names it ("": simple random sample).
    subset_by: ClassVar[str] = ""

    # ---- instances ----------------------------------------------------------------------------
    def subset_stratum(self, instance: dict[str, Any]) -> str:
        """An instance's stratum in a subset (``core.subset``); default: one stratum."""
        return ""

    def subset(
        self, section: dict[str, Any], instances: list[dict[str, Any]], seed: int
    ) -> tuple[list[dict[str, Any]], SubsetInfo | None]:
        """All instances, or the subset params ``<benchmark>.subset`` asks for (seed null: the master seed)."""
        spec = section.get("subset")
        if not spec:
            return instances, None
        s = spec.get("seed")
        return stratified_subset(
            instances, int(spec["n"]), int(seed if s is None else s), self.subset_stratum, self.subset_by
        )

    def run_template_problems(self, run: str, checked: dict[str, Any]) -> list[str]:
        """Why run ``run``'s templates cannot be used with its checked settings (each naming its key)."""
        return []

    # ---- stage hooks (:class:`Hooks`), loaded when first asked ------------------------------------
    schema = functools.cached_property(lambda self: self._hooks(SchemaHooks))
    dataset = functools.cached_property(lambda self: self._hooks(DatasetHooks))
    eval = functools.cached_property(lambda self: self._hooks(EvalHooks))
    results = functools.cached_property(lambda self: self._hooks(ResultsHooks))

    def _hooks(self, kind: type[H]) -> H:
        """``HOOKS`` of ``<package>/<kind.folder>/hooks.py``; without that module, the kind's defaults."""
        module = f"{self.package}.{kind.folder}.hooks"
        try:
            cls = getattr(importlib.import_module(module), "HOOKS", None)
        except ModuleNotFoundError as exc:
            if exc.name not in (module, module.rsplit(".", 1)[0]):
                raise  # the module is there; something it imports is not
            if inspect.isabstract(kind):
                raise SocialbenchError(
                    f"benchmark {self.name}: no {kind.folder} hooks: write {module.replace('.', '/')}.py"
                    f" with HOOKS, a subclass of {kind.__name__}"
                ) from exc
            cls = kind
        if not (isinstance(cls, type) and issubclass(cls, kind)):
            raise SocialbenchError(f"benchmark {self.name}: {module}.HOOKS must be a subclass of {kind.__name__}")
        if inspect.isabstract(cls):
            missing = ", ".join(sorted(cls.__abstractmethods__))
            raise SocialbenchError(f"benchmark {self.name}: {module}.HOOKS ({cls.__name__}) does not define {missing}")
        return cls(self)

    def hooks_problems(self) -> list[str]:
        """Why each kind of its stage hooks cannot be loaded (``socialbench benchmarks`` checks them all at
        once: a stage loads only its own, so a missing ``tables`` would otherwise show only after inference)."""
        problems = []
        for kind in HOOK_KINDS:
            try:
                getattr(self, kind.folder)
            except SocialbenchError as exc:
                problems.append(str(exc))
        return problems

    def dev_answers(self, dev_instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``[{"group", "answers": {field: value}}]``: the dev split's majority answers (the prior baseline)."""
        return []

    # ---- methods ------------------------------------------------------------------------------
    def methods(self) -> Registry[Method]:
        """The method registry: one entry per ``methods/<method>.py``, imported when first used."""
        registry = _METHODS.get(self.package)
        if registry is None:
            registry = _METHODS[self.package] = Registry("method", Method)
            package, folder = self.package, Path(str(resources.files(self.package).joinpath("methods")))
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
        """The class of a run's method module (a variant is settings, not a class)."""
        try:
            base = RunName.parse(name).method
        except ValueError as exc:
            raise ConfigError(f"benchmark {self.name}: {exc}") from exc
        if base not in self.method_names():
            known = ", ".join(self.method_names()) or "none"
            raise ConfigError(f"benchmark {self.name}: unknown method {base!r}; known methods: {known}")
        return self.methods().get(base)

    def method_settings(self, section: dict[str, Any], method: str) -> dict[str, Any]:
        """Run ``method``'s ``Method.settings``: the entries of :func:`settings_sources` laid
        over each other (an order run gets ``{"order": k}``); a benchmark may add benchmark-wide options."""
        settings: dict[str, Any] = {}
        for kind, name in settings_sources(method):
            if kind == "robustness":
                settings["order"] = RunName.parse(method).order
                continue
            entries = section.get(kind) or {}
            if kind == "ablations" and name not in entries:
                raise ConfigError(f"{self.name}: run {method!r} {self._no_ablation(name, entries)}")
            settings.update(entries.get(name) or {})  # an ablation's table and label too: methods ignore them
        return settings

    def settings_keys(self, section: dict[str, Any], run: str) -> list[str]:
        """The params keys :meth:`method_settings` reads for ``run``: its inference stage's params
        (rules/infer.smk), so editing one method's settings reruns only its runs. An order run's order
        is in its name, hence its command: ``robustness`` (its models, methods) is no key of it."""
        return [f"{kind}.{name}" for kind, name in settings_sources(run) if kind != "robustness"]

    def run_needs(self, section: dict[str, Any], run: str) -> tuple[Need, ...]:
        """What run ``run`` needs of its model: its method's :meth:`Method.needs`; a benchmark may add."""
        return self.methods().get(RunName.parse(run).method).needs(self.method_settings(section, run))

    def params_problems(self, section: dict[str, Any]) -> list[str]:
        """What in the (schema-valid) params section names nothing, each ``<key>: <why>``; a
        benchmark extends it. Models in ``robustness.models`` are checked in core.config."""
        known = self.method_names()
        ablations = section.get("ablations") or {}
        problems = [
            f"ablations.{name}: {ORDER_PREFIX}<k> names the option orders of robustness runs; rename the ablation"
            for name in ablations
            if ORDER_NAME.match(name)
        ]
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
                problems.append(f"methods.{i}: {run!r} {self._no_ablation(variant, ablations)}")
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

    def _no_ablation(self, ablation: str, defined: Mapping[str, Any]) -> str:
        return (
            f"names the ablation {ablation!r}, which {self.name}.ablations does not define"
            f" (defined: {', '.join(sorted(defined)) or 'none'})"
        )

    def method(self, name: str, spec: ModelSpec, seed: int, settings: dict[str, Any] | None = None) -> Method:
        # a variant run keeps its own name (its request ids, its records, its template files)
        return self.method_class(name)(self, spec, seed, settings, run=name)

    def template_folder(self, run: str, name: str) -> str:
        """Where run ``run`` reads template ``name``: its variant's folder if it has the file, else the method's."""
        rn = RunName.parse(run)
        own = f"templates/{rn.method}/{rn.ablation}"
        if rn.ablation is not None and resources.files(self.package).joinpath(f"{own}/{name}").is_file():
            return own
        return f"templates/{rn.method}"

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
        """Run ``method``'s prompt hash (settings may choose its template files)."""
        return self.method_class(method).prompt_hash(self, method, settings)

    # ---- inference, tables, tracking: scoring and tables are hooks of their own (:class:`EvalHooks`, ...) -----
    def prediction_record(self, instance: dict[str, Any], final: Final, *, model: str, method: str) -> dict[str, Any]:
        """One instance's prediction record (a JSON line in results/predictions/...)."""
        return {"id": instance["id"], "model": model, "method": method, **final.fields, "error": final.error}

    #: Whether the results' ``tables`` take instances and each run's ``run_summary`` (its outcome rows come
    #: from :meth:`EvalHooks.score_with_outcomes`).
    tables_per_instance: ClassVar[bool] = False

    def group_size(self, metrics: dict[str, Any]) -> int:
        """How many instances a score group stands for (default ``n``): runs sharing a table must agree."""
        return metrics["n"]

    def provenance(self, method: str, settings: dict[str, Any]) -> dict[str, Any]:
        """What run ``method``'s predictions depend on besides data and code (``prompt_template_sha256`` at least)."""
        return {"prompt_template_sha256": self.prompt_hash(method, settings)}


#: The trace file of the run whose predictions are built (set by the runner from the stage).
TRACE_POINTER: ContextVar[str | None] = ContextVar("socialbench_trace_pointer", default=None)


def request_pointer(benchmark: str, model: str, method: str, instance_id: str, key: str | None) -> dict[str, Any]:
    """Where a prediction's answering request is: trace file (None outside a stage), instance id, cache key."""
    return {"trace": TRACE_POINTER.get(), "id": instance_id, "key": key}


def excluded(entry: Mapping[str, Any], benchmark: str, method: str, needs: Sequence[Need] = ()) -> str | None:
    """Why params exclude a (model, run) pair, or None (``benchmarks``, ``only_methods``, ``exclude_methods``
    covering variants, :func:`unmet` needs; an order run as its run). Excluded pairs have no run."""
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
    """Why the model cannot give a run what it ``needs``, or None: the first need none of whose capabilities
    it has (free text: its backend answers choices only; a modality: its ``modalities`` or backend default)."""
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
    """What run ``run`` of ``benchmark`` needs of its model (none without a params section)."""
    import json

    section = params.get(benchmark)
    return () if section is None else _run_needs(benchmark, json.dumps(section, sort_keys=True, default=str), run)


def pair_excluded(params: Mapping[str, Any], benchmark: str, model: str, run: str) -> str | None:
    """:func:`excluded` with the run's needs; a model params do not name is not excluded."""
    entry = (params.get("models") or {}).get(model)
    return None if entry is None else excluded(entry, benchmark, run, run_needs(params, benchmark, run))


_METHODS: dict[str, Registry[Method]] = {}


@functools.cache  # the package's folders do not change within a process; deciding pairs asks thousands of times
def _builtin_names() -> tuple[str, ...]:
    root = resources.files("socialbench")
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and p.joinpath("benchmark.py").is_file()))


@functools.cache  # installed distributions do not change within a process; the scan is slow
def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _packaged() -> dict[str, Entry]:
    """Benchmarks found without registering: entry points and socialbench packages with ``benchmark.py``."""
    out: dict[str, Entry] = {name: (ep.module, ep.attr, "demo") for name, ep in _entry_points().items()}
    out.update({name: (f"socialbench.{name}.benchmark", "BENCHMARK", "demo") for name in _builtin_names()})
    return out


#: The benchmark registry: a params section names an entry.
BENCHMARKS: Registry[Benchmark] = Registry("benchmark", Benchmark)
BENCHMARKS.add_source(_packaged)


def register(cls: type[Benchmark]) -> type[Benchmark]:
    """Register a benchmark class directly (tests, notebooks); packages are found without it."""
    return BENCHMARKS.add_class(cls.name, cls)


def available_benchmarks() -> list[str]:
    return BENCHMARKS.names()


def get_benchmark_class(name: str) -> type[Benchmark]:
    return BENCHMARKS.get(name)


def get_benchmark(name: str, options: dict[str, Any] | None = None) -> Benchmark:
    return get_benchmark_class(name)(options)


def benchmark_backends() -> dict[str, tuple[str, str]]:
    """The backends every importable benchmark contributes ({name: (module, class)})."""
    out: dict[str, tuple[str, str]] = {}
    for name in available_benchmarks():
        try:
            out.update(get_benchmark_class(name).backends)
        except MissingDependency:
            continue
    return out


add_source(benchmark_backends)
