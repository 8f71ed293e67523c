# MLflow: one run per (benchmark, model, method) under one parent run per invocation. One job per
# benchmark logs them all, behind a file lock, so parallel pipelines never contend for the store.

for _b in BENCHMARKS:
    stage(
        f"{_b}_track",
        benchmark=_b,
        rules=[f"{_b}_track"],
        method_hooks=methods(_b),  # the runs' method classes it asks (needs: which pairs run)
        deps=[*(layout.kind_dir(k, _b) for k in ("scores", "predictions", "traces")), f"results/tables/{_b}"],
        params=["mlflow"],
        # cached like every out, so `dvc pull` brings it back and a fresh clone has nothing to track
        outs=[f"results/mlflow/{_b}.json"],
    )

    rule:
        name:
            f"{_b}_track"
        input:
            scores=generic_outputs(_b)["scores"],
            predictions=result_files("predictions", _b),
            traces=result_files("traces", _b),
            viewer=generic_outputs(_b)["viewer"],
            stats=result_files("runs", _b),
            instances=BENCH[_b]["instances"],
            tables=generic_outputs(_b)["tables"],
            code=stage_code(f"{_b}_track"),
        output:
            summary=f"results/mlflow/{_b}.json",
        params:
            triggers=stage_params(f"{_b}_track"),
            benchmark=_b,
            score_files=" ".join(result_files("scores", _b)),
        log:
            f"logs/track/{_b}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench track --benchmark {params.benchmark} --params params.yaml --instances {input.instances}"
            " --predictions-dir results/predictions/{params.benchmark} --stats-dir results/runs/{params.benchmark}"
            " --traces-dir results/traces/{params.benchmark} --viewer-dir results/viewer/{params.benchmark}"
            " --tables-dir results/tables/{params.benchmark}"
            " --out {output.summary} {params.score_files} > {log} 2>&1"
