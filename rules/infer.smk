# Per-model inference, for every benchmark (one rule each, named <benchmark>_infer). Calls go
# through the request cache (cache.path), so reruns and resumed runs never repeat a finished call.
# Besides the predictions: the per-instance traces (every call's stage, cache key, text, tokens,
# finish reason) and the run's accounting.

for _b in BENCHMARKS:

    rule:
        name:
            f"{_b}_infer"
        input:
            instances=BENCH[_b]["instances"],
            dev=BENCH[_b]["dev"],
            model_files=model_files,
            code=stage_code_of(f"{_b}_infer"),
        output:
            predictions=f"results/predictions/{_b}/{{model}}/{{method}}.jsonl",
            trace=f"results/traces/{_b}/{{model}}/{{method}}.jsonl",
            stats=f"results/runs/{_b}/{{model}}/{{method}}.stats.json",
        params:
            benchmark=_b,
            model=model_config,
            method=lambda wildcards, b=_b: method_settings(b, wildcards.method),
            seed=config["seed"],
        log:
            f"logs/infer/{_b}_{{model}}_{{method}}.log",
        conda:
            CONDA_ENV
        resources:
            # `snakemake --resources model_slots=1` runs one model at a time (GPU or API quota).
            model_slots=1,
        shell:
            "socialbench infer --benchmark {params.benchmark} --instances {input.instances} --dev {input.dev}"
            " --model {wildcards.model} --method {wildcards.method} --params params.yaml"
            " --out {output.predictions} --trace {output.trace} --stats {output.stats} > {log} 2>&1"
