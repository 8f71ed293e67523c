"""``socialbench tables`` (src/socialbench/stages/tables.py): order runs (params robustness,
``<run>__order<k>``) reach the stability tables only, never the paper tables or the headline."""

import json

from socialbench.core.benchmarks import register
from socialbench.stages.tables import render_tables
from tests.helpers.toybench.benchmark import ToyBenchmark


def _scores(root, run, accuracy):
    path = root / "scores" / "toybench" / "r" / f"{run}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"all": {"accuracy": accuracy, "n": 2}}))
    return path


def _render(tmp_path, name, scores):
    params = tmp_path / "params.yaml"
    params.write_text("seed: 1\nmodels: {r: {backend: random, category: baseline}}\ntoybench: {methods: [direct]}\n")
    out = tmp_path / name
    render_tables("toybench", scores, out / "tables", out / "headline.json", params)
    return (out / "tables" / "accuracy.md").read_bytes(), json.loads((out / "headline.json").read_text())


def test_order_runs_leave_the_paper_tables_and_the_headline_byte_identical(tmp_path):
    register(ToyBenchmark)
    paper = _scores(tmp_path, "direct", 50.0)
    orders = [_scores(tmp_path, "direct__order1", 0.0), _scores(tmp_path, "direct__order2", 100.0)]
    alone, head_alone = _render(tmp_path, "alone", [paper])
    with_orders, head = _render(tmp_path, "with", [paper, *orders])
    assert with_orders == alone and b"order" not in with_orders
    assert head == head_alone == {"r.direct": 50.0}
