"""The `socialbench moca sources|acquire|candidates|preprocess|unimodal` commands."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from socialbench.cli import app

runner = CliRunner()
REPO = Path(__file__).resolve().parents[4]


def invoke(*args):
    res = runner.invoke(app, ["moca", *map(str, args)])
    assert res.exit_code == 0, (res.output, res.exception)
    return res


def params_file(tmp_path, moca):
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    raw["moca"].update(moca)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_sources_lists_locations_and_the_manual_steps():
    out = invoke("sources").output
    assert "hateful_memes: Hateful Memes" in out and "Accept the dataset licence" in out
    assert "sha256 ec9533032c5f143f197cb5fa5d4b29ab9bf56a20b0dc05d5b31d052f5957d39c" in out


@pytest.mark.shared
def test_mirror_acquisition_then_filtering_of_the_shared_files(shared_dir, tmp_path):
    data = shared_dir / "data"
    sources = {
        "mustard": {"mode": "mirror", "mirror": str(data / "mustard")},
        "mmsd2": {"mode": "mirror", "mirror": str(data / "mmsd2"), "splits": ["valid"]},
    }
    params = params_file(tmp_path, {"sources": sources, "preprocess": {"missing_media": "keep"}})
    inputs = []
    for name in sources:
        invoke("acquire", "--source", name, "--root", tmp_path / "raw" / name, "--params", params)
        invoke(
            "candidates",
            "--source",
            name,
            "--root",
            tmp_path / "raw" / name,
            "--out",
            tmp_path / f"{name}.jsonl",
            "--params",
            params,
        )
        inputs += ["--input", tmp_path / f"{name}.jsonl"]
    for k in (1, 2):
        invoke(
            "preprocess",
            *inputs,
            "--out",
            tmp_path / f"pre{k}.jsonl",
            "--report",
            tmp_path / f"pre{k}.report.jsonl",
            "--counts-json",
            tmp_path / f"pre{k}.json",
            "--counts-md",
            tmp_path / f"pre{k}.md",
            "--params",
            params,
        )
    assert (tmp_path / "pre1.jsonl").read_bytes() == (tmp_path / "pre2.jsonl").read_bytes()
    assert (tmp_path / "pre1.report.jsonl").read_bytes() == (tmp_path / "pre2.report.jsonl").read_bytes()
    counts = json.loads((tmp_path / "pre1.json").read_text())
    assert counts["total"]["pool"] == 690 + 2410
    kept = sum(1 for _ in (tmp_path / "pre1.jsonl").open())
    removed = sum(1 for _ in (tmp_path / "pre1.report.jsonl").open())
    assert kept + removed == 690 + 2410 and counts["total"]["kept"] == kept
    invoke(
        "unimodal",
        "--input",
        tmp_path / "pre1.jsonl",
        "--out",
        tmp_path / "uni.jsonl",
        "--report",
        tmp_path / "uni.report.jsonl",
        "--counts-json",
        tmp_path / "uni.json",
        "--params",
        params,
    )
    from socialbench.moca.dataset.unimodal import REASONS

    uni = json.loads((tmp_path / "uni.json").read_text())["total"]
    assert uni["pool"] == kept == uni["kept"] + sum(uni[r] for r in REASONS)
    assert uni["kept"] == sum(1 for _ in (tmp_path / "uni.jsonl").open())


def test_a_truncated_source_file_stops_the_command_with_one_line_naming_file_and_record(tmp_path):
    (tmp_path / "valid.json").write_text('[{"image_id": 1, "text": "a", "label": 0},\n {"image_id": 2, "te')
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "socialbench",
            "moca",
            "candidates",
            "--source",
            "mmsd2",
            "--root",
            str(tmp_path),
            "--split",
            "valid",
            "--out",
            str(tmp_path.parent / f"{tmp_path.name}-c.jsonl"),  # outside the source's folder, which is read
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: {tmp_path / 'valid.json'}, record 2, after record 1: invalid JSON"
    )
    assert not (tmp_path.parent / f"{tmp_path.name}-c.jsonl").exists()


@pytest.mark.slow
def test_counts_go_to_mlflow_once_per_content(tmp_path):
    from mlflow.tracking import MlflowClient

    from socialbench.moca.dataset.preprocess import REASONS, log_counts_mlflow

    rows = [{"source": "total", "pool": 3, **{r: 0 for r in REASONS}, "kept": 3}]
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    first = log_counts_mlflow(
        rows, "preprocess", uri, {"near_duplicate_threshold": 0.8}, artifact_root=str(tmp_path / "art")
    )
    assert log_counts_mlflow(rows, "preprocess", uri, {"near_duplicate_threshold": 0.8}) == first
    run = MlflowClient(uri).get_run(first)
    assert run.data.metrics["total.kept"] == 3.0 and run.data.params["near_duplicate_threshold"] == "0.8"


def test_preprocess_refuses_a_candidate_file_that_breaks_the_schema(tmp_path):
    from socialbench.core.errors import DataError
    from socialbench.moca.dataset.sources.base import candidate

    rec = candidate("mmsd2", "1", split="valid", modality="image_text", text="t", origin_file="f", origin_record="1")
    del rec["text"]
    (tmp_path / "c.jsonl").write_text(json.dumps(rec) + "\n")
    res = runner.invoke(
        app,
        [
            "moca",
            "preprocess",
            "--input",
            str(tmp_path / "c.jsonl"),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--report",
            str(tmp_path / "r.jsonl"),
        ],
    )
    assert isinstance(res.exception, DataError)
    assert str(res.exception) == f"{tmp_path / 'c.jsonl'}, record mmsd2:1, field 'text': missing"
