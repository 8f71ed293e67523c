import math
import os
from datetime import UTC
from pathlib import Path

import pytest

from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.results.tracking import (
    EVAL_KEY_TAG,
    EXPERIMENT_KIND,
    EXPERIMENT_KIND_TAG,
    align_metrics,
    artifact_entries,
    check_store_creatable,
    eval_key,
    log_evaluations,
    parent_run_name,
    parse_stats,
    runs_page_url,
    store_template,
)


def evaluation(tmp_path, model="m", holis=10.0):
    art = tmp_path / f"{model}.json"
    art.write_text("{}")
    return {
        "benchmark": "moca",
        "model": model,
        "method": "direct",
        "params": {"model": model, "backend": "random", "seed": 1},
        "content": {"dataset_sha256": "d", "predictions_sha256": f"p{holis}"},
        "provenance": {"git_commit": "abc", "version.mlflow": "x"},
        "scores": {"intent": {"holis": holis, "faith": None, "n": 3}},
        "stats": {"cache_hits": 0, "cache_misses": 3, "cost_usd": 0.0},
        "artifacts": [art],
    }


@pytest.fixture
def store(tmp_path):
    """No store yet: the first log_evaluations builds it (schema migrations: seconds)."""
    return f"sqlite:///{tmp_path}/mlflow.db", tmp_path / "artifacts"


@pytest.fixture(scope="session")
def empty_store_file(tmp_path_factory):
    """A store as log_evaluations builds it (migrated, no experiment yet), built once per session."""
    from socialbench.results.tracking import _create_sqlite_store

    db = tmp_path_factory.mktemp("empty-store") / "mlflow.db"
    _create_sqlite_store(f"sqlite:///{db}", db)
    return db


@pytest.fixture
def built_store(tmp_path, empty_store_file):
    """``store`` with the empty store already in place (a copy), for the tests that are not about building it."""
    import shutil

    shutil.copyfile(empty_store_file, tmp_path / "mlflow.db")
    return f"sqlite:///{tmp_path}/mlflow.db", tmp_path / "artifacts"


@pytest.mark.slow
def test_children_under_one_parent_and_unchanged_rerun_logs_nothing(tmp_path, built_store):
    uri, arts = built_store
    evs = [evaluation(tmp_path, "a"), evaluation(tmp_path, "b")]
    first = log_evaluations(evs, uri, "exp", arts)
    assert len(first["new"]) == 2 and first["parent"]
    second = log_evaluations(evs, uri, "exp", arts)
    assert second["new"] == [] and second["parent"] is None and len(second["existing"]) == 2

    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("exp")
    runs = client.search_runs([exp.experiment_id])
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == first["parent"]]
    assert len(runs) == 3 and len(children) == 2
    child = children[0]
    assert child.data.metrics["intent.holis"] == 10.0 and math.isnan(child.data.metrics["intent.faith"])
    assert child.data.params["git_commit"] == "abc" and child.data.params["dataset_sha256"] == "d"


@pytest.mark.slow
def test_logging_sets_no_tracking_uri_in_the_process_not_even_while_it_logs(tmp_path, built_store, monkeypatch):
    # Another thread of the process (a parallel job, a server) would read it meanwhile.
    import mlflow
    from mlflow.tracking import MlflowClient

    uri, arts = built_store
    before, seen = mlflow.get_tracking_uri(), []
    log_artifact = MlflowClient.log_artifact

    def watched(self, *args, **kwargs):
        seen.append((os.environ.get("MLFLOW_TRACKING_URI"), mlflow.get_tracking_uri()))
        return log_artifact(self, *args, **kwargs)

    monkeypatch.setattr(MlflowClient, "log_artifact", watched)
    assert len(log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts)["new"]) == 1
    assert seen and set(seen) == {(None, before)}
    assert "MLFLOW_TRACKING_URI" not in os.environ and mlflow.get_tracking_uri() == before


@pytest.mark.slow
def test_runs_carry_the_context_tags_mlflow_start_run_gives(tmp_path, built_store):
    uri, arts = built_store
    out = log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts)
    (child,) = [r for r in runs_of(uri) if r.info.run_id in out["new"]]
    assert {"mlflow.user", "mlflow.source.name", "mlflow.source.type"} <= set(child.data.tags)
    assert child.data.tags["mlflow.runName"] == child.info.run_name and child.info.status == "FINISHED"


@pytest.mark.slow
def test_changed_result_logs_only_that_evaluation(tmp_path, built_store):
    uri, arts = built_store
    log_evaluations([evaluation(tmp_path, "a"), evaluation(tmp_path, "b")], uri, "exp", arts)
    out = log_evaluations([evaluation(tmp_path, "a"), evaluation(tmp_path, "b", holis=20.0)], uri, "exp", arts)
    assert len(out["new"]) == 1 and len(out["existing"]) == 1


def test_eval_key_ignores_provenance_drift(tmp_path):
    a = evaluation(tmp_path)
    b = evaluation(tmp_path)
    b["provenance"] = {"git_commit": "def"}
    assert eval_key(a) == eval_key(b)
    b["content"] = {"dataset_sha256": "other"}
    assert eval_key(a) != eval_key(b)


@pytest.mark.slow
def test_parallel_writers_do_not_lock_the_database(tmp_path, store):
    import concurrent.futures as cf

    uri, arts = store
    with cf.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda k: log_evaluations([evaluation(tmp_path, f"m{k}")], uri, "exp", arts), range(4)))
    assert sum(len(r["new"]) for r in results) == 4


def runs_of(uri, experiment="exp"):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment)
    return [] if exp is None else client.search_runs([exp.experiment_id])


@pytest.mark.slow
def test_a_failed_run_with_the_eval_key_does_not_block_a_rerun(tmp_path, built_store):
    # A run that crashed after it got the key tag (as older versions tagged first) is not "logged".
    from mlflow.tracking import MlflowClient

    uri, arts = built_store
    ev = evaluation(tmp_path, "a")
    client = MlflowClient(uri)
    exp_id = client.create_experiment("exp", artifact_location=arts.resolve().as_uri())
    failed = client.create_run(exp_id, tags={EVAL_KEY_TAG: eval_key(ev)})
    client.set_terminated(failed.info.run_id, status="FAILED")
    killed = client.create_run(exp_id, tags={EVAL_KEY_TAG: eval_key(ev)})  # never ended: left RUNNING
    out = log_evaluations([ev], uri, "exp", arts)
    assert len(out["new"]) == 1 and out["existing"] == []
    assert out["new"][0] not in (failed.info.run_id, killed.info.run_id)
    assert log_evaluations([ev], uri, "exp", arts)["existing"] == out["new"]


@pytest.mark.slow
def test_a_run_that_crashes_half_way_is_logged_again_by_the_rerun(tmp_path, built_store, monkeypatch):
    from mlflow.tracking import MlflowClient

    uri, arts = built_store
    ev = evaluation(tmp_path, "a")

    def broken(*args, **kwargs):
        raise OSError("disk full")

    with monkeypatch.context() as m:
        m.setattr(MlflowClient, "log_artifact", broken)
        with pytest.raises(OSError, match="disk full"):
            log_evaluations([ev], uri, "exp", arts)
    crashed = [r for r in runs_of(uri) if r.data.tags.get("model") == "a"]
    assert [r.info.status for r in crashed] == ["FAILED"] and EVAL_KEY_TAG not in crashed[0].data.tags
    out = log_evaluations([ev], uri, "exp", arts)
    assert len(out["new"]) == 1 and out["existing"] == []
    finished = [r for r in runs_of(uri) if r.data.tags.get(EVAL_KEY_TAG) == eval_key(ev)]
    assert [r.info.run_id for r in finished] == out["new"] and finished[0].info.status == "FINISHED"


@pytest.mark.slow
def test_a_non_numeric_metric_fails_before_any_run_starts(tmp_path, built_store):
    uri, arts = built_store
    good, bad = evaluation(tmp_path, "a"), evaluation(tmp_path, "b")
    bad["scores"]["intent"]["dyad"] = "high"
    with pytest.raises(SocialbenchError, match=r"moca/b/direct scores, group 'intent', field 'dyad': must be a number"):
        log_evaluations([good, bad], uri, "exp", arts)
    assert runs_of(uri) == []
    bad["scores"]["intent"]["dyad"] = 4.17
    assert len(log_evaluations([good, bad], uri, "exp", arts)["new"]) == 2


@pytest.mark.slow
def test_a_missing_artifact_fails_before_any_run_starts(tmp_path, built_store):
    uri, arts = built_store
    ev = evaluation(tmp_path, "a")
    ev["artifacts"].append(tmp_path / "gone.json")
    with pytest.raises(SocialbenchError, match="gone.json not found"):
        log_evaluations([ev], uri, "exp", arts)
    assert runs_of(uri) == []


def test_a_store_whose_path_runs_through_a_file_is_named_before_anything_is_logged(tmp_path):
    """Issue 33, class 9: not a bare "File exists" from the lock file's folder."""
    (tmp_path / "hostname").write_text("h\n")
    uri = f"sqlite:///{tmp_path}/hostname/mlflow.db"
    with pytest.raises(
        ConfigError,
        match=rf"mlflow.db: the MLflow tracking store cannot be created there: "
        rf"{tmp_path / 'hostname'} is a file, not a folder \(mlflow.tracking_uri",
    ):
        log_evaluations([evaluation(tmp_path)], uri, "exp", tmp_path / "artifacts")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostname", "m.json"]


def test_a_store_in_a_folder_still_to_be_made_or_not_sqlite_passes_the_check(tmp_path):
    check_store_creatable(f"sqlite:///{tmp_path}/new/folder/mlflow.db")
    check_store_creatable("http://127.0.0.1:5000")


def test_a_store_that_names_a_folder_is_refused_before_anything_is_logged(tmp_path):
    from socialbench.core.errors import ConfigError

    (tmp_path / "store").mkdir()
    with pytest.raises(ConfigError, match=r"store: names a folder, not an SQLite file"):
        check_store_creatable(f"sqlite:///{tmp_path}/store")
    assert list((tmp_path / "store").iterdir()) == []


def test_parse_stats_reads_the_run_accounting():
    assert parse_stats(b'{"requests": 3, "cost_usd": 0.5}', "s.json") == {"requests": 3, "cost_usd": 0.5}


@pytest.mark.parametrize(
    "data, words",
    [(b'{"requests": 3, "cach', "not valid JSON"), (b"[1]", "must be a JSON object"), (b"\xff\xfe", "not UTF-8")],
)
def test_bad_stats_file_is_an_error_naming_it(data, words):
    with pytest.raises(DataError) as exc:
        parse_stats(data, "runs/m/direct.stats.json")
    assert exc.value.path == "runs/m/direct.stats.json" and words in str(exc.value)


@pytest.mark.parametrize("data", [b'{"requests": 3, "cach', b"\xff\xfe"])
def test_stats_and_score_files_share_one_parser_and_its_messages(data):
    from socialbench.moca.eval.scoring import parse_scores

    with pytest.raises(DataError) as stats_err:
        parse_stats(data, "f.json")
    with pytest.raises(DataError) as scores_err:
        parse_scores(data, "f.json")
    assert str(stats_err.value) == str(scores_err.value)


# A kill -9 at a chosen point, for real: the child process kills itself (SIGKILL) when MLflow's
# schema migrations create their first temporary table (about half-way through building a store),
# or when a run logs its first artifact.
KILLER = """
import json, os, signal, sys
from sqlalchemy import event
from sqlalchemy.engine import Engine

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

@event.listens_for(Engine, "after_cursor_execute")
def die_in_migrations(conn, cursor, statement, *args):
    if sys.argv[1] != "log_artifact" and "_alembic_tmp_" in statement:
        die()

if sys.argv[1] == "mlflow":  # MLflow builds the store in place, as track did before building it aside
    from mlflow.tracking import MlflowClient
    MlflowClient(sys.argv[2])
else:
    from mlflow.tracking import MlflowClient
    from socialbench.results.tracking import log_evaluations
    if sys.argv[1] == "log_artifact":
        MlflowClient.log_artifact = die
    log_evaluations(json.loads(sys.argv[3]), sys.argv[2], "exp", sys.argv[4])
"""


def killed(mode, uri, arts, evaluations=()):
    import json
    import subprocess
    import sys

    args = [sys.executable, "-c", KILLER, mode, uri, json.dumps(list(evaluations), default=str), str(arts)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr


@pytest.mark.slow
def test_a_track_killed_while_building_the_store_template_leaves_no_store_and_the_rerun_builds_both(
    tmp_path, store, monkeypatch
):
    uri, arts = store
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no template there: the track builds it
    killed("track", uri, arts)
    assert not (tmp_path / "mlflow.db").exists() and not list((tmp_path / "cache").rglob("*.db"))
    out = log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts)
    assert len(out["new"]) == 1 and [r.info.status for r in runs_of(uri) if r.info.run_id in out["new"]] == ["FINISHED"]
    assert sorted(p.name for p in tmp_path.glob("mlflow.db*")) == ["mlflow.db", "mlflow.db.lock"]
    assert store_template().parent == tmp_path / "cache" / "socialbench" / "mlflow"


@pytest.mark.slow
def test_a_new_store_is_the_templates_copy_and_mlflow_gives_it_the_default_experiment(tmp_path, store, monkeypatch):
    from mlflow.store.db import utils
    from mlflow.tracking import MlflowClient

    uri, arts = store
    store_template()  # found, or built once
    monkeypatch.setattr(utils, "_initialize_tables", lambda engine: pytest.fail("the schema migrations ran"))
    assert len(log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts)["new"]) == 1
    default = MlflowClient(uri).get_experiment("0")  # where MLflow puts it in a store it builds in place
    assert default.name == "Default" and default.artifact_location == str(Path.cwd() / "mlruns" / "0")


@pytest.mark.slow
def test_a_leftover_temporary_store_is_discarded(tmp_path, store):
    uri, arts = store
    (tmp_path / "mlflow.db-new").write_bytes(b"half-built by a killed track" * 100)
    (tmp_path / "mlflow.db-new-journal").write_bytes(b"its rollback journal" * 100)
    assert len(log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts)["new"]) == 1
    assert sorted(p.name for p in tmp_path.glob("mlflow.db*")) == ["mlflow.db", "mlflow.db.lock"]


@pytest.mark.slow
@pytest.mark.parametrize("broken", ["half-built", "not a database"])
def test_a_store_that_cannot_be_opened_is_one_line_naming_it_and_moving_it_aside_recovers(tmp_path, store, broken):
    uri, arts = store
    db = tmp_path / "mlflow.db"
    if broken == "half-built":
        killed("mlflow", uri, arts)  # a store built in place (by MLflow itself) and killed half-way
    else:
        db.write_text("not an MLflow database\n" * 100)
    with pytest.raises(SocialbenchError) as exc:
        log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"{db}: cannot open the MLflow tracking store") and "move it aside" in msg
    db.rename(tmp_path / "mlflow.db.broken")
    assert len(log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts)["new"]) == 1


@pytest.mark.slow
def test_runs_a_killed_track_left_running_are_marked_killed_by_the_next(tmp_path, built_store):
    uri, arts = built_store
    ev = evaluation(tmp_path, "a")
    killed("log_artifact", uri, arts, [ev])
    left = runs_of(uri)
    assert len(left) == 2 and {r.info.status for r in left} == {"RUNNING"}  # the parent and its child
    out = log_evaluations([ev], uri, "exp", arts)
    status = {r.info.run_id: r.info.status for r in runs_of(uri)}
    assert {status[r.info.run_id] for r in left} == {"KILLED"} and status[out["new"][0]] == "FINISHED"


def test_a_methods_run_summary_and_stage_use_are_logged_as_numbers(tmp_path):
    from socialbench.results.tracking import _prepare

    ev = evaluation(tmp_path)
    ev["stats"] = {
        **ev["stats"],
        "method": {"acceptance_rate": 0.5, "note": "x"},
        "stages": {"checker": {"calls": 4, "cost_usd": 0.25}},
    }
    stats = _prepare(ev)["stats"]
    assert stats["method.acceptance_rate"] == 0.5 and "method.note" not in stats
    assert stats["stage.checker.calls"] == 4.0 and stats["stage.checker.cost_usd"] == 0.25


def test_what_each_request_was_constrained_with_and_the_temperature_are_logged_as_numbers(tmp_path):
    from socialbench.results.tracking import _prepare

    ev = evaluation(tmp_path)
    ev["stats"] = {**ev["stats"], "constraints": {"key_schema": 72}, "temperature_sent": False, "reasoning": 3}
    stats = _prepare(ev)["stats"]
    assert stats["constraint.key_schema"] == 72.0 and stats["temperature_sent"] == 0.0 and stats["reasoning"] == 3.0


def test_a_run_with_no_model_logs_no_temperature(tmp_path):
    from socialbench.results.tracking import _prepare

    ev = evaluation(tmp_path)
    ev["stats"] = {**ev["stats"], "constraints": {"none": 2}, "temperature_sent": None}
    stats = _prepare(ev)["stats"]
    assert "temperature_sent" not in stats and stats["constraint.none"] == 2.0


@pytest.mark.slow
def test_tables_and_figures_are_artifacts_of_the_parent_run_and_an_unchanged_rerun_logs_nothing(tmp_path, built_store):
    uri, arts = built_store
    (tmp_path / "tables" / "figures").mkdir(parents=True)
    table, figure = tmp_path / "tables" / "intent.md", tmp_path / "tables" / "figures" / "fig9.png"
    table.write_text("| a |\n")
    figure.write_bytes(b"\x89PNG")
    files = [(table, "tables"), (figure, "tables/figures")]
    first = log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts, artifacts=files)
    from mlflow.tracking import MlflowClient

    logged = MlflowClient(uri).list_artifacts(first["parent"], "tables")
    assert {a.path for a in logged} == {"tables/intent.md", "tables/figures"}
    assert log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts, artifacts=files)["parent"] is None


@pytest.mark.slow
def test_changed_tables_get_a_new_parent_run_even_when_every_evaluation_is_unchanged(tmp_path, built_store):
    uri, arts = built_store
    table = tmp_path / "intent.md"
    table.write_text("old\n")
    log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts, artifacts=[(table, "tables")])
    table.write_text("new\n")
    out = log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts, artifacts=[(table, "tables")])
    assert out["parent"] and out["new"] == [] and len(out["existing"]) == 1


def prepared(tmp_path, model, **scores):
    from socialbench.results.tracking import _prepare

    ev = evaluation(tmp_path, model)
    ev["scores"] = {"intent": {"n": 3, **scores}}
    return _prepare(ev)


def test_an_undefined_metric_is_kept_with_its_reason_in_a_tag(tmp_path):
    pr = prepared(tmp_path, "a", holis=0.0, dyad=0.0, c_sem_dyad=None)
    assert "intent.c_sem_dyad" in pr["metrics"] and pr["metrics"]["intent.c_sem_dyad"] is None
    assert "Dyad is 0" in pr["tags"]["undefined.intent.c_sem_dyad"]


def test_every_run_of_a_benchmark_gets_the_same_metric_names(tmp_path):
    runs = [prepared(tmp_path, "a", faith=50.0), prepared(tmp_path, "b", faith=None), prepared(tmp_path, "c")]
    align_metrics(runs)
    assert [sorted(r["metrics"]) for r in runs] == [["intent.faith", "intent.n"]] * 3
    assert "Faith's denominator" in runs[1]["tags"]["undefined.intent.faith"]
    assert "not reported by this run" in runs[2]["tags"]["undefined.intent.faith"]
    assert not any(t.startswith("undefined.") for t in runs[0]["tags"])


def test_evaluation_runs_are_tagged_for_grouping_and_filtering(tmp_path):
    from socialbench.results.tracking import _prepare

    ev = {**evaluation(tmp_path, "a"), "category": "baseline"}
    tags, params = _prepare(ev)["tags"], _prepare(ev)["params"]
    assert {k: tags[k] for k in ("benchmark", "model", "category", "method")} == {
        "benchmark": "moca",
        "model": "a",
        "category": "baseline",
        "method": "direct",
    }
    assert params["benchmark"] == "moca" and params["category"] == "baseline"


def test_artifacts_go_under_benchmark_model_method_with_their_given_names(tmp_path):
    ev = evaluation(tmp_path, "a")
    ev["artifacts"] = [
        (tmp_path / "direct.jsonl", "predictions.jsonl"),
        (tmp_path / "intent.md", "tables/intent.md"),
        tmp_path / "plain.json",
    ]
    assert artifact_entries(ev) == [
        (str(tmp_path / "direct.jsonl"), "moca/a/direct", "predictions.jsonl"),
        (str(tmp_path / "intent.md"), "moca/a/direct/tables", "intent.md"),
        (str(tmp_path / "plain.json"), "moca/a/direct", "plain.json"),
    ]


def test_parent_run_name_tells_invocations_apart(tmp_path):
    from datetime import datetime

    when = datetime(2026, 11, 30, 7, 31, tzinfo=UTC)
    evs = [evaluation(tmp_path, "a")]
    assert (
        parent_run_name(evs, 3, 5, "1a2b3c4d5e6f-dirty", when)
        == "2026-11-30 07:31Z 1a2b3c4-dirty moca: 3 new, 5 unchanged"
    )
    assert (
        parent_run_name(evs, 0, 1, "1a2b3c4d5e6f", when)
        == "2026-11-30 07:31Z 1a2b3c4 moca: tables changed, 1 unchanged"
    )


def test_eval_key_includes_the_log_layout(tmp_path, monkeypatch):
    import socialbench.results.tracking as tracking

    before = eval_key(evaluation(tmp_path))
    monkeypatch.setattr(tracking, "LOG_LAYOUT", tracking.LOG_LAYOUT + 1)
    assert eval_key(evaluation(tmp_path)) != before


@pytest.mark.slow
def test_a_logged_run_has_named_artifacts_nan_metrics_and_the_experiment_opens_on_runs(tmp_path, built_store):
    from mlflow.tracking import MlflowClient

    uri, arts = built_store
    ev = evaluation(tmp_path, "a")
    ev["artifacts"] = [(ev["artifacts"][0], "scores.json")]
    out = log_evaluations([ev], uri, "exp", arts)
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("exp")
    assert exp.tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND
    assert [a.path for a in client.list_artifacts(out["new"][0], "moca/a/direct")] == ["moca/a/direct/scores.json"]
    run = client.get_run(out["new"][0])
    assert math.isnan(run.data.metrics["intent.faith"]) and "undefined.intent.faith" in run.data.tags
    assert client.get_run(out["parent"]).info.run_name.endswith("moca: 1 new, 0 unchanged")
    assert runs_page_url(uri, "exp", "http://127.0.0.1:5000") == (
        f"http://127.0.0.1:5000/#/experiments/{exp.experiment_id}/runs?orderByKey=attributes.run_name&orderByAsc=true"
    )


@pytest.mark.slow
def test_an_experiment_made_without_the_kind_tag_gets_it(tmp_path, built_store):
    from mlflow.tracking import MlflowClient

    uri, arts = built_store
    log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts)
    client = MlflowClient(uri)
    exp_id = client.get_experiment_by_name("exp").experiment_id
    client.delete_experiment_tag(exp_id, EXPERIMENT_KIND_TAG)
    log_evaluations([evaluation(tmp_path, "a")], uri, "exp", arts)
    assert client.get_experiment(exp_id).tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND


def test_runs_page_url_without_a_store_is_the_base_address(tmp_path):
    assert runs_page_url(f"sqlite:///{tmp_path}/none.db", "exp", "http://127.0.0.1:5000") == "http://127.0.0.1:5000"


# ---- waits: a closed port fails within seconds, naming the store redacted (docs/security.md, "Waits") --


class _LockServer:
    """A test double of the registered-model calls ``server_lock`` makes, answering as MLflow's server
    does (MlflowException with its error code); ``lost_replies`` makes the first create or delete be
    carried out and then answered with an error, as a 5xx that MLflow's client retries."""

    def __init__(self, lost_replies: set[str]):
        self.models: dict[str, dict] = {}
        self.lost = set(lost_replies)

    def _error(self, code: str):
        from mlflow.exceptions import MlflowException
        from mlflow.protos import databricks_pb2

        return MlflowException("answered as a retried request is", error_code=getattr(databricks_pb2, code))

    def create_registered_model(self, name, tags):
        if name in self.models and "holder-releases" in self.lost:
            # MLflow's store looks the holder up after the conflict; it released in between
            self.lost.discard("holder-releases")
            del self.models[name]
            raise self._error("RESOURCE_DOES_NOT_EXIST")
        if name in self.models:
            raise self._error("RESOURCE_ALREADY_EXISTS")
        self.models[name] = dict(tags)
        if "create" in self.lost:  # done, but its reply lost: the client's retry is what the caller sees
            self.lost.discard("create")
            raise self._error("RESOURCE_ALREADY_EXISTS")

    def get_registered_model(self, name):
        if name not in self.models:
            raise self._error("RESOURCE_DOES_NOT_EXIST")
        return type("Held", (), {"tags": self.models[name]})()

    def delete_registered_model(self, name):
        if name not in self.models:
            raise self._error("RESOURCE_DOES_NOT_EXIST")
        del self.models[name]
        if "delete" in self.lost:
            self.lost.discard("delete")
            raise self._error("RESOURCE_DOES_NOT_EXIST")


def test_a_lock_create_retried_after_it_was_done_is_this_process_s_own_lock():
    from socialbench.results.tracking import server_lock

    client = _LockServer({"create"})
    with server_lock(client, "exp", timeout_s=1.0, poll_s=0.01):
        assert "socialbench-lock.exp" in client.models
    assert client.models == {}


def test_a_lock_delete_retried_after_it_was_done_is_logged_not_raised(caplog):
    from socialbench.results.tracking import server_lock

    client = _LockServer({"delete"})
    with server_lock(client, "exp", timeout_s=1.0, poll_s=0.01):
        pass
    assert client.models == {}
    assert "already gone at release" in caplog.text


def test_a_lock_released_between_the_servers_conflict_and_its_lookup_is_taken_on_the_next_try():
    import socket

    from socialbench.results.tracking import HOST_TAG, PROCESS_TAG, process_id, server_lock

    client = _LockServer({"holder-releases"})
    other = {HOST_TAG: socket.gethostname(), PROCESS_TAG: process_id(os.getppid()), "since": "1"}
    client.models["socialbench-lock.exp"] = other
    with server_lock(client, "exp", timeout_s=1.0, poll_s=0.01):
        assert client.models["socialbench-lock.exp"][PROCESS_TAG] == process_id()
    assert client.models == {}


def test_a_lock_held_by_another_live_process_of_this_host_is_waited_for_not_taken(tmp_path):
    import socket

    from socialbench.core.errors import SocialbenchError
    from socialbench.results.tracking import HOST_TAG, PROCESS_TAG, process_id, server_lock

    parent = process_id(os.getppid())  # alive for the whole test, and not this process
    client = _LockServer(set())
    client.models["socialbench-lock.exp"] = {HOST_TAG: socket.gethostname(), PROCESS_TAG: parent, "since": "1"}
    with pytest.raises(SocialbenchError, match="has held the tracking server's lock"):
        with server_lock(client, "exp", timeout_s=0.05, poll_s=0.01):
            pass
    assert client.models["socialbench-lock.exp"][PROCESS_TAG] == parent


def test_a_runs_artifact_folder_links_another_runs_by_a_path_relative_to_the_artifact_root():
    from socialbench.results.tracking import artifact_link

    child = "file:///repo/mlartifacts/c1/artifacts/moca/m/direct/viewer"
    assert artifact_link(child, "file:///repo/mlartifacts/p0/artifacts/media") == "../../../../../../p0/artifacts/media"
    served = "mlflow-artifacts:/1/c1/artifacts/moca/m/direct/viewer"
    assert artifact_link(served, "mlflow-artifacts:/1/p0/artifacts/media") == "../../../../../../p0/artifacts/media"


def test_artifact_folders_in_different_stores_have_no_link():
    from socialbench.results.tracking import artifact_link

    with pytest.raises(SocialbenchError, match="different stores"):
        artifact_link("file:///a/c1/artifacts", "s3://bucket/p0/artifacts")


@pytest.mark.slow
def test_a_folder_artifact_is_logged_in_one_call_and_keeps_its_files(tmp_path, built_store, monkeypatch):
    from mlflow.tracking import MlflowClient

    uri, arts = built_store
    shards = tmp_path / "direct.shards"
    shards.mkdir()
    for k in range(50):
        (shards / f"{k:03d}.js").write_text(f"s({k});\n")
    ev = evaluation(tmp_path, "a")
    ev["artifacts"] = [(ev["artifacts"][0], "scores.json"), (shards, "viewer/direct.shards")]
    calls = []
    log_artifacts = MlflowClient.log_artifacts
    monkeypatch.setattr(
        MlflowClient, "log_artifacts", lambda self, *a, **k: calls.append(a) or log_artifacts(self, *a, **k)
    )
    out = log_evaluations([ev], uri, "exp", arts)
    assert len(calls) == 1
    logged = MlflowClient(uri).list_artifacts(out["new"][0], "moca/a/direct/viewer/direct.shards")
    assert sorted(a.path.rsplit("/", 1)[1] for a in logged) == sorted(p.name for p in shards.iterdir())


@pytest.mark.slow
def test_the_pages_media_are_packed_once_in_the_parent_run_and_an_unchanged_rerun_logs_nothing(tmp_path, built_store):
    """400 media shown by two pages, with packs of 2,000 bytes: the parent's media/ holds the packs and
    their index only, together the media's bytes once (the index aside), and each page is logged as its
    relink makes it for the link to them."""
    import hashlib
    import json

    from socialbench.results.viewer_packs import INDEX_NAME, read_packed

    uri, arts = built_store
    (tmp_path / "media").mkdir()
    media = {}
    for k in range(400):
        data = f"medium {k} ".encode() * 20
        name = hashlib.sha256(data).hexdigest() + ".jpg"
        (tmp_path / "media" / name).write_bytes(data)
        media[name] = tmp_path / "media" / name
    names = sorted(media)
    evs = []
    for model, shown in (("a", names[:300]), ("b", names[100:])):
        page = tmp_path / f"{model}.html"
        page.write_text("<html>a page</html>")
        ev = evaluation(tmp_path, model)
        ev["viewer"] = {"page": page, "folder": "viewer", "media": {n: media[n] for n in shown}, "relink": str.upper}
        evs.append(ev)
    out = log_evaluations(evs, uri, "exp", arts, media_pack_bytes=2000)
    parent = next(p for p in arts.glob("*/artifacts") if p.parent.name == out["parent"])
    index = json.loads((parent / "media" / INDEX_NAME).read_text())
    assert len(index["packs"]) >= 40 and sorted(index["media"]) == names
    assert sorted(p.name for p in (parent / "media").iterdir()) == sorted([*index["packs"], INDEX_NAME])
    packed = sum((parent / "media" / p).stat().st_size for p in index["packs"])
    assert packed == sum(p.stat().st_size for p in media.values())
    assert all(read_packed(parent / "media", n, index) == media[n].read_bytes() for n in names)
    runs = [p for p in arts.glob("*/artifacts")]
    assert all(sum(1 for f in r.rglob("*") if f.is_file()) <= 2000 for r in runs)
    for child, model in zip(out["new"], "ab"):
        page = next(arts.glob(f"{child}/artifacts/moca/{model}/direct/viewer/{model}.html"))
        assert page.read_text() == "../../../../../../{}/ARTIFACTS/MEDIA".format(out["parent"].upper())
    files = sorted(f for f in arts.rglob("*") if f.is_file())
    assert log_evaluations(evs, uri, "exp", arts, media_pack_bytes=2000)["parent"] is None
    assert sorted(f for f in arts.rglob("*") if f.is_file()) == files
