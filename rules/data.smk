# Raw source acquisition. For the embedded demo the raw source is generated, deterministically
# from the seed; data/raw is never edited by later stages.


rule moca_demo_data:
    input:
        code=stage_code("moca_demo_data"),
    output:
        test="data/raw/moca_demo/test.jsonl",
        dev="data/raw/moca_demo/dev.jsonl",
        media=directory("data/raw/moca_demo/media"),
    params:
        seed=config["seed"],
        demo=config["demo"],
    log:
        "logs/data/moca_demo.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench demo --params params.yaml --out-dir data/raw/moca_demo > {log} 2>&1"
