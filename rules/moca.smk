# MoCA's own data stages: raw source, filtering, media. The generic stages (infer, score, tables,
# track: rules/infer.smk ...) run on what BENCH["moca"] declares at the end of this file.

MOCA_SPLITS = ["test", "dev"]
MOCA_SCENARIOS = ["affection", "intent", "stance"]
from socialbench.moca.results.tables import output_files as moca_table_files  # every file the tables stage writes
from socialbench.moca.results.stability import output_files as moca_stability_files  # and its stability table
FRAME_CACHE = "data/interim/frames"
# What the rules read and write, written once for the rules and their stages (wildcard {split})
MOCA_DEMO = "data/raw/moca_demo"
MOCA_RAW = f"{MOCA_DEMO}/{{split}}.jsonl"
MOCA_INTERIM = "data/interim/moca/{split}.jsonl"
MOCA_PROCESSED = "data/processed/moca/{split}.jsonl"
MOCA_PREPARE_REPORT = "results/reports/moca_prepare_{split}.jsonl"
MOCA_MEDIA_REPORTS = ["results/reports/media.jsonl", "results/reports/media.md"]


# Under a cluster executor (profiles/slurm) the light jobs run in Snakemake's own process: the demo data
# and the validation of a split (a few CPU-seconds at the paper's size, docs/benchmarks.md: less than
# the Snakemake a Slurm job starts on its node).
localrules:
    moca_demo_data,
    moca_prepare,


# ---- raw source: the embedded demo is generated, deterministically from the seed; data/raw is
# never edited by later stages.
stage(
    "moca_demo_data",
    benchmark="moca",
    rules=["moca_demo_data"],
    targets=expand(MOCA_RAW, split=MOCA_SPLITS),
    params=["seed", "moca.demo"],
    outs=[MOCA_DEMO],
)


rule moca_demo_data:
    priority: DATA_PRIORITY
    input:
        code=stage_code("moca_demo_data"),
    output:
        test=MOCA_RAW.format(split="test"),
        dev=MOCA_RAW.format(split="dev"),
        human=f"{MOCA_DEMO}/human.jsonl",  # a simulated annotator (the demo's human row)
        media=directory(f"{MOCA_DEMO}/media"),
    params:
        triggers=stage_params("moca_demo_data", "moca_demo_data"),
    log:
        "logs/data/moca_demo.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench demo --benchmark moca --params params.yaml --out-dir data/raw/moca_demo > {log} 2>&1"


# ---- filtering: schema and taxonomy validation; bad records are dropped into a report with reasons.
stage(
    "moca_prepare",
    benchmark="moca",
    rules=["moca_prepare"],
    targets=expand(MOCA_INTERIM, split=MOCA_SPLITS),
    deps=[MOCA_DEMO],
    outs=["data/interim/moca", *expand(MOCA_PREPARE_REPORT, split=MOCA_SPLITS)],
)


rule moca_prepare:
    priority: DATA_PRIORITY
    input:
        raw=MOCA_RAW,
        media=f"{MOCA_DEMO}/media",
        code=stage_code("moca_prepare"),
    output:
        instances=MOCA_INTERIM,  # the media stage (below) adds frames
        report=report(MOCA_PREPARE_REPORT, caption="../report/dropped.rst",
                      category="reports", subcategory="dropped records", labels={"report": "MoCA prepare {split}"}),
    log:
        "logs/prepare/moca_{split}.log",
    resources:
        **job_resources("default"),
    conda:
        CONDA_ENV
    shell:
        "socialbench prepare --benchmark moca --raw {input.raw} --out {output.instances}"
        " --report {output.report} --params params.yaml > {log} 2>&1"


# ---- media (docs/media.md): sampled frames for video-text instances. Frames go into the
# content-addressed cache data/interim/frames/ (the folder is no output: Snakemake would delete it
# before each run, and the cache is what makes reruns free); the processed instances name every
# frame by path, sha256, source frame index and timestamp. --prune then removes the entries they do
# not name (and what killed runs left in .tmp/), so the DVC-versioned folder depends on the current
# data only, not on earlier runs. The cache's output is its index file, inside the folder (only the
# file is removed before the job): a deleted cache folder takes the index with it, so the job runs
# again (re-extracting what is missing) instead of leaving instances that point at missing frames.
# Bad media: media.on_error (skip | fail), always listed in results/reports/media.jsonl and media.md.
stage(
    "moca_frames",
    benchmark="moca",
    rules=["moca_frames"],
    targets=[*expand(MOCA_PROCESSED, split=MOCA_SPLITS), f"{FRAME_CACHE}/index.json"],
    deps=["data/interim/moca", f"{MOCA_DEMO}/media"],
    params=["media.on_error", "moca.frames", "media.frame_max_side", "media.image_format"],
    outs=[
        "data/processed/moca",
        *MOCA_MEDIA_REPORTS,
        # The content-addressed frame cache: versioned with the processed instances that name its
        # files, and kept (persist) when the stage reruns, so unchanged clips are not decoded again;
        # the stage prunes it to the entries the processed instances name.
        {FRAME_CACHE: {"persist": True}},
    ],
)


rule moca_frames:
    priority: DATA_PRIORITY
    input:
        instances=expand(MOCA_INTERIM, split=MOCA_SPLITS),
        media=f"{MOCA_DEMO}/media",
        code=stage_code("moca_frames"),
    output:
        instances=expand(MOCA_PROCESSED, split=MOCA_SPLITS),
        report=report(MOCA_MEDIA_REPORTS[0], caption="../report/media.rst", category="reports",
                      subcategory="media", labels={"report": "bad media (records)"}),
        report_md=report(MOCA_MEDIA_REPORTS[1], caption="../report/media.rst", category="reports",
                         subcategory="media", labels={"report": "bad media (summary)"}),
        index=f"{FRAME_CACHE}/index.json",  # the frame cache's entries; the folder itself persists
    params:
        triggers=stage_params("moca_frames", "moca_frames"),
        io=media_io_pairs,
        frames_dir=lambda wildcards, output: os.path.dirname(output.index),  # the cache holds its index
    log:
        "logs/media/moca_frames.log",
    resources:
        **job_resources("media"),
    conda:
        CONDA_ENV
    shell:
        "socialbench moca frames {params.io} --frames-dir {params.frames_dir} --prune --index {output.index}"
        " --report {output.report} --report-md {output.report_md} --params params.yaml > {log} 2>&1"


# CoDAR's Step 2 retriever reads a local corpus folder (moca.retrieval, retriever bm25): it is an input
# of the inference jobs whose runs retrieve (their settings hold moca.retrieval), so a changed corpus
# reruns them (Snakemake: its files; DVC: the folder).
_MOCA_RETRIEVAL = config["moca"].get("retrieval") or {}
_MOCA_CORPUS = (
    [(_MOCA_RETRIEVAL.get("options") or {})["corpus"]]
    if _MOCA_RETRIEVAL.get("retriever") == "bm25" and (_MOCA_RETRIEVAL.get("options") or {}).get("corpus")
    else []
)


# The retriever's corpus folder (or its files) when one of a model's runs retrieves, else nothing.
_moca_retrieves = lambda runs: any("retrieval" in method_settings("moca", r) for r in runs)  # noqa: E731
_moca_corpus = lambda runs: list(_MOCA_CORPUS) if _moca_retrieves(runs) else []  # noqa: E731
_moca_corpus_files = lambda runs: sorted(  # noqa: E731
    p.as_posix() for c in _moca_corpus(runs) for p in _Path(c).rglob("*") if p.is_file()
)


BENCH["moca"] = {
    "instances": MOCA_PROCESSED.format(split="test"),
    "dev": MOCA_PROCESSED.format(split="dev"),
    # more files a model's inference job reads, given its runs (the retriever's corpus)
    "infer_inputs": _moca_corpus_files,
    # tables, intervals, tests, figures/, and the stability table (params moca.robustness)
    "tables": moca_table_files(MOCA_SCENARIOS) + moca_stability_files(),
    "outputs": {
        "raw": [*expand(MOCA_RAW, split=MOCA_SPLITS), f"{MOCA_DEMO}/human.jsonl"],
        "raw_media": f"{MOCA_DEMO}/media",
        "interim": expand(MOCA_INTERIM, split=MOCA_SPLITS),
        "prepare_reports": expand(MOCA_PREPARE_REPORT, split=MOCA_SPLITS),
        "processed": expand(MOCA_PROCESSED, split=MOCA_SPLITS),
        "media_reports": MOCA_MEDIA_REPORTS,
        "frames_index": f"{FRAME_CACHE}/index.json",
    },
    # what its shared stages read (rules/infer.smk, tables.smk): inference's data, the params keys
    # of inference (besides seed and the model's entry; each model's stage narrows them to what its
    # runs' settings read: infer_params in common.smk) and of the tables
    "dvc": {
        "data": ["data/processed/moca"],
        "infer_deps": _moca_corpus,
        "infer_params": [
            "moca.answer", "moca.method_options", "moca.ablations", "moca.retrieval", "moca.subset",
        ],
        "tables_params": ["seed", "models", "moca"],
    },
}
