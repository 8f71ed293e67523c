# MeetingToM's own data stages (docs/meetingtom.md): the demo release, acquisition of each source's
# annotations, per-meeting media, extraction (you events, candidates) and clips, the instances of
# each source and the consolidated task files. The shared stages (rules/infer.smk ...) run on what
# BENCH["meetingtom"] declares at the end of this file.
#
# Two sources, read through the same code: "demo" (generated here as a local mirror in the
# official AMI layout) and "ami" (the real corpus: meetingtom.ami.mirror, by default
# ../shared/data/ami, read when present). Per-meeting jobs depend on their meeting and on the
# source's release only, and the release does not depend on the meeting list, so adding a meeting
# to meetingtom.<source>.meetings runs only that meeting's jobs (then the source's instances and
# everything after them).

from socialbench.meetingtom.dataset.release import mirror_state as _mt_mirror_state
from socialbench.meetingtom.schema.questions import TASKS as MT_TASK_NAMES
from socialbench.meetingtom.schema.settings import DEMO_MIRROR as MT_DEMO_MIRROR
from socialbench.meetingtom.schema.settings import SOURCES as MT_SOURCES
from socialbench.meetingtom.schema.settings import source_settings as _mt_source
from socialbench.meetingtom.results.tables import output_files as _mt_table_files
from socialbench.meetingtom.results.stability import output_files as _mt_stability_files

# Under a cluster executor (profiles/slurm) the light jobs (demo files, annotation and media fetches, which
# may need the internet, the per-meeting extraction, under a CPU-second a meeting, less than a cluster
# job's own start costs, and the per-source merges) run in Snakemake's own process.
localrules:
    meetingtom_demo_data,
    meetingtom_release,
    meetingtom_media,
    meetingtom_extract,
    meetingtom_instances,
    meetingtom_simulated_annotators,
    meetingtom_gold,
    meetingtom_demo_human,
    meetingtom_consolidate,


MT = config["meetingtom"]
MT_MEETINGS = {s: list(MT[s]["meetings"]) for s in MT_SOURCES}
# The sources whose params request views (meetingtom.<source>.views): only their meetings have media
# and clips jobs. A source without views (the real AMI meetings by default: the shared mirror has no
# media) is read from its annotations alone, so it has no per-meeting job that would write nothing.
MT_MEDIA_SOURCES = [s for s in MT_SOURCES if MT[s]["views"]]
MT_TASKS = list(MT_TASK_NAMES)
# The annotation round-trip per source (meetingtom.annotation.<source>): simulated annotators (the
# demo's test double), sheets named in params, or none (only Task 2.1, gold from the you events).
MT_ANNOTATION = {s: MT["annotation"].get(s) for s in MT_SOURCES}
MT_SIMULATED = [s for s in MT_SOURCES if (MT_ANNOTATION[s] or {}).get("simulated")]
MT_SIM_FILES = ["annotator_1.csv", "annotator_2.csv", "adjudicator.csv"]
# What the rules read and write, written once for the rules and their stages (wildcards {source},
# {meeting}; a stage per source fixes {source}, DVC's matrix loops over {meeting}).
MT_RELEASE = "data/raw/meetingtom/{source}/release"
MT_MEETING_MEDIA = "data/raw/meetingtom/{source}/amicorpus/{meeting}"
MT_FETCHED = f"{MT_MEETING_MEDIA}/fetched.json"
MT_MEETINGS_DIR = "data/interim/meetingtom/{source}"
MT_MEETING = f"{MT_MEETINGS_DIR}/{{meeting}}"
MT_CLIPS_DIR = "data/processed/meetingtom/clips/{source}"
MT_CLIPS = f"{MT_CLIPS_DIR}/{{meeting}}"
MT_SOURCE_DATA = "data/processed/meetingtom/{source}"
MT_ANNOTATIONS = "data/raw/meetingtom/{source}/annotations"
MT_GOLD = "data/processed/meetingtom/gold/{source}"
MT_SPLITS = {split: f"data/processed/meetingtom/{split}.jsonl" for split in ("test", "dev")}
MT_HUMAN = "data/raw/meetingtom/demo/human.jsonl"


# The filled sheets of each source: (annotator 1, annotator 2, adjudicator), or () without any.
MT_SHEETS = {
    s: (tuple(f"{MT_ANNOTATIONS.format(source=s)}/{f}" for f in MT_SIM_FILES) if s in MT_SIMULATED
        else (*a["annotators"], a["adjudicator"]) if a and "annotators" in a and "adjudicator" in a
        else ())
    for s, a in MT_ANNOTATION.items()
}
for _s, _a in MT_ANNOTATION.items():
    if _a and _s not in MT_SIMULATED and not MT_SHEETS[_s]:
        sys.exit(f"error: meetingtom.annotation.{_s}: give annotators (two sheets) and adjudicator, or simulated: true, or null")
# The real corpus's mirror, looked at when the workflow is read: a rule param of the jobs that read
# it, so they rerun when it appears, goes or changes (DVC does not see it: docs/meetingtom.md).
MT_AMI_STATE = _mt_mirror_state(_mt_source(config, "ami"))
if MT["ami"]["mirror"] is not None and not MT_AMI_STATE["present"]:
    sys.stderr.write(
        f"meetingtom: AMI mirror {MT['ami']['mirror']} not found: no real-data instances; the pipeline runs the"
        " demo meetings only (the tables say so)\n"
    )


wildcard_constraints:
    source="demo|ami",
    meeting="[A-Z]{2}[0-9]{4}[a-z]?",


# Input and param functions of the rules below: the demo's mirror is made by this workflow (an
# input), the real corpus's is outside it (its state is a param).
_mt_mirror_input = lambda wildcards: {"mirror": MT_DEMO_MIRROR} if wildcards.source == "demo" else {}  # noqa: E731
_mt_state = lambda wildcards: MT_AMI_STATE if wildcards.source == "ami" else None  # noqa: E731

# Job order (rules/common.smk DATA_PRIORITY): MeetingToM's data jobs, like every benchmark's, before the
# jobs after the data. Within them, the per-meeting jobs of a source with views (its clips, the heaviest
# jobs) come one step before those of a source without, which only have to be done by the time the clips
# are: otherwise Snakemake may start nine real meetings' extractions before the third demo meeting's, and
# its clips late.
_mt_priority = lambda wildcards: DATA_PRIORITY + (wildcards.source in MT_MEDIA_SOURCES)  # noqa: E731


# ---- raw source: the embedded demo release, generated deterministically from the seed; it is a
# local mirror (annotations zip with its .sha256, amicorpus/<meeting>/video|audio/...), never edited.
MT_MEDIA_KEYS = ["on_error", "meeting_fps", "frame_max_side", "image_format", "clip_preset", "clip_crf",
                 "max_view_skew_frames", "mosaic_panel", "label_font"]

stage(
    "meetingtom_demo_data",
    benchmark="meetingtom",
    rules=["meetingtom_demo_data"],
    targets=[MT_DEMO_MIRROR],
    params=[
        "seed",
        *(f"meetingtom.demo.{k}" for k in ("corpus", "seconds", "fps", "size", "sample_rate", "clips_per_task")),
    ],
    outs=[MT_DEMO_MIRROR],
)


rule meetingtom_demo_data:
    priority: DATA_PRIORITY + bool(MT_MEDIA_SOURCES)
    input:
        code=stage_code("meetingtom_demo_data"),
    output:
        mirror=directory(MT_DEMO_MIRROR),
    params:
        triggers=stage_params("meetingtom_demo_data", "meetingtom_demo_data"),
    log:
        "logs/data/meetingtom_demo.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench demo --benchmark meetingtom --params params.yaml --out-dir {output.mirror} > {log} 2>&1"


# ---- acquisition: a source's manual-annotations release (archive fetched with its checksum checked
# and extracted safely, an unpacked mirror read in place, or a note that the mirror is absent).
# Archives are fetched into data/raw/meetingtom/<source>/downloads (kept between runs, not versioned).
for _s in MT_SOURCES:
    stage(
        f"meetingtom_{_s}_release",
        benchmark="meetingtom",
        rules=["meetingtom_release"],
        wildcards={"source": _s},
        targets=[MT_RELEASE],
        deps=[MT_DEMO_MIRROR] if _s == "demo" else [],
        params=[f"meetingtom.{{source}}.{k}" for k in ("mirror", "url", "sha256")],
        outs=[MT_RELEASE],
        comment=None if _s == "demo" else (
            "The mirror is outside the repository and may be absent, so it is no dep: after it appears or\n"
            "changes, `snakemake` reruns this stage (its rule has the mirror's state as a param)."),
    )


rule meetingtom_release:
    priority: _mt_priority
    input:
        unpack(_mt_mirror_input),
        code=stage_code("meetingtom_{source}_release"),
    output:
        release=directory(MT_RELEASE),
    params:
        triggers=stage_params("meetingtom_{source}_release", "meetingtom_release"),
        state=_mt_state,
    log:
        "logs/data/meetingtom_{source}_release.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench meetingtom release --source {wildcards.source} --out {output.release}"
        " --downloads data/raw/meetingtom/{wildcards.source}/downloads --params params.yaml > {log} 2>&1"


# ---- per meeting: its views (Corner, Closeup1-4, Mix-Headset) in the official layout. The output is
# fetched.json inside the meeting's folder, which persists (DVC: persist), so files already there are
# not fetched again; a file changed in a local mirror is copied again (checked by sha256).
for _s in MT_SOURCES:
    _views = _s in MT_MEDIA_SOURCES  # a source without views: extraction only
    stage(
        f"meetingtom_{_s}_meeting",
        benchmark="meetingtom",
        rules=["meetingtom_media", "meetingtom_extract", "meetingtom_clips"] if _views else ["meetingtom_extract"],
        wildcards={"source": _s},
        matrix={"meeting": f"${{meetingtom.{_s}.meetings}}"},
        targets=([MT_FETCHED] if _views else []) + [MT_MEETING] + ([MT_CLIPS] if _views else []),
        deps=([MT_DEMO_MIRROR] if _s == "demo" and _views else []) + [MT_RELEASE],
        params={
            "meetingtom_media": ["meetingtom.{source}.views", "meetingtom.{source}.media_url"],
            "meetingtom_extract": ["meetingtom.mining"],
            "meetingtom_clips": ["meetingtom.clips", *(f"media.{k}" for k in MT_MEDIA_KEYS)],
        },
        outs=([{MT_MEETING_MEDIA: {"persist": True}}] if _views else []) + [MT_MEETING] + ([MT_CLIPS] if _views else []),
        comment=f"Per meeting of meetingtom.{_s}.meetings: "
        + ("media (kept between runs: persist), extraction, clips." if _views else
           f"extraction (meetingtom.{_s}.views is empty: no media or clips jobs)."),
    )


rule meetingtom_media:
    priority: _mt_priority
    input:
        unpack(_mt_mirror_input),
        code=stage_code("meetingtom_{source}_meeting"),
    output:
        fetched=MT_FETCHED,
    params:
        triggers=stage_params("meetingtom_{source}_meeting", "meetingtom_media"),
        state=_mt_state,
    log:
        "logs/data/meetingtom_{source}_{meeting}_media.log",
    wildcard_constraints:
        source="|".join(MT_MEDIA_SOURCES) or "(?!)",  # a source without views has no media job
    conda:
        CONDA_ENV
    shell:
        "socialbench meetingtom media --source {wildcards.source} --meeting {wildcards.meeting}"
        " --dest-root data/raw/meetingtom/{wildcards.source} --params params.yaml > {log} 2>&1"


# ---- per meeting: you events (Task 2.1's gold), mined candidates of the three tasks (thresholds:
# meetingtom.mining), rejected candidates with their reasons, parse problems, transcript words.
rule meetingtom_extract:
    priority: _mt_priority
    input:
        release=MT_RELEASE,
        code=stage_code("meetingtom_{source}_meeting"),
    output:
        meeting=directory(MT_MEETING),
    params:
        triggers=stage_params("meetingtom_{source}_meeting", "meetingtom_extract"),
    log:
        "logs/data/meetingtom_{source}_{meeting}_extract.log",
    resources:
        **job_resources("default"),
    conda:
        CONDA_ENV
    shell:
        "socialbench meetingtom extract --source {wildcards.source} --meeting {wildcards.meeting}"
        " --release {input.release} --out-dir {output.meeting} --params params.yaml > {log} 2>&1"


# ---- per meeting: clips of the kept candidates (meetingtom.clips.tasks) through the media stage:
# Corner, close-ups by participant letter, the 2x2 mosaic, audio and transcript cut with the same
# timestamps, frames at media.meeting_fps; clips that cannot be made are in its report.jsonl.
rule meetingtom_clips:
    priority: _mt_priority
    input:
        meeting=MT_MEETING,
        fetched=MT_FETCHED,
        code=stage_code("meetingtom_{source}_meeting"),
    output:
        clips=directory(MT_CLIPS),
    params:
        triggers=stage_params("meetingtom_{source}_meeting", "meetingtom_clips"),
    log:
        "logs/media/meetingtom_{source}_{meeting}_clips.log",
    wildcard_constraints:
        source="|".join(MT_MEDIA_SOURCES) or "(?!)",  # a source without views has no clips job
    resources:
        **job_resources("media"),
    conda:
        CONDA_ENV
    shell:
        "socialbench meetingtom clips --meeting-dir {input.meeting} --fetched {input.fetched} --out-dir {output.clips}"
        " --params params.yaml > {log} 2>&1"


# ---- per source: Task 2.1 instances of its meetings (both splits), the source's you events and
# candidates in one file each, and the report of candidates that made no instance.
for _s in MT_SOURCES:
    stage(
        f"meetingtom_{_s}_instances",
        benchmark="meetingtom",
        rules=["meetingtom_instances"],
        wildcards={"source": _s},
        targets=[MT_SOURCE_DATA],
        deps=[MT_RELEASE, MT_MEETINGS_DIR] + ([MT_CLIPS_DIR] if _s in MT_MEDIA_SOURCES else []),
        params=["seed", "meetingtom.{source}.meetings", "meetingtom.{source}.modality", "meetingtom.dev_meetings",
                "meetingtom.task2_1", "meetingtom.annotation.agreement_items", "meetingtom.clips.utterance_gap_s"],
        outs=[MT_SOURCE_DATA],
    )


rule meetingtom_instances:
    priority: _mt_priority
    input:
        release=MT_RELEASE,
        meetings=lambda wildcards: expand(MT_MEETING, source=wildcards.source, meeting=MT_MEETINGS[wildcards.source]),
        clips=lambda wildcards: expand(MT_CLIPS, source=wildcards.source, meeting=MT_MEETINGS[wildcards.source])
        if wildcards.source in MT_MEDIA_SOURCES else [],
        code=stage_code("meetingtom_{source}_instances"),
    output:
        instances=directory(MT_SOURCE_DATA),
    params:
        triggers=stage_params("meetingtom_{source}_instances", "meetingtom_instances"),
        clips_dir=lambda wildcards: f"--clips-dir {MT_CLIPS_DIR.format(source=wildcards.source)}"
        if wildcards.source in MT_MEDIA_SOURCES else "",
    log:
        "logs/data/meetingtom_{source}_instances.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench meetingtom instances --source {wildcards.source} --release {input.release}"
        " --meetings-dir data/interim/meetingtom/{wildcards.source} {params.clips_dir}"
        " --out-dir {output.instances} --params params.yaml > {log} 2>&1"


# ---- the demo's annotators: simulated (a TEST DOUBLE for B.3's human annotators, labelled so in
# every sheet), filling the exported sheet from rules over the items' AMI metadata with seeded
# disagreement. Real sheets are raw data a researcher brings (meetingtom.annotation.<source>).
for _s in MT_SIMULATED:
    stage(
        f"meetingtom_{_s}_annotators",
        benchmark="meetingtom",
        rules=["meetingtom_simulated_annotators"],
        wildcards={"source": _s},
        targets=[f"{MT_ANNOTATIONS}/{MT_SIM_FILES[0]}"],
        deps=[MT_SOURCE_DATA],
        params=["seed", "meetingtom.annotation.simulated", "meetingtom.annotation.agreement_items"],
        outs=[MT_ANNOTATIONS],
        comment="The annotation round-trip (B.3): the simulated annotators (a test double) fill the sheet\n"
        "the instances stage exported; each source's import gives its gold, discarded items and kappa.",
    )


rule meetingtom_simulated_annotators:
    priority: DATA_PRIORITY
    input:
        instances=MT_SOURCE_DATA,
        code=stage_code("meetingtom_{source}_annotators"),
    output:
        sheets=[f"{MT_ANNOTATIONS}/{f}" for f in MT_SIM_FILES],
    params:
        triggers=stage_params("meetingtom_{source}_annotators", "meetingtom_simulated_annotators"),
    log:
        "logs/data/meetingtom_{source}_annotators.log",
    wildcard_constraints:
        source="|".join(MT_SIMULATED) or "(?!)",  # no simulated source: the rule matches nothing
    conda:
        CONDA_ENV
    shell:
        "socialbench meetingtom annotate simulate --items {input.instances}/items.jsonl --sheet {input.instances}/sheet.csv"
        " --out-dir data/raw/meetingtom/{wildcards.source}/annotations --params params.yaml > {log} 2>&1"


# ---- per source: the annotation round-trip's import (B.3): majority vote of two annotators and an
# adjudicator, items without a majority discarded (with the reason), Fleiss' kappa per task on the
# agreement subset, the gold validated with pandera, and the labelled instances of Tasks 1, 2.2, 3.1
# and 3.2. A source without sheets gets empty outputs that say so.
for _s in MT_SOURCES:
    stage(
        f"meetingtom_{_s}_gold",
        benchmark="meetingtom",
        rules=["meetingtom_gold"],
        wildcards={"source": _s},
        targets=[MT_GOLD],
        deps=[MT_SOURCE_DATA] + ([MT_ANNOTATIONS] if _s in MT_SIMULATED else list(MT_SHEETS[_s])),
        params=["meetingtom.annotation.{source}"],
        outs=[MT_GOLD],
    )


rule meetingtom_gold:
    priority: DATA_PRIORITY
    input:
        instances=MT_SOURCE_DATA,
        sheets=lambda wildcards: list(MT_SHEETS[wildcards.source]),
        code=stage_code("meetingtom_{source}_gold"),
    output:
        gold=directory(MT_GOLD),
    params:
        triggers=stage_params("meetingtom_{source}_gold", "meetingtom_gold"),
        io=lambda wildcards, input: (
            " ".join(f"--annotator {x}" for x in input.sheets[:2]) + f" --adjudicator {input.sheets[2]}"
            if input.sheets else f"--note 'meetingtom.annotation.{wildcards.source} is null: no annotation sheets for this source'"),
    log:
        "logs/data/meetingtom_{source}_gold.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench meetingtom annotate import --items {input.instances}/items.jsonl --subset {input.instances}/agreement_subset.json"
        " {params.io} --out-dir {output.gold} > {log} 2>&1"


# ---- the demo's human row: a simulated human evaluation of the demo's test instances (a TEST DOUBLE;
# the file backend of model human-meetingtom replays it). Real human answers are raw data a researcher
# brings, in the same format.
stage(
    "meetingtom_demo_human",
    benchmark="meetingtom",
    rules=["meetingtom_demo_human"],
    targets=[MT_HUMAN],
    deps=[MT_SPLITS["test"]],
    params=["seed", "meetingtom.annotation.simulated.human_accuracy"],
    outs=[MT_HUMAN],
    comment="The demo's human row: a simulated human evaluation (a test double) of the demo's test instances.",
)


rule meetingtom_demo_human:
    priority: DATA_PRIORITY
    input:
        test=MT_SPLITS["test"],
        code=stage_code("meetingtom_demo_human"),
    output:
        answers=MT_HUMAN,
    params:
        triggers=stage_params("meetingtom_demo_human", "meetingtom_demo_human"),
    log:
        "logs/data/meetingtom_demo_human.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench meetingtom annotate human --instances {input.test} --source demo --out {output.answers}"
        " --params params.yaml > {log} 2>&1"


# ---- the task files (B.5: one JSON-lines file per task) and the splits the shared stages read.
stage(
    "meetingtom_consolidate",
    benchmark="meetingtom",
    rules=["meetingtom_consolidate"],
    targets=list(MT_SPLITS.values()),
    deps=expand(MT_SOURCE_DATA, source=MT_SOURCES) + expand(MT_GOLD, source=MT_SOURCES),
    outs=[*MT_SPLITS.values(), "data/processed/meetingtom/tasks"],
)


rule meetingtom_consolidate:
    priority: DATA_PRIORITY
    input:
        sources=expand(MT_SOURCE_DATA, source=MT_SOURCES),
        gold=expand(MT_GOLD, source=MT_SOURCES),
        code=stage_code("meetingtom_consolidate"),
    output:
        test=MT_SPLITS["test"],
        dev=MT_SPLITS["dev"],
        tasks=expand("data/processed/meetingtom/tasks/{task}.jsonl", task=MT_TASKS),
    params:
        io=lambda wildcards, input: " ".join(f"--source-dir {d} --gold-dir {g}" for d, g in zip(input.sources, input.gold)),
    log:
        "logs/data/meetingtom_consolidate.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench meetingtom consolidate {params.io} --out-dir data/processed/meetingtom > {log} 2>&1"


BENCH["meetingtom"] = {
    "instances": MT_SPLITS["test"],
    "dev": MT_SPLITS["dev"],
    "tables": _mt_table_files() + _mt_stability_files(),  # and the stability table (params meetingtom.robustness)
    "outputs": {
        "demo": MT_DEMO_MIRROR,
        "releases": expand(MT_RELEASE, source=MT_SOURCES),
        "media": [MT_FETCHED.format(source=s, meeting=m) for s in MT_MEDIA_SOURCES for m in MT_MEETINGS[s]],
        "meetings": [MT_MEETING.format(source=s, meeting=m) for s in MT_SOURCES for m in MT_MEETINGS[s]],
        "clips": [MT_CLIPS.format(source=s, meeting=m) for s in MT_MEDIA_SOURCES for m in MT_MEETINGS[s]],
        "sources": expand(MT_SOURCE_DATA, source=MT_SOURCES),
        "annotators": [f"{MT_ANNOTATIONS.format(source=s)}/{f}" for s in MT_SIMULATED for f in MT_SIM_FILES],
        "gold": expand(MT_GOLD, source=MT_SOURCES),
        "human": MT_HUMAN,
        "consolidated": [*MT_SPLITS.values(), *expand("data/processed/meetingtom/tasks/{task}.jsonl", task=MT_TASKS)],
    },
    # what its shared stages read (rules/infer.smk, tables.smk): as MoCA's (rules/moca.smk)
    "dvc": {
        "data": [*MT_SPLITS.values()],
        "infer_params": ["meetingtom.method_options", "meetingtom.ablations", "meetingtom.discourse_markers", "meetingtom.subset"],
        "tables_params": [
            "seed",
            "models",
            "meetingtom.methods",
            "meetingtom.ablations",
            "meetingtom.robustness",
            "meetingtom.tables",
            "meetingtom.ami.mirror",
            "meetingtom.subset",  # a subset run's tables say so under each table
        ],
    },
}
