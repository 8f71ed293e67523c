"""rules/moca_sources.smk with the DVC stages of docs/moca-sources.md, in a scratch copy of the
repository: a no-op without sources; adding a source runs only its own jobs (and the pool's); a
changed threshold reruns the filtering, never an acquisition, under Snakemake and under DVC."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.pipeline import repo_copy

REPO = Path(__file__).resolve().parents[4]
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.slow, pytest.mark.shared]


def dvc_snippet() -> str:
    """The stages as docs/moca-sources.md gives them (the block after 'DVC stages')."""
    doc = (REPO / "docs" / "moca-sources.md").read_text()
    return re.search(r"<!-- dvc-stages -->\n```yaml\n(.*?)```", doc, re.S).group(1)


def scratch_copy(tmp: Path) -> Path:
    # No dvc.lock: it records the demo's outputs, none of which are here, and every DVC command
    # would parse it (the first `dvc repro` below writes the lock of the stages it runs).
    repo_copy(tmp, REPO, skip=("data/", "results/", "mlflow", "dvc.lock"))
    snakefile = (tmp / "Snakefile").read_text()
    if "moca_sources.smk" not in snakefile:
        (tmp / "Snakefile").write_text(
            snakefile.replace(
                'include: "rules/infer.smk"', 'include: "rules/moca_sources.smk"\ninclude: "rules/infer.smk"', 1
            )
        )
    dvc = yaml.safe_load((tmp / "dvc.yaml").read_text())
    if "moca_source_acquire" not in dvc["stages"]:
        dvc["stages"].update(yaml.safe_load(dvc_snippet()))  # into stages: (other top-level keys may follow it)
        (tmp / "dvc.yaml").write_text(yaml.safe_dump(dvc, sort_keys=False))
    return tmp


def set_params(root: Path, **moca) -> None:
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    raw["moca"].update(moca)
    (root / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))


def run(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": str(root / "src"),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "DVC_NO_ANALYTICS": "1",
    }
    proc = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def jobs(dry_run: str) -> dict[str, int]:
    table = re.search(r"job\s+count\n-+\s+-+\n(.*?)\ntotal", dry_run, re.S)
    return {} if table is None else {m[0]: int(m[1]) for m in re.findall(r"^(\S+)\s+(\d+)$", table.group(1), re.M)}


def sources(data: Path, *names: str) -> dict:
    splits = {"mintrec": ["train", "dev"], "mmsd2": ["valid"], "memecap": ["test"]}
    return {
        n: {"mode": "mirror", "mirror": str(data / n), **({"splits": splits[n]} if n in splits else {})} for n in names
    }


FILTERED = "data/interim/moca_sources/pools/main/filtered.jsonl"


def test_sources_run_only_when_listed_and_only_what_changed_reruns(shared_dir, tmp_path):
    root = scratch_copy(tmp_path)
    data = shared_dir / "data"
    assert not [
        j
        for j in jobs(run(root, "snakemake", "-n", "--quiet", "rules"))
        if "source" in j or j in ("moca_preprocess", "moca_unimodal")
    ]

    base = {"preprocess": {"missing_media": "keep", "near_duplicate_threshold": 0.8}, "unimodal": {"text_min_words": 3}}
    set_params(root, sources=sources(data, "mustard", "mmsd2"), pools={"main": ["mustard", "mmsd2"]}, **base)
    run(root, "snakemake", "--quiet", "rules", "--cores", "1", FILTERED)

    set_params(
        root,
        sources=sources(data, "mustard", "mmsd2", "memecap"),
        pools={"main": ["mustard", "mmsd2", "memecap"]},
        **base,
    )
    assert jobs(run(root, "snakemake", "-n", "--quiet", "rules", "--cores", "1", FILTERED)) == {
        "moca_preprocess": 1,
        "moca_source_acquire": 1,
        "moca_source_candidates": 1,
        "moca_unimodal": 1,
    }
    assert "data/raw/moca_sources/memecap/.manifest.json" in run(root, "snakemake", "-n", "--cores", "1", FILTERED)

    set_params(
        root,
        sources=sources(data, "mustard", "mmsd2"),
        pools={"main": ["mustard", "mmsd2"]},
        preprocess=base["preprocess"],
        unimodal={"text_min_words": 4},
    )
    assert jobs(run(root, "snakemake", "-n", "--quiet", "rules", "--cores", "1", FILTERED)) == {"moca_unimodal": 1}


def test_dvc_reruns_only_the_filtering_after_a_threshold_change(shared_dir, tmp_path):
    root = scratch_copy(tmp_path)
    data = shared_dir / "data"
    base = {
        "sources": sources(data, "mustard", "mintrec"),
        "pools": {"main": ["mustard", "mintrec"]},
        "unimodal": {"text_min_words": 3},
    }
    set_params(root, preprocess={"missing_media": "keep", "near_duplicate_threshold": 0.8}, **base)
    run(root, "git", "init", "-q")
    run(root, "dvc", "repro", "moca_unimodal@main")
    set_params(root, preprocess={"missing_media": "keep", "near_duplicate_threshold": 0.9}, **base)
    out = run(root, "dvc", "repro", "moca_unimodal@main")
    ran = sorted(set(re.findall(r"Running stage '([^']+)'", out)))
    assert ran == ["moca_preprocess@main", "moca_unimodal@main"], out
    for stage in ("moca_source_acquire@mustard", "moca_source_acquire@mintrec", "moca_source_candidates@mustard"):
        assert f"Stage '{stage}' didn't change, skipping" in out
