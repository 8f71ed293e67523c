"""socialbench viewer over several runs (``--results-dir``, ``--run MODEL/METHOD``): each run's page the same
bytes as the single-run form writes."""

from socialbench.cli import app
from socialbench.core.errors import SocialbenchError
from tests.stages.conftest import RUNS, run_args, runner


def test_viewer_writes_each_runs_page_and_shards_with_the_bytes_of_single_runs(tmp_path, results):
    inst, root = results
    args = ["viewer", "--benchmark", "moca", "--instances", str(inst), "--media-root", str(tmp_path)]
    res = runner.invoke(app, [*args, "--results-dir", str(root), *run_args(RUNS)])
    assert res.exit_code == 0, res.output
    for run in RUNS:
        model, method = run.split("/")
        single = tmp_path / "single" / model / f"{method}.html"
        res = runner.invoke(
            app,
            [
                *args,
                "--predictions",
                str(root / "predictions" / "moca" / model / f"{method}.jsonl"),
                "--traces",
                str(root / "traces" / "moca" / model / f"{method}.jsonl"),
                "--out",
                str(single),
            ],
        )
        assert res.exit_code == 0, res.output
        page = root / "viewer" / "moca" / model / f"{method}.html"
        assert single.read_bytes() == page.read_bytes()
        shards = sorted((page.parent / f"{method}.shards").iterdir())
        assert shards and [p.read_bytes() for p in shards] == [
            (single.parent / f"{method}.shards" / p.name).read_bytes() for p in shards
        ]


def test_viewer_results_dir_with_out_is_refused(tmp_path, results):
    inst, root = results
    args = ["viewer", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root)]
    res = runner.invoke(app, [*args, "--run", "r/direct", "--out", str(tmp_path / "p.html")])
    assert isinstance(res.exception, SocialbenchError) and not (tmp_path / "p.html").exists()


def test_a_runs_order_runs_are_found_among_the_runs_given_in_its_model_folder_by_order():
    from pathlib import Path

    from socialbench.stages.viewer import order_siblings

    every = [Path(p) for p in ("r/m/direct.jsonl", "r/m/direct__order2.jsonl", "r/m/direct__order1.jsonl")]
    every += [Path("r/n/direct__order1.jsonl"), Path("r/m/codar__order1.jsonl")]
    assert order_siblings(Path("r/m/direct.jsonl"), every) == [(1, every[2]), (2, every[1])]
    assert order_siblings(Path("r/m/direct__order1.jsonl"), every) == []  # an order run's page shows its own
