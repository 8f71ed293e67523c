# Inference: one job per (benchmark, model) running every run of that model on the benchmark in one
# process (one loaded model, one backend event loop; the runner batches each method's rounds), still
# one prediction, trace and stats file per run. Pairs params exclude have no job and no files. Calls
# go through the request cache (cache.path), so reruns and resumed runs never repeat a finished call.

for _b in BENCHMARKS:
    for _model, _params_runs in model_runs(_b).items():
        # sorted: reordering params' methods changes no output of the job, so it reruns nothing (its
        # triggers, arguments and DVC stage are the same)
        _runs = sorted(_params_runs)
        _stage = dvc_yaml.infer_stage_name(_b, _model)
        stage(
            _stage,
            benchmark=_b,
            rules=[dvc_yaml.rule_name(_stage)],
            runs=_runs,
            deps=[*BENCH[_b]["dvc"]["data"], *model_files(_model), *BENCH[_b]["dvc"].get("infer_deps", lambda runs: [])(_runs)],
            params=infer_params(_b, _model, _runs),  # the model's entry and what its runs' settings read
            outs=[layout.run_path(k, _b, _model, r) for k in ("predictions", "traces") for r in _runs],
        )

        rule:
            name:
                dvc_yaml.rule_name(_stage)
            input:
                instances=BENCH[_b]["instances"],
                dev=BENCH[_b]["dev"],
                model_files=model_files(_model),
                # what else the benchmark says this model's runs read (MoCA: the retriever's corpus)
                extra=BENCH[_b].get("infer_inputs", lambda runs: [])(_runs),
                code=stage_code(_stage),
            output:
                predictions=layout.run_files("predictions", _b, [(_model, r) for r in _runs]),
                traces=layout.run_files("traces", _b, [(_model, r) for r in _runs]),
                stats=layout.run_files("runs", _b, [(_model, r) for r in _runs]),
            params:
                triggers=stage_params(_stage),
                benchmark=_b,
                model_name=_model,
                method_args=" ".join(f"--method {r}" for r in _runs),
            priority:
                model_priority(_model)  # the long jobs first (rules/common.smk)
            # a model generating on this machine's cores takes the cores its threads use (rules/common.smk)
            threads: model_threads(config["models"], _model)
            log:
                f"logs/infer/{_b}_{_model}.log",
            conda:
                CONDA_ENV
            resources:
                # `snakemake --resources model_slots=1` runs one model at a time (GPU or API quota).
                model_slots=1,
                # what the job asks a cluster for (params `resources`; GPUs from the model's
                # tensor-parallel size): read by profiles/slurm, ignored by a local run
                **job_resources("infer", _model),
            shell:
                "socialbench infer --benchmark {params.benchmark} --instances {input.instances} --dev {input.dev}"
                " --model {params.model_name} --params params.yaml --results-dir results {params.method_args}"
                " > {log} 2>&1"


# One `vllm serve` per open-weight model on a node, shared by that model's jobs
# (socialbench.backends.vllm_servers). A local run keeps each server between its model's jobs (its
# MoCA and MeetingToM jobs load it once) and stops the idle ones here at the end; under a cluster
# executor each server ends with the last job using it (the hooks run on the submitting host).
from socialbench.backends import vllm_servers as _vllm_servers


onstart:
    if workflow.local_exec and workflow.is_main_process:
        os.environ.setdefault(_vllm_servers.KEEP_ENV, "1")


onsuccess:
    _vllm_servers.stop_servers(started_in=os.getcwd())


onerror:
    _vllm_servers.stop_servers(started_in=os.getcwd())
