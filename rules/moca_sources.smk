# MoCA's raw sources (docs/moca-sources.md): acquisition, normalized candidates, preprocessing (B.1)
# and unimodal consistency filtering (B.1.1). A no-op unless params.yaml lists sources under
# moca.sources (and pools under moca.pools): the default demo pipeline downloads nothing.
# `mirror: ../shared/data/<source>` points a source at a local copy.
#
# Per source (wildcard {source}; its params entry is a rule param, so adding or editing one source
# reruns only that source's jobs): acquire -> data/raw/moca_sources/<source>/ (its .manifest.json is
# the output; downloads resume and are skipped once verified, so the folder itself is no output
# Snakemake would delete), then candidates -> data/interim/moca_sources/candidates/<source>.jsonl.
# Per pool (wildcard {pool}: moca.pools.<pool> lists its sources in pool order): preprocess, then
# unimodal. Their thresholds (moca.preprocess, moca.unimodal) are rule params: changing one reruns
# the filtering and what follows, never a download. Each rule takes its DVC stage's code as inputs.
# The count tables also go to MLflow (one run per distinct table: an unchanged rerun logs nothing).

_MOCA = config.get("moca") or {}
MOCA_SOURCES = list(_MOCA.get("sources") or {})
MOCA_POOLS = dict(_MOCA.get("pools") or {})
MOCA_SOURCES_RAW = "data/raw/moca_sources"
MOCA_SOURCES_INTERIM = "data/interim/moca_sources"
# What the rules read and write, written once for the rules and their stages (wildcards {source}, {pool})
MOCA_SOURCE_DIR = f"{MOCA_SOURCES_RAW}/{{source}}"
MOCA_SOURCE_MANIFEST = f"{MOCA_SOURCE_DIR}/.manifest.json"
MOCA_CANDIDATES = f"{MOCA_SOURCES_INTERIM}/candidates/{{source}}.jsonl"
MOCA_POOL = f"{MOCA_SOURCES_INTERIM}/pools/{{pool}}"
MOCA_POOL_REPORTS = "results/reports/moca_sources/{pool}"
MOCA_POOL_METRICS = "results/metrics/moca_sources/{pool}"

for _pool, _members in MOCA_POOLS.items():
    _absent = [s for s in _members if s not in MOCA_SOURCES]
    if _absent:
        sys.exit(f"error: params.yaml: moca.pools.{_pool}: {', '.join(_absent)} not in moca.sources"
                 " (a pool merges acquired sources: add an entry for each under moca.sources)")


# Under a cluster executor (profiles/slurm) downloads run in Snakemake's own process (compute
# nodes often have no internet).
localrules:
    moca_source_acquire,

stage(
    "moca_source_acquire",
    benchmark="moca",
    rules=["moca_source_acquire"],
    matrix={"source": "${moca.sources}"},
    targets=[MOCA_SOURCE_MANIFEST],
    params=["moca.sources.{source}"],
    outs=[{MOCA_SOURCE_DIR: {"persist": True}}],
)


rule moca_source_acquire:
    priority: DATA_PRIORITY
    wildcard_constraints:
        source="|".join(MOCA_SOURCES) or "(?!)",  # no sources: no job
    input:
        code=stage_code("moca_source_acquire"),
    output:
        manifest=MOCA_SOURCE_MANIFEST,
    params:
        triggers=stage_params("moca_source_acquire", "moca_source_acquire"),
        root=lambda wildcards: MOCA_SOURCE_DIR.format(source=wildcards.source),
    log:
        "logs/moca_sources/acquire_{source}.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench moca acquire --source {wildcards.source} --root {params.root} --params params.yaml > {log} 2>&1"

stage(
    "moca_source_candidates",
    benchmark="moca",
    rules=["moca_source_candidates"],
    matrix={"source": "${moca.sources}"},
    targets=[MOCA_CANDIDATES],
    deps=[MOCA_SOURCE_DIR],
    params=["moca.sources.{source}"],
    outs=[MOCA_CANDIDATES],
)


rule moca_source_candidates:
    priority: DATA_PRIORITY
    wildcard_constraints:
        source="|".join(MOCA_SOURCES) or "(?!)",  # no sources: no job
    input:
        manifest=MOCA_SOURCE_MANIFEST,
        code=stage_code("moca_source_candidates"),
    output:
        candidates=MOCA_CANDIDATES,
    params:
        triggers=stage_params("moca_source_candidates", "moca_source_candidates"),
        root=lambda wildcards: MOCA_SOURCE_DIR.format(source=wildcards.source),
    log:
        "logs/moca_sources/candidates_{source}.log",
    resources:
        **job_resources("default"),
    conda:
        CONDA_ENV
    shell:
        "socialbench moca candidates --source {wildcards.source} --root {params.root} --out {output.candidates}"
        " --params params.yaml > {log} 2>&1"


stage(
    "moca_preprocess",
    benchmark="moca",
    rules=["moca_preprocess"],
    foreach={"pool": "${moca.pools}"},
    targets=[f"{MOCA_POOL}/preprocessed.jsonl"],
    deps=[f"{MOCA_SOURCES_INTERIM}/candidates"],
    params=["moca.pools.{pool}", "moca.preprocess"],
    outs=[f"{MOCA_POOL}/preprocessed.jsonl"] + [f"{MOCA_POOL_REPORTS}/preprocess.{ext}" for ext in ("jsonl", "md", "csv")],
    metrics=[{f"{MOCA_POOL_METRICS}_preprocess.json": {"cache": False}}],
)


rule moca_preprocess:
    priority: DATA_PRIORITY
    wildcard_constraints:
        pool="|".join(MOCA_POOLS) or "(?!)",  # no pools: no job
    input:
        # in the pool's order (of duplicate candidates, the first is kept)
        candidates=lambda wildcards: [MOCA_CANDIDATES.format(source=s) for s in MOCA_POOLS[wildcards.pool]],
        code=stage_code("moca_preprocess"),
    output:
        pool=f"{MOCA_POOL}/preprocessed.jsonl",
        report=f"{MOCA_POOL_REPORTS}/preprocess.jsonl",
        counts_md=f"{MOCA_POOL_REPORTS}/preprocess.md",
        counts_csv=f"{MOCA_POOL_REPORTS}/preprocess.csv",
        counts_json=f"{MOCA_POOL_METRICS}_preprocess.json",
    params:
        triggers=stage_params("moca_preprocess", "moca_preprocess"),
        inputs=lambda wildcards, input: " ".join(f"--input {f}" for f in input.candidates),
    log:
        "logs/moca_sources/preprocess_{pool}.log",
    resources:
        **job_resources("media"),
    conda:
        CONDA_ENV
    shell:
        "socialbench moca preprocess {params.inputs} --out {output.pool} --report {output.report}"
        " --counts-md {output.counts_md} --counts-csv {output.counts_csv} --counts-json {output.counts_json}"
        " --params params.yaml --mlflow > {log} 2>&1"

stage(
    "moca_unimodal",
    benchmark="moca",
    rules=["moca_unimodal"],
    foreach={"pool": "${moca.pools}"},
    targets=[f"{MOCA_POOL}/filtered.jsonl"],
    deps=[f"{MOCA_POOL}/preprocessed.jsonl"],
    params=["moca.unimodal"],
    outs=[f"{MOCA_POOL}/filtered.jsonl"] + [f"{MOCA_POOL_REPORTS}/unimodal.{ext}" for ext in ("jsonl", "md", "csv")],
    metrics=[{f"{MOCA_POOL_METRICS}_unimodal.json": {"cache": False}}],
)


rule moca_unimodal:
    priority: DATA_PRIORITY
    wildcard_constraints:
        pool="|".join(MOCA_POOLS) or "(?!)",  # no pools: no job
    input:
        pool=f"{MOCA_POOL}/preprocessed.jsonl",
        code=stage_code("moca_unimodal"),
    output:
        pool=f"{MOCA_POOL}/filtered.jsonl",
        report=f"{MOCA_POOL_REPORTS}/unimodal.jsonl",
        counts_md=f"{MOCA_POOL_REPORTS}/unimodal.md",
        counts_csv=f"{MOCA_POOL_REPORTS}/unimodal.csv",
        counts_json=f"{MOCA_POOL_METRICS}_unimodal.json",
    params:
        triggers=stage_params("moca_unimodal", "moca_unimodal"),
    log:
        "logs/moca_sources/unimodal_{pool}.log",
    resources:
        **job_resources("media"),
    conda:
        CONDA_ENV
    shell:
        "socialbench moca unimodal --input {input.pool} --out {output.pool} --report {output.report}"
        " --counts-md {output.counts_md} --counts-csv {output.counts_csv} --counts-json {output.counts_json}"
        " --params params.yaml --mlflow > {log} 2>&1"


if (MOCA_SOURCES or MOCA_POOLS) and "moca" in BENCH:
    # rule all (and the closing dvc commit) collect these with MoCA's other outputs
    BENCH["moca"]["outputs"]["moca_sources"] = [
        *expand(MOCA_SOURCE_MANIFEST, source=MOCA_SOURCES),
        *expand(MOCA_CANDIDATES, source=MOCA_SOURCES),
        *expand(f"{MOCA_POOL}/{{name}}.jsonl", pool=MOCA_POOLS, name=["preprocessed", "filtered"]),
        *expand(f"{MOCA_POOL_REPORTS}/{{step}}.{{ext}}", pool=MOCA_POOLS, step=["preprocess", "unimodal"], ext=["jsonl", "md", "csv"]),
        *expand(f"{MOCA_POOL_METRICS}_{{step}}.json", pool=MOCA_POOLS, step=["preprocess", "unimodal"]),
    ]
