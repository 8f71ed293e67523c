# Helpers shared by the rules. The config (params.yaml, plus any --configfile and --config given
# to snakemake) is validated here, at load, against src/socialbench/schemas/params.schema.json:
# defaults are filled and an unknown key or a bad value stops the run with a message naming it
# and the config file(s) it came from. Valid overrides are then refused (see below).

import os
import sys

from socialbench.config import validate_params
from socialbench.errors import ConfigError


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
    sys.exit(f"error: {exc}")
# The stages read params.yaml (`--params params.yaml`), and DVC records params.yaml's values: an
# override here would rerun jobs that then run, and record, params.yaml's values. Refused.
_OVERRIDES = [label for label, _ in _ORIGINS[1:]]
if _OVERRIDES:
    sys.exit(
        f"error: {', '.join(_OVERRIDES)}: overrides are not supported; the stages and DVC read params.yaml,"
        " so edit params.yaml (it is versioned with the results)"
    )

MODELS = list(config["models"])
METHODS = list(config["moca"]["methods"])
SCENARIOS = ["affection", "intent", "stance"]
MOCA_SPLIT = "test"


def moca_predictions():
    return expand("results/predictions/moca/{model}/{method}.jsonl", model=MODELS, method=METHODS)


def moca_stats():
    return expand("results/runs/moca/{model}/{method}.stats.json", model=MODELS, method=METHODS)


def moca_scores():
    return expand("results/scores/moca/{model}/{method}.json", model=MODELS, method=METHODS)


def moca_table_files():
    return expand("results/tables/moca/{scenario}.{ext}", scenario=SCENARIOS, ext=["md", "csv", "tex"])


MOCA_MEDIA_SPLITS = ["test", "dev"]
FRAME_CACHE = "data/interim/frames"


def media_io_pairs(wildcards, input, output):
    # One --input/--output pair per split, in the same order.
    return " ".join(f"--input {i} --output {o}" for i, o in zip(input.instances, output.instances))


def model_config(wildcards):
    # Passed as a rule param, so editing one model's entry reruns only that model's jobs.
    return config["models"][wildcards.model]

# Every rule runs in this environment under `--sdm conda`; by default, in the active venv.
CONDA_ENV = "../envs/socialbench.yaml"


# ---- code inputs ------------------------------------------------------------------------------
# Snakemake reruns a job when its inputs change, but package source is no input of a shell rule.
# Each rule therefore takes as inputs the source files its DVC stage depends on (dvc.yaml `deps`
# under src/, folders expanded), so a code change reruns the same jobs under both tools and the
# closing `dvc commit` never records outputs that older code built.
import yaml as _yaml
from pathlib import Path as _Path

with open("dvc.yaml", encoding="utf-8") as _fh:
    _DVC_STAGES = _yaml.safe_load(_fh)["stages"]


def stage_code(stage):
    files = []
    for dep in _DVC_STAGES[stage].get("deps", []):
        if not str(dep).startswith("src/"):
            continue
        path = _Path(dep)
        if path.is_dir():
            files += sorted(str(f) for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        else:
            files.append(str(path))
    return files
