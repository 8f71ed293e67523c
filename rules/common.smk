# Helpers shared by the rules. The config (params.yaml, plus any --configfile and --config given
# to snakemake) is validated here, at load, against the core JSON schema and each benchmark's own
# (src/socialbench/core/schemas/params.schema.json, src/socialbench/<benchmark>/params.schema.json):
# defaults are filled and an unknown key or a bad value stops the run with a message naming it
# and the config file(s) it came from. Valid overrides are then refused (see below).

import atexit
import functools
import gc
import os
import sys
from pathlib import Path as _Path

from socialbench.core.benchmarks import available_benchmarks, get_benchmark_class
from socialbench.results import layout
from socialbench.stages import dvc_yaml
from socialbench.core.config import VALIDATED_ENV, validate_params, validated_record
from socialbench.core.errors import ConfigError

# Every Snakemake process that reads the workflow (a run, a dry run, a cluster job, a DVC stage's)
# ends without the interpreter's closing collections: about 1 s of CPU each (docs/benchmarks.md).
atexit.register(gc.freeze)


def _config_sources():
    """What was merged into `config`, in merge order: the Snakefile's `configfile:`, then each
    --configfile, then --config values. Returns (label for messages, [(label, raw mapping)])."""
    import yaml

    def shown(path):
        path = os.fspath(path)
        rel = os.path.relpath(path) if os.path.isabs(path) else path
        return path if rel.startswith("..") else rel

    def raw(path):
        try:
            with open(path, encoding="utf-8") as fh:
                return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
        except (OSError, yaml.YAMLError):
            return {}

    settings = getattr(workflow, "config_settings", None)
    cli_files = list(getattr(settings, "configfiles", None) or [])
    cli_shown = [shown(f) for f in cli_files]
    directive = [f for f in getattr(workflow, "configfiles", None) or [] if shown(f) not in cli_shown]
    origins = [(shown(f), raw(f)) for f in directive]
    origins += [(f"--configfile {shown(f)}", raw(f)) for f in cli_files]
    if getattr(settings, "config", None):
        origins.append(("--config", dict(settings.config)))
    return " + ".join(label for label, _ in origins) or "params.yaml", origins


_SOURCE, _ORIGINS = _config_sources()
try:
    config.update(validate_params(config, source=_SOURCE, origins=_ORIGINS))
except ConfigError as exc:
    from socialbench.core.io import one_line

    sys.exit(f"error: {one_line(exc)}")  # one line, capped: as `socialbench check-params` prints it
# The stages read params.yaml (`--params params.yaml`), and DVC records params.yaml's values: an
# override here would rerun jobs that then run, and record, params.yaml's values. Refused.
_OVERRIDES = [label for label, _ in _ORIGINS[1:]]
if _OVERRIDES:
    sys.exit(
        f"error: {', '.join(_OVERRIDES)}: overrides are not supported; the stages and DVC read params.yaml,"
        " so edit params.yaml (it is versioned with the results)"
    )

# The jobs read params.yaml again (`--params params.yaml`): they take the values validated here when the
# file still has the same bytes (socialbench.core.config.load_params), not validating it once a job.
try:
    _VALIDATED = validated_record("params.yaml")
except ConfigError as exc:  # as a job would say it: params.yaml read by the stages' own strict loader
    from socialbench.core.io import one_line

    sys.exit(f"error: {one_line(exc)}")
if _VALIDATED is not None:
    os.environ[VALIDATED_ENV] = _VALIDATED

MODELS = list(config["models"])
#: The benchmarks this run evaluates: every registered benchmark with a section in params.yaml.
#: Each has a rules file rules/<benchmark>.smk (its own data stages) included by the Snakefile.
BENCHMARKS = [b for b in available_benchmarks() if b in config]
#: Their plug-in classes (imported lazily by the registry).
BENCH_CLASSES = {b: get_benchmark_class(b) for b in BENCHMARKS}
#: Per benchmark, what its rules file declares: the instances and dev split inference reads, the
#: file names its tables stage writes, every output of its own rules (rule all and the closing
#: `dvc commit` collect them) and what its generated DVC stages read (`dvc`: data, params keys).
BENCH = {}


def methods(benchmark):
    return list(config[benchmark]["methods"])


def model_runs(benchmark):
    """{model: [run, ...]}: the runs each model makes on the benchmark (socialbench.results.layout), its
    order runs (params <benchmark>.robustness) included; a pair params exclude has no job, no file and
    no DVC stage, and a model with no run no job."""
    return layout.model_runs(config, benchmark, methods(benchmark))


def runs(benchmark):
    """(model, run) pairs of the benchmark that params make (order runs included)."""
    return layout.runs(config, benchmark, methods(benchmark))


def result_files(kind, benchmark):
    """results/<kind>/<benchmark>/<model>/<run><ext> for every run of the benchmark."""
    return list(_result_files(kind, benchmark))


@functools.cache  # asked for by several rules per benchmark while the workflow is read
def _result_files(kind, benchmark):
    return tuple(layout.run_files(kind, benchmark, runs(benchmark)))


def run_args(benchmark, ordered=True):
    """--run <model>/<run> for every run of the benchmark (the per-benchmark score and viewer jobs), in
    params order; ``ordered=False``: sorted, for a job whose outputs do not depend on the order (score:
    one file per run), so that reordering params' methods reruns it no more than it reruns its DVC stage."""
    pairs = runs(benchmark) if ordered else sorted(runs(benchmark))
    return " ".join(f"--run {m}/{r}" for m, r in pairs)


def generic_outputs(benchmark):
    """The outputs of the generic stages (infer, score, tables, viewer, track) of a benchmark. The
    per-benchmark jobs that write one file per run (score: scores and outcomes, viewer, the tables' per-run
    metrics) have a folder output per kind, results/<kind>/<benchmark>, not one per run: Snakemake keeps a metadata record
    per output, each listing the job's inputs, so per-run outputs of jobs that read every run cost
    every later start time that grows with the square of the runs."""
    return {
        "predictions": result_files("predictions", benchmark),
        "traces": result_files("traces", benchmark),
        "stats": result_files("runs", benchmark),
        "scores": layout.kind_dir("scores", benchmark),
        "outcomes": layout.kind_dir("outcomes", benchmark),
        "tables": [f"results/tables/{benchmark}/{name}" for name in BENCH[benchmark]["tables"]],
        "headline": f"results/metrics/{benchmark}.json",
        # one file per run the tables score in it: a `dvc metrics show` row each
        "run_metrics": layout.kind_dir("metrics", benchmark),
        "tracked": f"results/mlflow/{benchmark}.json",
        "viewer": layout.kind_dir("viewer", benchmark),
    }


def all_outputs(benchmarks=None):
    """Every output of the benchmarks (default: all), intermediate ones too, so a deleted one is rebuilt."""
    out = []
    for b in benchmarks or BENCHMARKS:
        for value in [*BENCH[b]["outputs"].values(), *generic_outputs(b).values()]:
            out += value if isinstance(value, list) else [value]
    return out


def media_io_pairs(wildcards, input, output):
    # One --input/--output pair per split, in the same order.
    return " ".join(f"--input {i} --output {o}" for i, o in zip(input.instances, output.instances))


def model_files(model):
    # Files a model entry names (the file backend's answers, options.path; a model folder, model_path, the
    # output of a weights_<name> rule; a GGUF file, gguf_file): a changed file reruns it.
    entry = config["models"][model]
    path = (entry.get("options") or {}).get("path")
    named = [path, entry.get("model_path"), entry.get("gguf_file")]
    return [p for p in named if isinstance(p, str)]


def method_settings(benchmark, run):
    """What a run gets from the benchmark's params section (method_options.<method>, a variant run's
    ablation over them, benchmark-wide options such as MoCA's answer parsing): a rule param, so
    changing them reruns the jobs of the models that make that run only."""
    return BENCH_CLASSES[benchmark]().method_settings(config[benchmark], run)


def infer_params(benchmark, model, runs):
    """The params keys an inference stage reads: the seed, the model's entry, and of the keys its
    benchmark says inference reads (BENCH[b]["dvc"]["infer_params"], in that order) the parts its
    runs' settings come from (Benchmark.settings_keys: a method's options, an ablation's entry) and
    those no run's settings come from (the subset); then any other key the settings read. Its rule's
    triggers and its DVC stage's params both: editing one method's settings reruns only the models
    that run it, under either tool."""
    bench, section = BENCH_CLASSES[benchmark](), config[benchmark]
    declared = BENCH[benchmark]["dvc"]["infer_params"]

    def group(key):
        return next((g for g in declared if key == g or key.startswith(f"{g}.")), None)

    def read(of_runs):
        return [f"{benchmark}.{k}" for r in of_runs for k in bench.settings_keys(section, r)]

    of_settings = {group(k) for k in read(r for rs in model_runs(benchmark).values() for r in rs)}
    keys = [k for g in declared for k in ([k for k in read(runs) if group(k) == g] if g in of_settings else [g])]
    return list(dict.fromkeys(["seed", f"models.{model}", *keys, *read(runs)]))


# Every rule runs in this environment under `--sdm conda`; by default, in the active venv.
CONDA_ENV = "../envs/socialbench.yaml"


# ---- stages: each declared once -----------------------------------------------------------------
# A DVC stage is declared once, beside its rules, with `stage(...)` (the fields:
# socialbench.stages.dvc_yaml): the rules it runs, what it reads (data, params keys) and writes. From
# the declaration come the DVC stage in dvc.yaml (rules/dvc.smk), each rule's rerun triggers
# (stage_params: the values of the params keys it reads) and each rule's code input (stage_code: the
# files behind the modules its shell command imports, computed). Names, paths and keys are written in
# the rules' syntax: a name or key may hold the rule's wildcards ({source}), resolved per job, and
# dvc.yaml gets DVC's (${item.meeting}, ${key}; dvc_yaml.dvc_template). `benchmark=None`: a stage of
# no one benchmark (the book).

#: name -> declaration, in the order declared (dvc.yaml's order).
STAGES = {}


def stage(name, *, benchmark, rules, comment=None, **fields):
    if name in STAGES:
        sys.exit(f"error: stage {name} is declared twice (rules/*.smk)")
    STAGES[name] = {"benchmark": benchmark, "rules": list(rules), "comment": comment, **fields}


def _per_job(template, make):
    # a name with wildcards: a function of the job's wildcards (Snakemake calls it per job)
    if "{" not in template:
        return make(template)
    return lambda wildcards: make(template.format(**dict(wildcards.items())))


def _declared(name):
    if name not in STAGES:
        sys.exit(f"error: stage {name} is not declared (stage(...) in rules/*.smk)")
    return STAGES[name]


def stage_params(name, rule=None):
    """A rule's rerun triggers: {params key: value} of the keys its stage's declaration says it reads
    (all the stage's keys where the rule is not named; a key holding a wildcard,
    meetingtom.{source}.views, takes the job's)."""

    def make(stage_name):
        decl = _declared(stage_name)
        keys = dvc_yaml.params_keys(decl, rule)
        if not any("{" in k for k in keys):
            return {k: dvc_yaml.lookup(config, k) for k in keys}
        return lambda wildcards: {
            k: dvc_yaml.lookup(config, dvc_yaml.job_template(k, decl, dict(wildcards.items()))) for k in keys
        }

    return _per_job(name, make)


def stage_code(name):
    """A rule's code input: one stamp file standing for the files behind its stage's code deps (the
    modules its rules' commands import: socialbench.stages.dvc_yaml.code_deps), written with a
    sha256 per file (write_code_stamp). Every stage's stamp is written when the workflow is read
    (write_code_stamps); a job's wildcards pick its stage's."""
    return lambda wildcards: _stage_code(name.format(**dict(wildcards.items())))


@functools.cache
def _stage_code(name):
    decl = _declared(name)
    files = dvc_yaml.code_files(stage_code_deps(name))
    stamp = os.path.join(dvc_yaml.STAMP_DIR, f"{name}.sha256")
    dvc_yaml.write_code_stamp(_Path(stamp), files, _Path.cwd())
    return stamp


def write_code_stamps():
    """Every declared stage's code stamp, written when the workflow is read: Snakemake lists a folder
    once while it builds the DAG (its IOCache inventory) and then answers from that list, so a stamp
    first written after the list was made would be a missing input (a targeted run on a fresh checkout
    failed so, depending on the order Snakemake visited the jobs in)."""
    for name in STAGES:
        _stage_code(name)


@functools.cache
def stage_code_deps(name):
    return dvc_yaml.stage_code_deps(_declared(name), _rule_shells())


def _rule_shells():
    return {r.name: r.shellcmd for r in workflow.rules if r.shellcmd}


# ---- cluster ------------------------------------------------------------------------------------
from socialbench.core.resources import job_resources as _job_resources


def job_resources(kind, model=None):
    """What a job asks a cluster executor for (params `resources`; socialbench.core.resources). A local
    run ignores them; they are no rerun trigger, so changing them reruns nothing."""
    return _job_resources(
        config["resources"], kind, model, config["models"].get(model) if model else None, os.environ
    )


# ---- job order (Snakemake `priority`; decision record demo-speed) ------------------------------
#: Every benchmark's data jobs (raw source to processed instances) start before the jobs after them, so
#: that both benchmarks reach inference early; MeetingToM's per-meeting chain of a source with views is one
#: step higher (its clips are the heaviest jobs). The stages after the data carry no benchmark's bias: the
#: two benchmarks' tables and tracking then end together, and the closing commit starts sooner.
DATA_PRIORITY = 1

from socialbench.core.backend import BACKENDS as _BACKENDS


def model_priority(model):
    """An infer job's priority: 1 where the model's backend needs an install extra (weights to load, a
    server or an API: its benchmark's longest job), 0 for the baselines and scripted doubles, which
    answer in milliseconds; so the long jobs start first and the short ones fill the cores after."""
    _module, _class, extra = _BACKENDS.entry(config["models"][model]["backend"]) or (None, None, None)
    return int(extra is not None)


def local_rules():
    """Rules that run in Snakemake's own process under a cluster executor (profiles/slurm): the per-
    benchmark score, tables, viewer and track jobs (seconds; track writes the one MLflow store), the
    closing prune-lock and dvc commit and the per-benchmark targets. Each rules file names its own light
    data rules."""
    names = ["all", "prune_lock", "dvc_commit", "book", "plan"]
    for b in BENCHMARKS:
        names += [b, f"{b}_score", f"{b}_tables", f"{b}_viewer", f"{b}_track"]
    return names


def plan_cache(wildcards):
    """The request cache's files for `snakemake plan` (rules/plan.smk)."""
    # The request cache (SQLite: its file and write-ahead log), when there is one, so a plan made
    # before a run is made again after it (the cached calls changed); none before the first run.
    path = config["cache"]["path"]
    return [p for p in (path, f"{path}-wal") if os.path.exists(p)]


# ---- the real-model run (rules/real.smk) -----------------------------------------------------------
from socialbench.core.config import overlay_params, read_params_file

REAL_ROOT = "results/real"
REAL_PARAMS = f"{REAL_ROOT}/params.yaml"
REAL_CONFIG = {}
if os.path.exists("params-real.yaml"):
    try:
        REAL_CONFIG = validate_params(
            overlay_params(_ORIGINS[0][1], read_params_file("params-real.yaml")), source="params.yaml + params-real.yaml"
        )
    except ConfigError as exc:
        from socialbench.core.io import one_line

        sys.exit(f"error: {one_line(exc)}")


def real_methods(benchmark):
    return list(REAL_CONFIG[benchmark]["methods"])


def real_runs(benchmark):
    return layout.runs(REAL_CONFIG, benchmark, real_methods(benchmark))


#: Backends that generate on this machine's CPU cores, in process (``hf``) or in a local server
#: (``transformers_serve``): their infer jobs take the cores the model's threads use.
CPU_MODEL_BACKENDS = ("hf", "transformers_serve")


def model_threads(models, model):
    """The cores a model's infer job takes (``models``: the run's params ``models``). A model that
    generates on this machine's cores (CPU_MODEL_BACKENDS) takes its threads (``options.threads``: in
    process, or the local server's), else every core: two model jobs on the same cores oversubscribe
    torch's threads (on 2 cores, two at once at 2 threads each were about 10x slower per token than
    one, where two at 1 thread each answer 1.5x as many prompts as one at 2; docs/benchmarks.md). Any
    other model takes one: an API's calls, a baseline, MiniLM's embeddings (one torch thread, as
    Snakemake sets OMP_NUM_THREADS to a job's threads), a vLLM server's GPU."""
    entry = models[model]
    if entry.get("backend") not in CPU_MODEL_BACKENDS:
        return 1
    n = (entry.get("options") or {}).get("threads")
    # not workflow.cores: a run without --cores (a cluster profile, --report) has none; Snakemake caps
    # a job's threads at --cores itself
    return n if isinstance(n, int) and n > 0 else os.cpu_count() or 1


#: Backends whose jobs of one model share one local server process (docs/scale-out.md).
LOCAL_SERVER_BACKENDS = ("transformers_serve", "vllm")


def real_model_priority(model):
    """In-process model jobs start before a local server's: the jobs of a served model queue on its one
    server (``transformers serve`` generates one request at a time), so two of them at once would hold
    two cores' worth of jobs for one core's work; started later, they take the cores the others leave."""
    return 0 if REAL_CONFIG["models"][model].get("backend") in LOCAL_SERVER_BACKENDS else 1


def real_model_files(model):
    entry = REAL_CONFIG["models"][model]
    return [p for p in (entry.get("model_path"), entry.get("gguf_file")) if isinstance(p, str)]
