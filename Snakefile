# socialbench workflow: this file only wires. Each benchmark's own data stages live in
# rules/<benchmark>.smk, the stages every benchmark shares in rules/<stage>.smk (one rule per
# benchmark each), helpers in rules/common.smk (which validates params.yaml at load).

# params.yaml is read by socialbench's strict loader first: a broken file stops here with the line and
# column and the message `socialbench check-params` gives (Snakemake's own parse names neither).
from socialbench.core.config import exit_if_unreadable

exit_if_unreadable("params.yaml")


configfile: "params.yaml"


# `snakemake --report results/report.html`: one shareable page of a run (tables, figures, headline
# metrics, drop and media reports; captions in report/).
report: "report/workflow.rst"


include: "rules/common.smk"


for _benchmark in BENCHMARKS:

    include: f"rules/{_benchmark}.smk"


include: "rules/moca_sources.smk"  # MoCA's real raw sources: no jobs unless params name some
include: "rules/weights.smk"  # model folders from GGUF weights (params weights:); no jobs unless params name some
include: "rules/infer.smk"
include: "rules/score.smk"
include: "rules/tables.smk"
include: "rules/viewer.smk"
include: "rules/track.smk"
include: "rules/version.smk"
include: "rules/book.smk"  # the results book: optional, not in rule all
include: "rules/real.smk"  # `snakemake --cores 2 real`: a real model on CPU (params-real.yaml); not in rule all
include: "rules/plan.smk"  # `snakemake plan`: calls, tokens, cost and time before a run; not in rule all
include: "rules/dvc.smk"  # dvc.yaml rewritten when stale; per-benchmark targets


# Light jobs run in Snakemake's own process under a cluster executor (profiles/slurm, docs/scale-out.md);
# the heavy ones (media, inference, data preparation) are submitted with params `resources`.
workflow.localrules(*local_rules())  # names built at load: the directive takes literal names only
write_code_stamps()  # before the DAG is built (rules/common.smk)


rule all:
    default_target: True
    input:
        # Every output, intermediate ones too, so a deleted one is rebuilt (model calls come from
        # the request cache, frames from the frame cache). The score, viewer and per-run metrics
        # outputs are folders: deleting one rebuilds it; a file deleted inside one is seen by
        # `dvc status` (scores, metrics), and `snakemake --forcerun <benchmark>_score` rebuilds it.
        outputs=all_outputs(),
        versioned="results/dvc-committed.txt",
