# Scoring with each benchmark's metrics (MoCA section 3.3; MeetingToM 4.1): one job per benchmark
# scores every run (milliseconds each) into results/scores/<benchmark>/<model>/<run>.json and writes each
# instance's outcome as scored into results/outcomes/<benchmark>/<model>/<run>.jsonl (what the tables
# read per instance: they never score again); its outputs are those two folders (common.smk,
# generic_outputs), which Snakemake empties before the job.

for _b in BENCHMARKS:
    stage(
        f"{_b}_score",
        benchmark=_b,
        rules=[f"{_b}_score"],
        deps=[*BENCH[_b]["dvc"]["data"][:1], layout.kind_dir("predictions", _b)],
        params=[f"{_b}.subset"],  # a subset run's scores cover its sample
        outs=[layout.kind_dir("scores", _b), layout.kind_dir("outcomes", _b)],
    )

    rule:
        name:
            f"{_b}_score"
        input:
            instances=BENCH[_b]["instances"],
            predictions=result_files("predictions", _b),
            code=stage_code(f"{_b}_score"),
        output:
            scores=directory(generic_outputs(_b)["scores"]),
            outcomes=directory(generic_outputs(_b)["outcomes"]),
        params:
            triggers=stage_params(f"{_b}_score"),
            benchmark=_b,
            runs=run_args(_b, ordered=False),
        log:
            f"logs/score/{_b}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench score --benchmark {params.benchmark} --instances {input.instances} --params params.yaml"
            " --results-dir results"
            " {params.runs} > {log} 2>&1"
