# Media stage (docs/media.md): sampled frames for MoCA video-text instances. Frames go into the
# content-addressed cache data/interim/frames/ (the folder is no output: Snakemake would delete it
# before each run, and the cache is what makes reruns free); the processed instances name every
# frame by path, sha256, source frame index and timestamp. --prune then removes the entries they do
# not name (and what killed runs left in .tmp/), so the DVC-versioned folder depends on the current
# data only, not on earlier runs. The cache's output is its index file, inside the folder (only the
# file is removed before the job): a deleted cache folder takes the index with it, so the job runs
# again (re-extracting what is missing) instead of leaving instances that point at missing frames.
# Bad media: media.on_error (skip | fail), always listed in results/reports/media.jsonl and media.md.

rule moca_frames:
    input:
        instances=expand("data/interim/moca/{split}.jsonl", split=MOCA_MEDIA_SPLITS),
        media="data/raw/moca_demo/media",
        code=stage_code("moca_media"),
    output:
        instances=expand("data/processed/moca/{split}.jsonl", split=MOCA_MEDIA_SPLITS),
        report="results/reports/media.jsonl",
        report_md="results/reports/media.md",
        index=f"{FRAME_CACHE}/index.json",  # the frame cache's entries; the folder itself persists
    params:
        media=config["media"],  # a changed media setting reruns this rule
        io=media_io_pairs,
        frames_dir=lambda wildcards, output: os.path.dirname(output.index),  # the cache holds its index
    log:
        "logs/media/moca_frames.log",
    conda:
        CONDA_ENV
    shell:
        "socialbench media moca-frames {params.io} --frames-dir {params.frames_dir} --prune --index {output.index}"
        " --report {output.report} --report-md {output.report_md} --params params.yaml > {log} 2>&1"
