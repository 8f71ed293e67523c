# Scoring (MoCA section 3.3), per model and method.


rule moca_score:
    input:
        instances=f"data/processed/moca/{MOCA_SPLIT}.jsonl",
        predictions="results/predictions/moca/{model}/{method}.jsonl",
        code=stage_code("moca_score"),
    output:
        scores="results/scores/moca/{model}/{method}.json",
    log:
        "logs/score/moca_{model}_{method}.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench score --benchmark moca --instances {input.instances}"
        " --predictions {input.predictions} --out {output.scores} > {log} 2>&1"
