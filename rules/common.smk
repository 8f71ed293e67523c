# Helpers shared by the rules. The config (params.yaml, plus any --configfile and --config given
# to snakemake) is validated here, at load, against the core JSON schema and each benchmark's own
# (src/socialbench/core/schemas/params.schema.json, src/socialbench/<benchmark>/params.schema.json):
# defaults are filled and an unknown key or a bad value stops the run with a message naming it
# and the config file(s) it came from. Valid overrides are then refused (see below).

import os
import sys

from socialbench.core.benchmarks import available_benchmarks, excluded, get_benchmark_class
from socialbench.core.config import validate_params
from socialbench.core.errors import ConfigError


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
                return yaml.safe_load(fh) or {}
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

MODELS = list(config["models"])
#: The benchmarks this run evaluates: every registered benchmark with a section in params.yaml.
#: Each has a rules file rules/<benchmark>.smk (its own data stages) included by the Snakefile.
BENCHMARKS = [b for b in available_benchmarks() if b in config]
#: Their plug-in classes (imported lazily by the registry).
BENCH_CLASSES = {b: get_benchmark_class(b) for b in BENCHMARKS}
#: Per benchmark, what its rules file declares: the instances and dev split inference reads, the
#: file names its tables stage writes, and every output of its own rules (rule all and the closing
#: `dvc commit` collect them).
BENCH = {}


def methods(benchmark):
    return list(config[benchmark]["methods"])


def runs(benchmark):
    """(model, method) pairs: every model with every method of the benchmark. A pair a model
    excludes in params (`exclude_methods`) still has its files, as DVC's matrix does: its
    predictions record the exclusion and its reason, no model is called, and the tables show the
    reason instead of a row."""
    return [(m, meth) for m in MODELS for meth in methods(benchmark)]


def result_files(kind, benchmark, ext):
    """results/<kind>/<benchmark>/<model>/<method><ext> for every run of the benchmark."""
    return [f"results/{kind}/{benchmark}/{m}/{meth}{ext}" for m, meth in runs(benchmark)]


def generic_outputs(benchmark):
    """The outputs of the generic stages (infer, score, tables, track) of a benchmark."""
    return {
        "predictions": result_files("predictions", benchmark, ".jsonl"),
        "traces": result_files("traces", benchmark, ".jsonl"),
        "stats": result_files("runs", benchmark, ".stats.json"),
        "scores": result_files("scores", benchmark, ".json"),
        "tables": [f"results/tables/{benchmark}/{name}" for name in BENCH[benchmark]["tables"]],
        "headline": f"results/metrics/{benchmark}.json",
        # one file per (model, method) the tables score (excluded pairs have none): a `dvc metrics show` row each
        "run_metrics": [f"results/metrics/{benchmark}/{m}/{meth}.json" for m, meth in runs(benchmark)
                        if not excluded(config["models"][m], benchmark, meth)],
        "tracked": f"results/mlflow/{benchmark}.json",
        "viewer": result_files("viewer", benchmark, ".html"),
    }


def all_outputs():
    """Every output of every benchmark, intermediate ones too, so a deleted one is rebuilt."""
    out = []
    for b in BENCHMARKS:
        for value in [*BENCH[b]["outputs"].values(), *generic_outputs(b).values()]:
            out += value if isinstance(value, list) else [value]
    return out


def media_io_pairs(wildcards, input, output):
    # One --input/--output pair per split, in the same order.
    return " ".join(f"--input {i} --output {o}" for i, o in zip(input.instances, output.instances))


def model_files(wildcards):
    # Files a model entry names (the file backend's answers, options.path): a changed file reruns it.
    path = (config["models"][wildcards.model].get("options") or {}).get("path")
    return [path] if isinstance(path, str) else []


def method_settings(benchmark, method):
    """The benchmark section's settings of a method (method_options.<method>, and MoCA's answer
    parsing): a rule param, so changing them reruns that method's jobs only."""
    section = config[benchmark]
    if BENCH_CLASSES[benchmark].run_variants:  # a run may be <method>__<ablation>: the settings it gets
        return {"options": BENCH_CLASSES[benchmark]().method_settings(section, method), "answer": section.get("answer")}
    return {"options": (section.get("method_options") or {}).get(method, {}), "answer": section.get("answer")}


def model_config(wildcards):
    # Passed as a rule param, so editing one model's entry reruns only that model's jobs.
    return config["models"][wildcards.model]


# Every rule runs in this environment under `--sdm conda`; by default, in the active venv.
CONDA_ENV = "../envs/socialbench.yaml"


# ---- code inputs ------------------------------------------------------------------------------
# Snakemake reruns a job when its inputs change, but package source is no input of a shell rule.
# Each rule therefore takes as inputs the source files its DVC stage depends on (dvc.yaml `deps`
# under src/, folders expanded, ${item.*} filled in), so a code change reruns the same jobs under
# both tools and the closing `dvc commit` never records outputs that older code built.
import yaml as _yaml
from pathlib import Path as _Path

with open("dvc.yaml", encoding="utf-8") as _fh:
    _DVC_STAGES = _yaml.safe_load(_fh)["stages"]


def stage_code(stage, **item):
    if stage not in _DVC_STAGES:
        sys.exit(f"error: dvc.yaml has no stage {stage}: each rule takes its DVC stage's code deps as inputs,"
                 " so a benchmark declares its stages there too (docs/architecture.md, adding a benchmark)")
    files = []
    for dep in _DVC_STAGES[stage].get("deps", []):
        dep = str(dep)
        for key, value in item.items():
            dep = dep.replace("${item.%s}" % key, value)
        if not dep.startswith("src/"):
            continue
        path = _Path(dep)
        if path.is_dir():
            files += sorted(str(f) for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        else:
            files.append(str(path))
    return files


def stage_code_of(stage):
    """An input function: the code of a matrix stage for the job's model and method."""
    return lambda wildcards: stage_code(stage, model=wildcards.model, method=wildcards.method)
