# Each benchmark's paper-style tables (Markdown, CSV, LaTeX; MoCA also its figures, intervals and paired
# tests, from the instances and predictions) and its headline metrics for DVC.

for _b in BENCHMARKS:

    rule:
        name:
            f"{_b}_tables"
        input:
            scores=result_files("scores", _b, ".json"),
            # per-instance statistics (intervals, paired tests) for a benchmark that takes them
            instances=BENCH[_b]["instances"],
            predictions=result_files("predictions", _b, ".jsonl"),
            code=stage_code(f"{_b}_tables"),
        output:
            tables=generic_outputs(_b)["tables"],
            headline=generic_outputs(_b)["headline"],
        params:
            benchmark=_b,
            out_dir=lambda wildcards, output: os.path.dirname(output.tables[0]),  # they all go in one folder
            categories={m: e["category"] for m, e in config["models"].items()},
            excluded={m: e.get("exclude_methods", {}) for m, e in config["models"].items()},
            # what the tables compare (MoCA: moca.tables) and the seed of their bootstrap
            settings=(config.get(_b) or {}).get("tables"),
            seed=config["seed"],
        log:
            f"logs/tables/{_b}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench tables --benchmark {params.benchmark} --params params.yaml --out-dir {params.out_dir}"
            " --headline {output.headline} --instances {input.instances}"
            " --predictions-dir results/predictions/{params.benchmark} {input.scores} > {log} 2>&1"
