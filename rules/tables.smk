# Each benchmark's paper-style tables (Markdown, CSV, LaTeX; MoCA also its figures, intervals and paired
# tests, from the instances and each run's outcomes, written by the score job) and its headline metrics
# for DVC.



def report_tables(benchmark, files):
    """The tables stage's files, those a reader wants in `snakemake --report` flagged with a caption and
    a place (category = benchmark, subcategory = kind): CSV tables (rendered as tables), PNG figures,
    LaTeX tables (downloads). Markdown copies and PDF figures repeat them, so they stay unflagged."""
    out = []
    for path in files:
        name = os.path.basename(path)
        kind = ("figures" if name.endswith(".png") else "intervals" if name.endswith(".ci.csv")
                else "paired tests" if name == "tests.csv" else "figure data" if "figures/" in path and name.endswith(".csv")
                else "tables" if name.endswith(".csv") else "LaTeX" if name.endswith(".tex") else None)
        if kind is None:
            out.append(path)
            continue
        caption = "../report/figure.rst" if kind in ("figures", "figure data") else "../report/table.rst"
        out.append(report(path, caption=caption, category=benchmark, subcategory=kind,
                          labels={"benchmark": benchmark, "file": name}))
    return out


for _b in BENCHMARKS:
    stage(
        f"{_b}_tables",
        benchmark=_b,
        rules=[f"{_b}_tables"],
        method_hooks=methods(_b),  # the runs' method classes it asks (needs: which pairs run)
        deps=[layout.kind_dir("scores", _b), *BENCH[_b]["dvc"]["data"][:1], layout.kind_dir("outcomes", _b)],
        params=BENCH[_b]["dvc"]["tables_params"],
        outs=[f"results/tables/{_b}"],
        metrics=[layout.kind_dir("metrics", _b)],  # one file per run: a row each in `dvc metrics show`
    )

    rule:
        name:
            f"{_b}_tables"
        input:
            scores=generic_outputs(_b)["scores"],
            # per-instance statistics (intervals, paired tests) for a benchmark that takes them
            instances=BENCH[_b]["instances"],
            outcomes=generic_outputs(_b)["outcomes"],
            code=stage_code(f"{_b}_tables"),
        output:
            tables=report_tables(_b, generic_outputs(_b)["tables"]),
            headline=report(generic_outputs(_b)["headline"], caption="../report/headline.rst", category=_b,
                            subcategory="headline metrics", labels={"benchmark": _b, "file": "headline metrics"}),
            run_metrics=directory(generic_outputs(_b)["run_metrics"]),  # written by `tables` beside the headline
        params:
            triggers=stage_params(f"{_b}_tables"),
            benchmark=_b,
            out_dir=lambda wildcards, output: os.path.dirname(output.tables[0]),  # they all go in one folder
            score_files=" ".join(result_files("scores", _b)),
        log:
            f"logs/tables/{_b}.log",
        conda:
            CONDA_ENV
        shell:
            # Runs params no longer name (a model or method removed) are moved to results/archive/ first,
            # so no folder a later stage or DVC reads holds them (docs/dvc-and-snakemake.md): the infer
            # jobs' files. Their score, outcomes, page and metrics files are gone already: those folders are
            # the score, viewer and tables jobs' outputs, which Snakemake empties before each job (and the
            # viewer job may be emptying its folder right now).
            "socialbench prune-outputs --benchmark {params.benchmark} --params params.yaml --results results"
            " --kind predictions --kind traces --kind runs"
            " --archive results/archive --report results/archive/pruned.jsonl > {log} 2>&1 && "
            "socialbench tables --benchmark {params.benchmark} --params params.yaml --out-dir {params.out_dir}"
            " --headline {output.headline} --instances {input.instances}"
            " --outcomes-dir {input.outcomes} {params.score_files} >> {log} 2>&1"
