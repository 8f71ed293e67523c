import pytest

from socialbench.tracking import eval_key, log_evaluations


def evaluation(tmp_path, model="m", holis=10.0):
    art = tmp_path / f"{model}.json"
    art.write_text("{}")
    return {
        "benchmark": "moca", "model": model, "method": "direct",
        "params": {"model": model, "backend": "random", "seed": 1},
        "content": {"dataset_sha256": "d", "predictions_sha256": f"p{holis}"},
        "provenance": {"git_commit": "abc", "version.mlflow": "x"},
        "scores": {"intent": {"holis": holis, "faith": None, "n": 3}},
        "stats": {"cache_hits": 0, "cache_misses": 3, "cost_usd": 0.0},
        "artifacts": [art],
    }


@pytest.fixture
def store(tmp_path):
    return f"sqlite:///{tmp_path}/mlflow.db", tmp_path / "artifacts"


@pytest.mark.slow
def test_children_under_one_parent_and_unchanged_rerun_logs_nothing(tmp_path, store):
    uri, arts = store
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
    assert child.data.metrics["intent.holis"] == 10.0 and "intent.faith" not in child.data.metrics
    assert child.data.params["git_commit"] == "abc" and child.data.params["dataset_sha256"] == "d"


@pytest.mark.slow
def test_changed_result_logs_only_that_evaluation(tmp_path, store):
    uri, arts = store
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
