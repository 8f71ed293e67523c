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
        # Every output, intermediate ones too, so a deleted one is rebuilt (model calls come from
        # the request cache, frames from the frame cache).
        raw=expand("data/raw/moca_demo/{split}.jsonl", split=MOCA_MEDIA_SPLITS),
        raw_media="data/raw/moca_demo/media",
        interim=expand("data/interim/moca/{split}.jsonl", split=MOCA_MEDIA_SPLITS),
        prepare_reports=expand("results/reports/moca_prepare_{split}.jsonl", split=MOCA_MEDIA_SPLITS),
        processed=expand("data/processed/moca/{split}.jsonl", split=MOCA_MEDIA_SPLITS),
        media_reports=["results/reports/media.jsonl", "results/reports/media.md"],
        frames_index=rules.moca_frames.output.index,
        predictions=moca_predictions(),
        stats=moca_stats(),
        scores=moca_scores(),
        tables=moca_table_files(),
        headline="results/metrics/moca.json",
        tracked="results/mlflow/moca.json",
        versioned="results/dvc-committed.txt",
