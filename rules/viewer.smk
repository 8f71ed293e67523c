# The trace viewer: one static page per run (benchmark, model, method) with its rows in shard files
# beside it and the benchmark's thumbnails once in media/, all of a benchmark's runs in one job and
# one folder: what the model saw, said and got wrong, and each stage of a multi-stage method
# (docs/architecture.md, "Trace viewer"). Pages are derived from versioned files (instances,
# predictions, traces) and logged to MLflow by the track stage; DVC does not version them.

for _b in BENCHMARKS:
    # code input only (DVC keeps no pages); the runs' method classes draw their trace sections
    stage(f"{_b}_viewer", benchmark=_b, rules=[f"{_b}_viewer"], dvc=False, method_hooks=methods(_b))

    rule:
        name:
            f"{_b}_viewer"
        input:
            instances=BENCH[_b]["instances"],
            predictions=result_files("predictions", _b),
            traces=result_files("traces", _b),
            code=stage_code(f"{_b}_viewer"),
        output:
            pages=directory(generic_outputs(_b)["viewer"]),  # per run a page and its shards; media/ shared
        params:
            triggers=stage_params(f"{_b}_viewer"),  # its declaration names no params key
            benchmark=_b,
            runs=run_args(_b),
        log:
            f"logs/viewer/{_b}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench viewer --benchmark {params.benchmark} --params params.yaml --instances {input.instances}"
            " --results-dir results"
            " {params.runs} > {log} 2>&1"
