# Filtering: schema and taxonomy validation; bad records are dropped into a report with reasons.


rule moca_prepare:
    input:
        raw="data/raw/moca_demo/{split}.jsonl",
        media="data/raw/moca_demo/media",
        code=stage_code("moca_prepare"),
    output:
        instances="data/interim/moca/{split}.jsonl",  # the media stage (rules/media.smk) adds frames
        report="results/reports/moca_prepare_{split}.jsonl",
    log:
        "logs/prepare/moca_{split}.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench prepare --benchmark moca --raw {input.raw} --out {output.instances}"
        " --report {output.report} > {log} 2>&1"
