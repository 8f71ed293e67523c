# Per-model inference. Calls go through the request cache (cache.path), so reruns and resumed
# runs never repeat a finished call.


rule moca_infer:
    input:
        instances=f"data/processed/moca/{MOCA_SPLIT}.jsonl",
        dev="data/processed/moca/dev.jsonl",
        code=stage_code("moca_infer"),
    output:
        predictions="results/predictions/moca/{model}/{method}.jsonl",
        stats="results/runs/moca/{model}/{method}.stats.json",
    params:
        model=model_config,
        seed=config["seed"],
    log:
        "logs/infer/moca_{model}_{method}.log",
    conda:
        CONDA_ENV
    resources:
        # `snakemake --resources model_slots=1` runs one model at a time (GPU or API quota).
        model_slots=1,
    shell:
        "socialbench infer --benchmark moca --instances {input.instances} --dev {input.dev}"
        " --model {wildcards.model} --method {wildcards.method} --params params.yaml"
        " --out {output.predictions} --stats {output.stats} > {log} 2>&1"
