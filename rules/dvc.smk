# dvc.yaml is written from the stage declarations (`stage(...)` beside each rule; rules/common.smk):
# every stage's desc, cmd, data and code deps, params and outs (socialbench.stages.dvc_yaml). Reading
# the workflow rewrites a stale dvc.yaml (a model added to params gets its stage with no further
# step), except inside `dvc repro` (DVC sets DVC_STAGE), where it only says so.

with open("dvc.yaml", encoding="utf-8") as _fh:
    _DVC_OLD = _fh.read()
_DVC_NEW = dvc_yaml.render(
    _DVC_OLD,
    {
        n: dvc_yaml.dvc_stage(d, _ORIGINS[0][1], stage_code_deps(n))
        for n, d in STAGES.items()
        if d.get("dvc", True)
    },
    {n: d["comment"] for n, d in STAGES.items() if d.get("comment")},
)
dvc_yaml.save_summaries()  # the source files' summaries, for the next read of the workflow
if _DVC_NEW != _DVC_OLD:
    if os.environ.get("DVC_STAGE"):
        sys.stderr.write("note: dvc.yaml is not current with the stage declarations and the code; run `snakemake -n` to rewrite it\n")
    else:
        with open("dvc.yaml", "w", encoding="utf-8") as _fh:
            _fh.write(_DVC_NEW)
        sys.stderr.write("dvc.yaml: rewritten from the stage declarations, params.yaml and the package\n")


# `snakemake --cores N <benchmark>`: one benchmark's outputs only.
for _b in BENCHMARKS:

    rule:
        name:
            _b
        input:
            outputs=all_outputs([_b]),
