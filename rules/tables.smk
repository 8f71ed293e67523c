# Each benchmark's paper-style tables (Markdown, CSV, LaTeX) and its headline metrics for DVC.

for _b in BENCHMARKS:

    rule:
        name:
            f"{_b}_tables"
        input:
            scores=result_files("scores", _b, ".json"),
            code=stage_code(f"{_b}_tables"),
        output:
            tables=generic_outputs(_b)["tables"],
            headline=generic_outputs(_b)["headline"],
        params:
            benchmark=_b,
            out_dir=lambda wildcards, output: os.path.dirname(output.tables[0]),  # they all go in one folder
            categories={m: e["category"] for m, e in config["models"].items()},
            excluded={m: e.get("exclude_methods", {}) for m, e in config["models"].items()},
        log:
            f"logs/tables/{_b}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench tables --benchmark {params.benchmark} --params params.yaml --out-dir {params.out_dir}"
            " --headline {output.headline} {input.scores} > {log} 2>&1"
