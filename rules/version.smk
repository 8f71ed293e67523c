# Versioning: after a full run, record the outputs in DVC's cache and dvc.lock (`dvc commit`), so
# that `dvc status` / `dvc repro` see the pipeline as up to date and `dvc push` can share the data.
# Only `rule all` asks for this file; the Snakemake targets that DVC stages build never do, so the
# commit never runs inside `dvc repro`. `--force` commits without asking because Snakemake has just
# brought every output up to date with its inputs, code included: each rule takes its DVC stage's
# source files as inputs (stage_code in common.smk), so no output built by older code is recorded.


stage("prune_lock", benchmark=None, rules=["prune_lock"], dvc=False)
stage("dvc_commit", benchmark=None, rules=["dvc_commit"], dvc=False)


rule prune_lock:
    # DVC keeps the lock entries of a removed model's or method's stages; they go here, before the
    # commit and in a job of its own, so that the run's single-core end is the commit alone: the commit
    # adds entries only for the stages dvc.yaml defines, so the lock comes out the same.
    input:
        stages="dvc.yaml",
        code=stage_code("prune_lock"),
    output:
        marker="results/dvc-lock-pruned.txt",
    log:
        "logs/version/prune_lock.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench prune-lock --repo . > {output.marker} 2> {log}"


rule dvc_commit:
    input:
        outputs=all_outputs(),
        stages="dvc.yaml",  # a changed stage definition is committed too
        pruned=rules.prune_lock.output.marker,
        code=stage_code("dvc_commit"),
    output:
        marker="results/dvc-committed.txt",
    log:
        "logs/version/dvc_commit.log",
    conda:
        CONDA_ENV
    shell:
        # `dvc commit --force --no-relink` with DVC's code, each params file and git's index read once
        # (results/commit.py). No relink: the workspace files stay as they are (a relink rewrites each file
        # output, and the new mtimes would make Snakemake rerun the jobs that read them, e.g. infer after
        # test.jsonl). The marker names the dvc.lock committed (no closing `dvc status`: a DVC start-up).
        "socialbench commit --repo . > {log} 2>&1 && sha256sum dvc.lock > {output.marker}"
