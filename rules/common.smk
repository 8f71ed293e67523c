# Helpers shared by the rules. params.yaml is validated here, at load, against
# src/socialbench/schemas/params.schema.json: defaults are filled and an unknown key or a bad
# value stops the run with a message naming it.

import sys

from socialbench.config import validate_params
from socialbench.errors import ConfigError

try:
    config.update(validate_params(config, source="params.yaml"))
except ConfigError as exc:
    sys.exit(f"error: {exc}")

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
