# socialbench workflow: this file only wires. Stages live in rules/<stage>.smk, helpers in
# rules/common.smk (which validates params.yaml against its JSON schema at load).

configfile: "params.yaml"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/prepare.smk"
include: "rules/media.smk"
include: "rules/infer.smk"
include: "rules/score.smk"
include: "rules/tables.smk"
include: "rules/track.smk"
include: "rules/version.smk"


rule all:
    input:
        # Every output, intermediate ones too, so a deleted one is rebuilt (from the request cache).
        predictions=moca_predictions(),
        stats=moca_stats(),
        scores=moca_scores(),
        tables=moca_table_files(),
        headline="results/metrics/moca.json",
        tracked="results/mlflow/moca.json",
        versioned="results/dvc-committed.txt",
