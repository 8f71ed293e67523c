# The real-model run (`snakemake --cores 2 real`; README, docs/backends.md): a small generative model
# answers a stratified sample of both benchmarks on CPU, in-process (and, where params-real.yaml names one,
# behind a local OpenAI-compatible server). Not part of rule all. Its params are params.yaml with
# params-real.yaml put over it (socialbench.core.config.overlay_params), written to results/real/params.yaml
# by the rule real_params (socialbench check-params --overlay); its outputs go under results/real/. The demo's data stages
# are shared; the run's own jobs are real_<stage>_... (infer per model; score, tables, viewer, track per benchmark).

# Its params (REAL_CONFIG) and helpers (real_runs, ...) are in rules/common.smk, "the real-model run".


# The run's params file: params.yaml with params-real.yaml over it, validated, defaults filled.
rule real_params:
    input:
        params="params.yaml",
        overlay="params-real.yaml",
    output:
        params=REAL_PARAMS,
    log:
        "logs/real/params.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench check-params --params {input.params} --overlay {input.overlay} --out {output.params} > {log} 2>&1"


REAL_BENCHMARKS = [b for b in BENCHMARKS if REAL_CONFIG and b in REAL_CONFIG]
REAL_TARGETS = []

# The model folders params-real.yaml asks for that params.yaml does not (rules/weights.smk makes those).
for _w, _source in (REAL_CONFIG.get("weights") or {}).items() if REAL_CONFIG else []:
    if _w in config.get("weights", {}):
        continue

    rule:
        name:
            f"real_weights_{_w}"
        input:
            gguf=[_source["gguf"]] if "gguf" in _source else [],
        output:
            folder=directory(f"data/models/{_w}"),
        params:
            source=f"--gguf {_source['gguf']}" if "gguf" in _source else f"--package {_source.get('package')}",
        log:
            f"logs/weights/{_w}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench weights convert {params.source} --out {output.folder} > {log} 2>&1"


for _b in REAL_BENCHMARKS:
    for _model, _runs in layout.model_runs(REAL_CONFIG, _b, real_methods(_b)).items():

        rule:
            name:
                f"real_infer_{_b}_{_model}"
            input:
                instances=BENCH[_b]["instances"],
                dev=BENCH[_b]["dev"],
                params=REAL_PARAMS,
                model_files=real_model_files(_model),
                extra=BENCH[_b].get("infer_inputs", lambda runs: [])(_runs),
            output:
                predictions=layout.run_files("predictions", _b, [(_model, r) for r in _runs], REAL_ROOT),
                traces=layout.run_files("traces", _b, [(_model, r) for r in _runs], REAL_ROOT),
                stats=layout.run_files("runs", _b, [(_model, r) for r in _runs], REAL_ROOT),
            params:
                benchmark=_b,
                model_name=_model,
                method_args=" ".join(f"--method {r}" for r in _runs),
            log:
                f"logs/real/infer_{_b}_{_model}.log",
            threads: model_threads(REAL_CONFIG["models"], _model)
            priority: real_model_priority(_model)
            conda:
                CONDA_ENV
            resources:
                model_slots=1,
            shell:
                "socialbench infer --benchmark {params.benchmark} --instances {input.instances} --dev {input.dev}"
                " --model {params.model_name} --params {input.params}"
                f" --results-dir {REAL_ROOT}"
                " {params.method_args} --no-progress > {log} 2>&1"

    _predictions = layout.run_files("predictions", _b, real_runs(_b), REAL_ROOT)
    _scores = layout.run_files("scores", _b, real_runs(_b), REAL_ROOT)

    rule:
        name:
            f"real_score_{_b}"
        input:
            instances=BENCH[_b]["instances"],
            params=REAL_PARAMS,
            predictions=_predictions,
        output:
            scores=directory(layout.kind_dir("scores", _b, REAL_ROOT)),
            outcomes=directory(layout.kind_dir("outcomes", _b, REAL_ROOT)),
        params:
            benchmark=_b,
            runs=" ".join(f"--run {m}/{r}" for m, r in real_runs(_b)),
        log:
            f"logs/real/score_{_b}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench score --benchmark {params.benchmark} --instances {input.instances} --params {input.params}"
            f" --results-dir {REAL_ROOT}"
            " {params.runs} > {log} 2>&1"

    rule:
        name:
            f"real_tables_{_b}"
        input:
            scores=layout.kind_dir("scores", _b, REAL_ROOT),
            outcomes=layout.kind_dir("outcomes", _b, REAL_ROOT),
            instances=BENCH[_b]["instances"],
            params=REAL_PARAMS,
            predictions=_predictions,  # the answers table's finish reasons
        output:
            tables=directory(f"{REAL_ROOT}/tables/{_b}"),
            headline=f"{REAL_ROOT}/metrics/{_b}.json",
        params:
            benchmark=_b,
            score_files=" ".join(_scores),
        log:
            f"logs/real/tables_{_b}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench tables --benchmark {params.benchmark} --params {input.params} --out-dir {output.tables}"
            " --headline {output.headline} --instances {input.instances} --outcomes-dir {input.outcomes}"
            f" --answers-table --predictions-dir {REAL_ROOT}/predictions/"
            "{params.benchmark} {params.score_files} > {log} 2>&1"

    # The trace viewer's pages of the run (rules/viewer.smk's command, under results/real/viewer/<benchmark>).
    rule:
        name:
            f"real_viewer_{_b}"
        input:
            instances=BENCH[_b]["instances"],
            params=REAL_PARAMS,
            predictions=_predictions,
            traces=layout.run_files("traces", _b, real_runs(_b), REAL_ROOT),
        output:
            pages=directory(layout.kind_dir("viewer", _b, REAL_ROOT)),
        params:
            benchmark=_b,
            runs=" ".join(f"--run {m}/{r}" for m, r in real_runs(_b)),
        log:
            f"logs/real/viewer_{_b}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench viewer --benchmark {params.benchmark} --params {input.params} --instances {input.instances}"
            f" --results-dir {REAL_ROOT}"
            " {params.runs} > {log} 2>&1"

    # The run's MLflow runs (rules/track.smk's command): the same store and experiment (params mlflow), one
    # run per (benchmark, model, method); the summary of what was logged under results/real/mlflow/.
    rule:
        name:
            f"real_track_{_b}"
        input:
            scores=layout.kind_dir("scores", _b, REAL_ROOT),
            predictions=_predictions,
            traces=layout.run_files("traces", _b, real_runs(_b), REAL_ROOT),
            viewer=layout.kind_dir("viewer", _b, REAL_ROOT),
            stats=layout.run_files("runs", _b, real_runs(_b), REAL_ROOT),
            instances=BENCH[_b]["instances"],
            params=REAL_PARAMS,
            tables=f"{REAL_ROOT}/tables/{_b}",
        output:
            summary=f"{REAL_ROOT}/mlflow/{_b}.json",
        params:
            benchmark=_b,
            score_files=" ".join(_scores),
        log:
            f"logs/real/track_{_b}.log",
        conda:
            CONDA_ENV
        shell:
            "socialbench track --benchmark {params.benchmark} --params {input.params} --instances {input.instances}"
            f" --predictions-dir {REAL_ROOT}/predictions/"
            "{params.benchmark}"
            f" --stats-dir {REAL_ROOT}/runs/"
            "{params.benchmark}"
            f" --traces-dir {REAL_ROOT}/traces/"
            "{params.benchmark}"
            " --viewer-dir {input.viewer} --tables-dir {input.tables}"
            " --out {output.summary} {params.score_files} > {log} 2>&1"

    REAL_TARGETS += [
        f"{REAL_ROOT}/tables/{_b}",
        f"{REAL_ROOT}/metrics/{_b}.json",
        layout.kind_dir("viewer", _b, REAL_ROOT),
        f"{REAL_ROOT}/mlflow/{_b}.json",
    ]


# `snakemake --cores 2 real_book`: the results book (rules/book.smk's command) of the real run's tables and
# figures, each footnoted with the MLflow run real_track_<benchmark> logged. Optional like the demo's book
# (it needs the `typst` wheel, extra `book`), so it is no input of rule real.
rule real_book:
    input:
        tables=[f"{REAL_ROOT}/tables/{b}" for b in REAL_BENCHMARKS],
        instances=[BENCH[b]["instances"] for b in REAL_BENCHMARKS],
        tracked=[f"{REAL_ROOT}/mlflow/{b}.json" for b in REAL_BENCHMARKS],
        params=REAL_PARAMS,
    output:
        pdf=f"{REAL_ROOT}/book/book.pdf",
        typ=f"{REAL_ROOT}/book/book.typ",
    params:
        # one --benchmark/--tables-dir/--instances/--tracked group per benchmark, in the same order
        sections=lambda wildcards, input: " ".join(
            f"--benchmark {b} --tables-dir {d} --instances {i} --tracked {t} --tables-rule real_tables_{b}"
            for b, d, i, t in zip(REAL_BENCHMARKS, input.tables, input.instances, input.tracked)
        ),
    log:
        "logs/real/book.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench book {params.sections} --params {input.params} --out {output.pdf} --typ {output.typ} > {log} 2>&1"


# `snakemake --cores 2 real`: the real-model run's tables, trace viewer pages and MLflow runs on both benchmarks.
rule real:
    input:
        REAL_TARGETS,
