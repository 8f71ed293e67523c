"""``socialbench track`` (src/socialbench/stages/track.py): one MLflow run per evaluation from the score,
stats and predictions files; bad or mismatched inputs are refused before anything is logged. The
logging itself is tested in tests/results/test_tracking.py."""

import json
import shutil

import pytest

from socialbench.cli import app
from socialbench.core.errors import SocialbenchError
from tests.conftest import make_instance
from tests.stages.conftest import GOOD_PRED, cli_params, metrics, runner, score_file, write_jsonl


def stats_record(instances, **provenance):
    """What `socialbench infer` writes as run accounting, with its record of what the run was made with."""
    from socialbench.core.hashing import sha256_file

    made = {
        "prompt_template_sha256": "p" * 64,
        "taxonomy_sha256": "t" * 64,
        "instances_sha256": sha256_file(instances),
        "dev_sha256": None,
        "git_commit": "c0ffee",
        "versions": {"python": "3.11.7", "torch": "2.13.0"},
    }
    return {
        "requests": 1,
        "cost_usd": 0.0,
        "backend_identity": {"backend": "random", "model_id": "a", "revision": None},
        "provenance": {**made, **provenance},
    }


def track_setup(tmp_path, monkeypatch, scores=None):
    """A complete set of track inputs for models a and b; returns (args without score paths, score paths)."""
    monkeypatch.chdir(tmp_path)  # track puts artifacts under ./mlartifacts
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("x")])
    paths = []
    for model in ("a", "b"):
        (tmp_path / "preds" / model).mkdir(parents=True)
        write_jsonl(tmp_path / "preds" / model / "direct.jsonl", [{"id": "x", **GOOD_PRED}])
        (tmp_path / "runs" / model).mkdir(parents=True)
        (tmp_path / "runs" / model / "direct.stats.json").write_text(json.dumps(stats_record(inst)))
        paths.append(score_file(tmp_path, model, (scores or {}).get(model, {"intent": metrics()})))
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "intent.md").write_text("table\n")
    args = [
        "track",
        "--benchmark",
        "moca",
        "--params",
        str(cli_params(tmp_path)),
        "--instances",
        str(inst),
        "--predictions-dir",
        str(tmp_path / "preds"),
        "--stats-dir",
        str(tmp_path / "runs"),
        "--tables-dir",
        str(tmp_path / "tables"),
        "--out",
        str(tmp_path / "track.json"),
    ]
    return args, paths


def mlflow_runs(tmp_path):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path}/mlflow.db")
    exp = client.get_experiment_by_name("t")
    return [] if exp is None else client.search_runs([exp.experiment_id])


def assert_track_refused(tmp_path, res, *words):
    assert isinstance(res.exception, SocialbenchError), res.exception
    assert all(w in str(res.exception) for w in words), res.exception
    assert not (tmp_path / "track.json").exists()
    if (tmp_path / "mlflow.db").exists():
        assert mlflow_runs(tmp_path) == []


@pytest.mark.slow
def test_track_bad_metric_is_an_error_and_the_fixed_rerun_logs_the_evaluation(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch, {"b": {"intent": {**metrics(), "dyad": "high"}}})
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert_track_refused(tmp_path, res, str(paths[1]), "scenario 'intent', field 'dyad'")
    paths[1].write_text(json.dumps({"intent": metrics()}))
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert res.exit_code == 0, res.output
    assert "2 new run(s), 0 unchanged" in res.stdout
    assert "0 new run(s), 2 unchanged" in runner.invoke(app, [*args, *map(str, paths)]).stdout


def test_track_truncated_score_file_is_an_error(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    paths[0].write_text('{"intent": {"lab')
    assert_track_refused(tmp_path, runner.invoke(app, [*args, *map(str, paths)]), str(paths[0]), "not valid JSON")


def test_track_missing_stats_file_is_an_error(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    (tmp_path / "runs" / "b" / "direct.stats.json").unlink()
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert_track_refused(tmp_path, res, str(tmp_path / "runs" / "b" / "direct.stats.json"), "not found")


def test_track_truncated_stats_file_is_an_error(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    (tmp_path / "runs" / "a" / "direct.stats.json").write_text('{"requests": 1, "co')
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert_track_refused(tmp_path, res, str(tmp_path / "runs" / "a" / "direct.stats.json"), "not valid JSON")


def test_track_missing_tables_folder_is_an_error(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    args[args.index("--tables-dir") + 1] = str(tmp_path / "no-tables")
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert_track_refused(tmp_path, res, str(tmp_path / "no-tables"), "tables folder not found")


def test_track_score_file_of_a_model_not_in_params_is_an_error(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    ghost = score_file(tmp_path, "ghost", {"intent": metrics()})
    res = runner.invoke(app, [*args, *map(str, paths), str(ghost)])
    assert_track_refused(tmp_path, res, str(ghost), "model 'ghost'")


def test_track_missing_instances_file_is_an_error(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    args[args.index("--instances") + 1] = str(tmp_path / "none.jsonl")
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert_track_refused(tmp_path, res, str(tmp_path / "none.jsonl"), "instances file not found")


def test_track_score_file_without_its_predictions_file_is_an_error(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    (tmp_path / "preds" / "a" / "direct.jsonl").unlink()
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert_track_refused(
        tmp_path, res, str(tmp_path / "preds" / "a" / "direct.jsonl"), "predictions file", str(paths[0])
    )


def exclude_b(tmp_path):
    """Params of track_setup in which model b excludes direct (so b/direct has no run)."""
    params = tmp_path / "params.yaml"
    params.write_text(
        params.read_text().replace("b: {backend: prior,", "b: {backend: prior, exclude_methods: {direct: no such run},")
    )
    assert "exclude_methods" in params.read_text()


def test_track_logs_the_runs_params_make_when_an_excluded_pair_has_no_files(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    exclude_b(tmp_path)
    for kind in ("preds", "runs"):
        shutil.rmtree(tmp_path / kind / "b")
    res = runner.invoke(app, [*args, str(paths[0])])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "track.json").read_text())["evaluations"] == ["a/direct"]


def test_track_refuses_the_score_file_of_a_pair_params_exclude(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    exclude_b(tmp_path)
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert_track_refused(tmp_path, res, str(paths[1]), "models.b", "no such run")


def test_track_records_what_the_predictions_were_made_with_not_the_current_code(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert res.exit_code == 0, res.output
    params = mlflow_runs(tmp_path)[0].data.params
    assert params["prompt_template_sha256"] == "p" * 64 and params["taxonomy_sha256"] == "t" * 64
    assert params["infer_git_commit"] == "c0ffee" and params["version.torch"] == "2.13.0"


def test_track_logs_a_text_only_models_category_as_its_table_rows_show_it(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    params = cli_params(tmp_path)
    params.write_text(params.read_text().replace("category: baseline}", "category: baseline, modalities: []}", 1))
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert res.exit_code == 0, res.output
    runs = [r for r in mlflow_runs(tmp_path) if "model" in r.data.tags]  # not the parent run
    logged = {r.data.tags["model"]: r.data.params["category"] for r in runs}
    assert logged == {"a": "baseline (text-only)", "b": "baseline"}


def test_track_refuses_stats_without_the_record_of_what_the_run_was_made_with(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    stats = tmp_path / "runs" / "a" / "direct.stats.json"
    stats.write_text('{"requests": 1, "cost_usd": 0.0}')
    assert_track_refused(tmp_path, runner.invoke(app, [*args, *map(str, paths)]), str(stats), "field 'provenance'")


def test_track_refuses_predictions_made_from_other_instances(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    stats = tmp_path / "runs" / "b" / "direct.stats.json"
    stats.write_text(json.dumps(stats_record(tmp_path / "i.jsonl", instances_sha256="0" * 64)))
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert_track_refused(tmp_path, res, str(stats), "made from other instances")


def test_a_pages_relinker_gives_the_page_with_its_rows_media_read_from_the_link_it_is_given(tmp_path):
    from socialbench.results.viewer_page import CSP, JS, relink_media
    from socialbench.stages.track import relinker

    page = tmp_path / "direct.html"
    page.write_text(f'<html><meta http-equiv="Content-Security-Policy" content="{CSP}"><script>{JS}</script></html>')
    assert relinker(page, "../media")("../../p/artifacts/media") == relink_media(
        page.read_text(), "../media", "../../p/artifacts/media"
    )
    assert relinker(page, "../media")("x") != page.read_text()
