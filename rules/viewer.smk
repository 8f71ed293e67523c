# One static trace-viewer page per run (benchmark, model, method): what the model saw, said and got
# wrong, and each stage of a multi-stage method (docs/architecture.md, "Trace viewer"). Pages are
# derived from versioned files (instances, predictions, traces) and logged to MLflow by the track
# stage; they are not versioned by DVC themselves (their code inputs are the track stage's).

for _b in BENCHMARKS:

    rule:
        name:
            f"{_b}_viewer"
        input:
            instances=BENCH[_b]["instances"],
            predictions=f"results/predictions/{_b}/{{model}}/{{method}}.jsonl",
            traces=f"results/traces/{_b}/{{model}}/{{method}}.jsonl",
            code=stage_code(f"{_b}_track"),
        output:
            page=f"results/viewer/{_b}/{{model}}/{{method}}.html",
        params:
            benchmark=_b,
        log:
            f"logs/viewer/{_b}_{{model}}_{{method}}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench viewer --benchmark {params.benchmark} --instances {input.instances}"
            " --predictions {input.predictions} --traces {input.traces} --out {output.page} > {log} 2>&1"
