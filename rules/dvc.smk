# dvc.yaml follows params and the package: its generic stages (one infer stage per benchmark and
# model, one score, tables and track stage per benchmark) and every stage's code deps are written by
# socialbench.stages.dvc_yaml from what the rules files declare (BENCH[b]["dvc"]). Reading the
# workflow rewrites a stale dvc.yaml (a model added to params gets its stage with no further step),
# except inside `dvc repro` (DVC sets DVC_STAGE), where it only says so.

_DVC_DECLS = {b: BENCH[b]["dvc"] for b in BENCHMARKS}
with open("dvc.yaml", encoding="utf-8") as _fh:
    _DVC_OLD = _fh.read()
_DVC_NEW = dvc_yaml.render(_DVC_OLD, config, _DVC_DECLS)
if _DVC_NEW != _DVC_OLD:
    if os.environ.get("DVC_STAGE"):
        sys.stderr.write("note: dvc.yaml is not current with params.yaml and the code; run `snakemake -n` to rewrite it\n")
    else:
        with open("dvc.yaml", "w", encoding="utf-8") as _fh:
            _fh.write(_DVC_NEW)
        sys.stderr.write("dvc.yaml: generic stages and code deps rewritten from params.yaml and the package\n")


# `snakemake --cores N <benchmark>`: one benchmark's outputs only.
for _b in BENCHMARKS:

    rule:
        name:
            _b
        input:
            outputs=all_outputs([_b]),
