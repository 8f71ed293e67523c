# Paper-style tables per scenario (Markdown, CSV, LaTeX) and the headline metrics for DVC.


rule moca_tables:
    input:
        scores=moca_scores(),
        code=stage_code("moca_tables"),
    output:
        tables=moca_table_files(),
        overview="results/tables/moca/all.md",
        headline="results/metrics/moca.json",
    params:
        categories={m: e["category"] for m, e in config["models"].items()},
    log:
        "logs/tables/moca.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench tables --benchmark moca --params params.yaml --out-dir results/tables/moca"
        " --headline {output.headline} {input.scores} > {log} 2>&1"
