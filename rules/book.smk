# The results book (`snakemake --cores N book`): one PDF of every benchmark's CSV tables and PNG
# figures, each footnoted with the MLflow run that logged it, its git commit, the data hash and the
# command that made it. Optional: it needs the `typst` wheel (extra `book`, pip only), so it is no
# input of rule all and the demo never builds it. Its inputs are the files it reads and its code, so
# it is rebuilt only when one of them changed (the run ids come from the store by those files'
# content).

# not versioned by DVC (the PDF is optional); its code input: what `socialbench book` imports. It runs
# no one benchmark's code (benchmark=None): it reads every benchmark's tables folder.
stage("book", benchmark=None, rules=["book"], dvc=False)


rule book:
    input:
        # the tables stage's files that go in the book: CSV tables and PNG figures
        files=[f for b in BENCHMARKS for f in generic_outputs(b)["tables"] if f.endswith((".csv", ".png"))],
        instances=[BENCH[b]["instances"] for b in BENCHMARKS],
        # track's summaries: their eval keys name the runs listed; rewritten when what track logs changed
        tracked=[generic_outputs(b)["tracked"] for b in BENCHMARKS],
        code=stage_code("book"),
    output:
        pdf="results/book/book.pdf",
        typ="results/book/book.typ",
    params:
        # one --benchmark/--tables-dir/--instances/--tracked group per benchmark, in the same order
        sections=lambda wildcards, input: " ".join(
            f"--benchmark {b} --tables-dir results/tables/{b} --instances {i} --tracked {t}"
            for b, i, t in zip(BENCHMARKS, input.instances, input.tracked)
        ),
    log:
        "logs/book.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench book {params.sections} --params params.yaml --out {output.pdf} --typ {output.typ} > {log} 2>&1"
