# `snakemake plan` (before `snakemake --cores N`): what the run will take, per benchmark, model and run
# params define: calls (exact, or fewest-most for a multi-call method), calls already in the request
# cache, input and output tokens, USD and wall time, and warnings where params `plan` budgets are
# exceeded (docs/plan.md). It needs only the processed instances (built first when missing) and calls
# no model. Not an input of rule all and of no other job: it is asked for by name.


rule plan:
    input:
        instances=[BENCH[b]["instances"] for b in BENCHMARKS],
        dev=[BENCH[b]["dev"] for b in BENCHMARKS],
        params="params.yaml",  # models, prices, runs, subsets and budgets
        cache=plan_cache,
    output:
        json="results/plan/plan.json",
        md="results/plan/plan.md",
    params:
        # one --instances/--dev pair per benchmark: the files inference reads
        splits=lambda wildcards, input: " ".join(
            f"--instances {b}={i} --dev {b}={d}" for b, i, d in zip(BENCHMARKS, input.instances, input.dev)
        ),
    log:
        "logs/plan.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench plan --params params.yaml {params.splits} --out {output.json} --md {output.md} > {log} 2>&1"
        " && cat {output.md}"
