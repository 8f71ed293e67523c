# MLflow: one run per (benchmark, model, method) under one parent run per invocation. One job
# logs them all, behind a file lock, so parallel pipelines never contend for the sqlite store.


rule moca_track:
    input:
        scores=moca_scores(),
        predictions=moca_predictions(),
        stats=moca_stats(),
        instances=f"data/processed/moca/{MOCA_SPLIT}.jsonl",
        tables=moca_table_files(),
        code=stage_code("moca_track"),
    output:
        summary="results/mlflow/moca.json",
    log:
        "logs/track/moca.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench track --benchmark moca --params params.yaml --instances {input.instances}"
        " --predictions-dir results/predictions/moca --stats-dir results/runs/moca"
        " --tables-dir results/tables/moca"
        " --out {output.summary} {input.scores} > {log} 2>&1"
