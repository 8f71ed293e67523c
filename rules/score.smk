# Scoring with each benchmark's metrics (MoCA section 3.3), per model and method.

for _b in BENCHMARKS:

    rule:
        name:
            f"{_b}_score"
        input:
            instances=BENCH[_b]["instances"],
            predictions=f"results/predictions/{_b}/{{model}}/{{method}}.jsonl",
            code=stage_code_of(f"{_b}_score"),
        output:
            scores=f"results/scores/{_b}/{{model}}/{{method}}.json",
        params:
            benchmark=_b,
        log:
            f"logs/score/{_b}_{{model}}_{{method}}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench score --benchmark {params.benchmark} --instances {input.instances}"
            " --predictions {input.predictions} --out {output.scores} > {log} 2>&1"
