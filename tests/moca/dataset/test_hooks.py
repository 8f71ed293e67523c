"""MoCA's data-stage hooks (src/socialbench/moca/dataset/hooks.py): the demo from params, and raw instances
validated against the benchmark's taxonomy and media roots."""

import json

from PIL import Image

from socialbench.core.benchmarks import get_benchmark
from socialbench.core.config import validate_params
from tests.conftest import make_instance


def test_the_demo_writes_each_split_it_returns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    models = {"random": {"backend": "random", "category": "baseline"}}
    params = validate_params({"seed": 3, "models": models, "moca": {"methods": ["direct"], "demo": {"n_test": 6}}})
    written = get_benchmark("moca").dataset.demo(params, tmp_path / "demo")
    lines = (tmp_path / "demo" / "test.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r["id"] for r in written["test"]]


def test_prepare_keeps_a_valid_record_and_drops_one_with_missing_media_with_its_reason(tmp_path):
    Image.new("RGB", (8, 6)).save(tmp_path / "ok.png")
    raw = tmp_path / "raw.jsonl"
    recs = [make_instance("ok", media=[str(tmp_path / "ok.png")]), make_instance("gone", media=["nowhere.png"])]
    raw.write_text("".join(json.dumps(r) + "\n" for r in recs))
    kept, dropped = get_benchmark("moca").dataset.prepare(raw, "drop")
    assert [r["id"] for r in kept] == ["ok"]
    assert dropped[0]["id"] == "gone" and dropped[0]["problems"][0]["field"] == "media"
