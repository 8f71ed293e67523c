import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from socialbench.cli import app
from tests.conftest import make_instance

runner = CliRunner()


def media_in(folder):
    """prepare's --params allowing media in ``folder`` (media must lie in data/ or media.allowed_roots)."""
    params = folder / "media-params.yaml"
    params.write_text(f"media: {{allowed_roots: [{json.dumps(str(folder))}]}}\n")
    return ["--params", str(params)]


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_score_command_writes_metrics_per_scenario(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b", scenario="stance")])
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {
                "id": "a",
                "subject": "the speaker",
                "target": "the player",
                "mechanism": "expressive aggression",
                "label": "mock",
            },
        ],
    )
    out = tmp_path / "s.json"
    res = runner.invoke(
        app, ["score", "--benchmark", "moca", "--instances", str(inst), "--predictions", str(preds), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    scores = json.loads(out.read_text())
    assert scores["intent"]["holis"] == 100.0 and scores["stance"]["holis"] == 0.0
    assert set(scores["intent"]) == {
        "label",
        "subject",
        "target",
        "mechanism",
        "dyad",
        "faith",
        "holis",
        "c_sem_dyad",
        "invalid_rate",
        "n",
        "media_errors",
    }


def test_score_command_takes_a_taxonomy_file(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", label="taunt", mechanism="irony")])
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [{"id": "a", "subject": "the speaker", "target": "the player", "mechanism": "Irony", "label": "taunt"}],
    )
    tax = tmp_path / "t.yaml"
    tax.write_text("labels: {intent: [taunt]}\nmechanisms: {intent: [irony]}\n")
    out = tmp_path / "s.json"
    res = runner.invoke(
        app,
        [
            "score",
            "--benchmark",
            "moca",
            "--instances",
            str(inst),
            "--predictions",
            str(preds),
            "--out",
            str(out),
            "--taxonomy",
            str(tax),
        ],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["intent"]["holis"] == 100.0


def test_prepare_drops_bad_records_into_the_report(tmp_path):
    from PIL import Image

    img = tmp_path / "img.png"
    Image.new("RGB", (4, 4)).save(img)  # prepare decodes images: a real PNG
    raw = write_jsonl(
        tmp_path / "raw.jsonl",
        [
            make_instance("ok", media=[str(img)]),
            make_instance("bad", media=[str(img)], scenario="intent", label="happy"),
            make_instance("nomedia", media=[str(tmp_path / "missing.png")]),
        ],
    )
    out, report = tmp_path / "out.jsonl", tmp_path / "dropped.jsonl"
    res = runner.invoke(
        app,
        [
            "prepare",
            "--benchmark",
            "moca",
            "--raw",
            str(raw),
            "--out",
            str(out),
            "--report",
            str(report),
            *media_in(tmp_path),
        ],
    )
    assert res.exit_code == 0, res.output
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["ok"]
    dropped = {d["id"]: d for d in map(json.loads, report.read_text().splitlines())}
    assert dropped["bad"]["problems"][0]["field"] == "label"
    assert dropped["nomedia"]["problems"][0]["field"] == "media" and dropped["nomedia"]["record"]["id"] == "nomedia"


def test_invalid_params_exit_2_with_the_key_named(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text("seed: 1\nmodels: {r: {backend: random, temprature: 0}}\n")
    res = runner.invoke(app, ["check-params", "--params", str(bad)])
    assert res.exit_code != 0
    assert "temprature" in str(res.exception) or "temprature" in res.output


def test_main_turns_errors_into_exit_2_without_traceback(tmp_path, monkeypatch, capsys):
    import sys

    import pytest

    from socialbench.cli import main

    bad = tmp_path / "i.jsonl"
    bad.write_text("{oops\n")
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "socialbench",
            "score",
            "--benchmark",
            "moca",
            "--instances",
            str(bad),
            "--predictions",
            str(bad),
            "--out",
            str(tmp_path / "s.json"),
        ],
    )
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "i.jsonl, record line 1" in err and "Traceback" not in err


def test_main_names_a_path_that_cannot_be_read_or_written(tmp_path, monkeypatch, capsys):
    import sys

    import pytest

    from socialbench.cli import main

    missing = tmp_path / "nowhere" / "i.jsonl"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "socialbench",
            "score",
            "--benchmark",
            "moca",
            "--instances",
            str(missing),
            "--predictions",
            str(missing),
            "--out",
            str(tmp_path / "s.json"),
        ],
    )
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {missing}" in err and "Traceback" not in err


# ---- score / tables / track: bad input is a clear error and nothing half-written ---------------

import pytest  # noqa: E402

from socialbench.core.errors import SocialbenchError  # noqa: E402

GOOD_PRED = {"subject": "the speaker", "target": "the player", "mechanism": "expressive aggression", "label": "mock"}


def score_args(inst, preds, out):
    return ["score", "--benchmark", "moca", "--instances", str(inst), "--predictions", str(preds), "--out", str(out)]


def test_score_duplicate_prediction_id_names_file_line_and_first_copy(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b")])
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps(r) + "\n" for r in [{"id": "a", **GOOD_PRED}, {"id": "b", **GOOD_PRED}])
        + "\n"
        + json.dumps({"id": "a", **GOOD_PRED, "label": "provoke"})
        + "\n"
    )
    out = tmp_path / "s.json"
    res = runner.invoke(app, score_args(inst, preds, out))
    assert res.exit_code != 0 and not out.exists()
    assert str(res.exception) == f"{preds}, record line 4, field 'id': duplicate id 'a' (first at line 1)"


def test_score_prediction_for_no_instance_is_an_error(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a")])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", **GOOD_PRED}, {"id": "zz", **GOOD_PRED}])
    res = runner.invoke(app, score_args(inst, preds, tmp_path / "s.json"))
    assert str(res.exception) == f"{preds}, record line 2, field 'id': id 'zz' matches no instance in {inst}"


def test_score_prediction_without_id_or_with_a_list_id_is_an_error(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a")])
    for bad in ({**GOOD_PRED}, {"id": ["a"], **GOOD_PRED}):
        preds = write_jsonl(tmp_path / "p.jsonl", [bad])
        res = runner.invoke(app, score_args(inst, preds, tmp_path / "s.json"))
        assert str(res.exception).startswith(f"{preds}, record line 1, field 'id': "), res.exception


def test_score_empty_instances_file_is_an_error(tmp_path):
    inst, preds, out = tmp_path / "i.jsonl", tmp_path / "p.jsonl", tmp_path / "s.json"
    inst.write_text("")
    preds.write_text("")
    res = runner.invoke(app, score_args(inst, preds, out))
    assert isinstance(res.exception, SocialbenchError) and not out.exists()
    assert str(res.exception).startswith(f"{inst}: ") and "empty" in str(res.exception)


def test_score_warns_how_many_instances_had_no_prediction(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b"), make_instance("c")])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "b", **GOOD_PRED}])
    out = tmp_path / "s.json"
    res = runner.invoke(app, score_args(inst, preds, out))
    assert res.exit_code == 0, res.output
    assert "2 of 3 instances have no prediction" in res.stderr and "no prediction" not in res.stdout
    assert json.loads(out.read_text())["intent"]["invalid_rate"] == 66.67


def test_score_empty_predictions_file_scores_everything_incorrect_with_the_warning(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b")])
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    out = tmp_path / "s.json"
    res = runner.invoke(app, score_args(inst, preds, out))
    assert res.exit_code == 0, res.output
    assert "2 of 2 instances have no prediction" in res.stderr
    s = json.loads(out.read_text())["intent"]
    assert (s["holis"], s["label"], s["invalid_rate"]) == (0.0, 0.0, 100.0)


def test_score_without_missing_predictions_prints_no_warning(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a")])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", **GOOD_PRED}])
    res = runner.invoke(app, score_args(inst, preds, tmp_path / "s.json"))
    assert res.exit_code == 0 and res.stderr == ""


def cli_params(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(
        "seed: 1\nmodels:\n  a: {backend: random, category: baseline}\n  b: {backend: prior, category: baseline}\n"
        f"mlflow: {{tracking_uri: 'sqlite:///{tmp_path}/mlflow.db', experiment: t}}\n"
    )
    return path


def metrics(holis=10.0, n=3):
    return {
        "label": 50.0,
        "subject": 50.0,
        "target": 50.0,
        "mechanism": 50.0,
        "dyad": 25.0,
        "faith": None,
        "holis": holis,
        "c_sem_dyad": None,
        "invalid_rate": 0.0,
        "n": n,
        "media_errors": 0,
    }


def score_file(tmp_path, model, content, method="direct"):
    path = tmp_path / "scores" / model / f"{method}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def tables_args(tmp_path, *score_paths):
    return [
        "tables",
        "--benchmark",
        "moca",
        "--params",
        str(cli_params(tmp_path)),
        "--out-dir",
        str(tmp_path / "tables"),
        "--headline",
        str(tmp_path / "head.json"),
        *map(str, score_paths),
    ]


def test_tables_writes_every_scenario_from_good_score_files(tmp_path):
    a = score_file(tmp_path, "a", {"intent": metrics(), "stance": metrics()})
    b = score_file(tmp_path, "b", {"intent": metrics(20.0), "stance": metrics()})
    res = runner.invoke(app, tables_args(tmp_path, a, b))
    assert res.exit_code == 0, res.output
    from socialbench.moca.results.stability import output_files as stability_files
    from socialbench.moca.results.tables import output_files

    assert {p.name for p in (tmp_path / "tables").iterdir()} == {
        f.split("/")[0] for f in [*output_files(["intent", "stance"]), *stability_files()]
    }
    assert set(json.loads((tmp_path / "head.json").read_text())) == {"a.direct", "b.direct"}


def bad_metric_missing():
    m = metrics()
    del m["holis"]
    return {"intent": metrics(), "stance": m}


@pytest.mark.parametrize(
    "content, where",
    [
        ('{"intent": {"label": 5', "not valid JSON"),
        ({}, "no scenarios"),
        ({"intent": 5}, "record scenario 'intent': must be an object"),
        ({"intent": {**metrics(), "holis": "high"}}, "record scenario 'intent', field 'holis'"),
        (bad_metric_missing(), "record scenario 'stance', field 'holis': missing"),
    ],
    ids=["truncated", "empty-object", "scenario-is-a-number", "string-metric", "missing-metric"],
)
def test_tables_bad_score_file_is_an_error_and_writes_nothing(tmp_path, content, where):
    good = score_file(tmp_path, "a", {"intent": metrics(), "stance": metrics()})
    bad = score_file(tmp_path, "b", content)
    res = runner.invoke(app, tables_args(tmp_path, good, bad))
    assert isinstance(res.exception, SocialbenchError), res.exception
    assert str(res.exception).startswith(str(bad)) and where in str(res.exception), res.exception
    assert not (tmp_path / "tables").exists() and not (tmp_path / "head.json").exists()


def test_tables_score_file_of_a_model_not_in_params_is_an_error(tmp_path):
    ghost = score_file(tmp_path, "ghost", {"intent": metrics()})
    res = runner.invoke(app, tables_args(tmp_path, ghost))
    assert isinstance(res.exception, SocialbenchError) and "model 'ghost'" in str(res.exception)
    assert not (tmp_path / "tables").exists()


def test_tables_missing_score_file_is_an_error_and_writes_nothing(tmp_path):
    good = score_file(tmp_path, "a", {"intent": metrics()})
    res = runner.invoke(app, tables_args(tmp_path, good, tmp_path / "scores" / "b" / "direct.json"))
    assert isinstance(res.exception, SocialbenchError) and "score file not found" in str(res.exception)
    assert not (tmp_path / "tables").exists()


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


# ---- prepare and infer: bad or empty inputs are one clear error; nothing dropped is lost ------------


def _png(path):
    from PIL import Image

    Image.new("RGB", (4, 4)).save(path)
    return str(path)


def _main_error(monkeypatch, capsys, argv):
    """Run ``socialbench ARGV`` through cli.main; (exit code, stderr)."""
    import sys

    import pytest

    from socialbench.cli import main

    monkeypatch.setattr(sys, "argv", ["socialbench", *argv])
    with pytest.raises(SystemExit) as exc:
        main()
    return exc.value.code, capsys.readouterr().err


def test_prepare_on_an_empty_file_exits_2_naming_it(tmp_path, monkeypatch, capsys):
    raw = tmp_path / "raw.jsonl"
    raw.write_text("")
    code, err = _main_error(
        monkeypatch,
        capsys,
        [
            "prepare",
            "--benchmark",
            "moca",
            "--raw",
            str(raw),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--report",
            str(tmp_path / "r.jsonl"),
        ],
    )
    assert code == 2 and f"error: {raw}: no records: the file is empty" in err and "Traceback" not in err
    assert not (tmp_path / "o.jsonl").exists()


def test_prepare_that_keeps_nothing_fails_after_writing_the_drop_report(tmp_path, monkeypatch, capsys):
    (tmp_path / "zero.png").write_bytes(b"")
    raw = write_jsonl(
        tmp_path / "raw.jsonl",
        [
            make_instance("a", media=[str(tmp_path / "zero.png")]),
            make_instance("b", media=[str(tmp_path / "gone.png")]),
        ],
    )
    out, report = tmp_path / "o.jsonl", tmp_path / "r.jsonl"
    code, err = _main_error(
        monkeypatch,
        capsys,
        [
            "prepare",
            "--benchmark",
            "moca",
            "--raw",
            str(raw),
            "--out",
            str(out),
            "--report",
            str(report),
            *media_in(tmp_path),
        ],
    )
    assert code == 2 and "no record passed validation: all 2 were dropped" in err and str(report) in err
    assert not out.exists()
    dropped = [json.loads(line) for line in report.read_text().splitlines()]
    assert [(d["id"], d["problems"][0]["field"]) for d in dropped] == [("a", "media"), ("b", "media")]
    assert "zero.png: cannot decode the image (the file is empty)" in dropped[0]["problems"][0]["reason"]


def test_prepare_with_an_unknown_on_invalid_value_lists_the_allowed_values(tmp_path, monkeypatch, capsys):
    raw = write_jsonl(tmp_path / "raw.jsonl", [make_instance("a")])
    code, err = _main_error(
        monkeypatch,
        capsys,
        [
            "prepare",
            "--benchmark",
            "moca",
            "--raw",
            str(raw),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--report",
            str(tmp_path / "r.jsonl"),
            "--on-invalid",
            "maybe",
        ],
    )
    assert code == 2 and err.strip() == "error: --on-invalid 'maybe': must be one of drop, fail"


def test_prepare_drops_an_unparsable_line_and_keeps_the_rest(tmp_path):
    img = _png(tmp_path / "img.png")
    raw = tmp_path / "raw.jsonl"
    raw.write_text(
        json.dumps(make_instance("a", media=[img]))
        + "\n{not json\n"
        + json.dumps(make_instance("b", media=[img]))
        + "\n"
    )
    out, report = tmp_path / "o.jsonl", tmp_path / "r.jsonl"
    res = runner.invoke(
        app,
        [
            "prepare",
            "--benchmark",
            "moca",
            "--raw",
            str(raw),
            "--out",
            str(out),
            "--report",
            str(report),
            *media_in(tmp_path),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "kept 2, dropped 1" in res.output
    (entry,) = [json.loads(line) for line in report.read_text().splitlines()]
    assert (
        entry["line"] == 2
        and entry["raw"] == "{not json"
        and "line 2 is not valid JSON" in entry["problems"][0]["reason"]
    )


def test_prepare_on_a_non_utf8_file_exits_2_naming_the_byte(tmp_path, monkeypatch, capsys):
    raw = tmp_path / "raw.jsonl"
    raw.write_bytes(b"\xff\xfe{}\n")
    code, err = _main_error(
        monkeypatch,
        capsys,
        [
            "prepare",
            "--benchmark",
            "moca",
            "--raw",
            str(raw),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--report",
            str(tmp_path / "r.jsonl"),
        ],
    )
    assert code == 2 and err.strip() == f"error: {raw}: not UTF-8 text (byte 0xff at offset 0)"


def _infer_args(tmp_path, instances, *extra):
    return [
        "infer",
        "--benchmark",
        "moca",
        "--instances",
        str(instances),
        "--model",
        "random",
        "--out",
        str(tmp_path / "p.jsonl"),
        "--stats",
        str(tmp_path / "s.json"),
        "--cache",
        str(tmp_path / "c.sqlite"),
        *extra,
    ]


def test_infer_with_an_unknown_method_lists_the_known_methods(tmp_path, monkeypatch, capsys, repo_root):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[_png(tmp_path / "img.png")])])
    code, err = _main_error(
        monkeypatch, capsys, _infer_args(tmp_path, inst, "--method", "cot", "--params", str(repo_root / "params.yaml"))
    )
    from socialbench.core.benchmarks import get_benchmark

    known = ", ".join(get_benchmark("moca").method_names())
    assert code == 2 and err.strip() == f"error: benchmark moca: unknown method 'cot'; known methods: {known}"


def test_infer_on_an_empty_instances_file_exits_2(tmp_path, monkeypatch, capsys, repo_root):
    inst = tmp_path / "i.jsonl"
    inst.write_text("")
    code, err = _main_error(
        monkeypatch, capsys, _infer_args(tmp_path, inst, "--params", str(repo_root / "params.yaml"))
    )
    assert code == 2 and f"error: {inst}: no records" in err and not (tmp_path / "p.jsonl").exists()


def test_infer_with_an_empty_dev_file_says_the_dev_file_has_no_records(tmp_path, monkeypatch, capsys, repo_root):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[_png(tmp_path / "img.png")])])
    dev = tmp_path / "dev.jsonl"
    dev.write_text("")
    args = _infer_args(tmp_path, inst, "--dev", str(dev), "--params", str(repo_root / "params.yaml"))
    args[args.index("random")] = "prior"
    code, err = _main_error(monkeypatch, capsys, args)
    assert code == 2 and f"error: {dev}: the dev file has no records" in err and "(--dev)" not in err


def test_infer_on_a_video_instance_without_frames_names_file_record_and_field(tmp_path, monkeypatch, capsys, repo_root):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("v", modality="video_text", transcript="A: hi")])
    code, err = _main_error(
        monkeypatch, capsys, _infer_args(tmp_path, inst, "--params", str(repo_root / "params.yaml"))
    )
    assert code == 2 and f"error: {inst}, record v, field 'frames': a video_text instance needs sampled frames" in err


def test_track_records_what_the_predictions_were_made_with_not_the_current_code(tmp_path, monkeypatch):
    args, paths = track_setup(tmp_path, monkeypatch)
    res = runner.invoke(app, [*args, *map(str, paths)])
    assert res.exit_code == 0, res.output
    params = mlflow_runs(tmp_path)[0].data.params
    assert params["prompt_template_sha256"] == "p" * 64 and params["taxonomy_sha256"] == "t" * 64
    assert params["infer_git_commit"] == "c0ffee" and params["version.torch"] == "2.13.0"


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


def test_infer_stats_record_what_the_run_was_made_with(tmp_path):
    from socialbench.core.benchmarks import get_benchmark
    from socialbench.core.hashing import sha256_file
    from tests.helpers.moca_requests import write_png

    write_png(tmp_path / "img.png")
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[str(tmp_path / "img.png")])])
    params = tmp_path / "params.yaml"
    params.write_text(
        "seed: 0\nmodels:\n  r: {backend: random}\ncache: {path: " + str(tmp_path / "c.sqlite") + "}\n"
        "media: {allowed_roots: [" + str(tmp_path) + "]}\n"
    )
    res = runner.invoke(
        app,
        [
            "infer",
            "--benchmark",
            "moca",
            "--instances",
            str(inst),
            "--model",
            "r",
            "--params",
            str(params),
            "--out",
            str(tmp_path / "p.jsonl"),
            "--stats",
            str(tmp_path / "s.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    stats = json.loads((tmp_path / "s.json").read_text())
    made = stats["provenance"]
    assert made["instances_sha256"] == sha256_file(inst) and made["prompt_template_sha256"] == get_benchmark(
        "moca"
    ).prompt_hash("direct", {"answer": {"code_fence": "strict"}})
    assert made["versions"]["python"] and made["git_commit"] and stats["backend_identity"]["backend"] == "random"


def test_infer_stops_when_every_call_failed_and_writes_nothing(tmp_path):
    # A server that is down is no result: a row of zeros in the tables would look like one.
    import socket

    from tests.helpers.moca_requests import write_png

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write_png(tmp_path / "img.png")
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[str(tmp_path / "img.png")])])
    params = tmp_path / "params.yaml"
    params.write_text(
        "seed: 0\ncache: {path: " + str(tmp_path / "c.sqlite") + "}\nmedia: {allowed_roots: [" + str(tmp_path) + "]}\n"
        "models:\n  down:\n    backend: openai_compat\n"
        f"    model_id: m\n    options: {{base_url: 'http://127.0.0.1:{port}/v1', max_retries: 0, timeout: 2}}\n"
    )
    res = runner.invoke(
        app,
        [
            "infer",
            "--benchmark",
            "moca",
            "--instances",
            str(inst),
            "--model",
            "down",
            "--params",
            str(params),
            "--out",
            str(tmp_path / "p.jsonl"),
            "--stats",
            str(tmp_path / "s.json"),
        ],
    )
    assert isinstance(res.exception, SocialbenchError), res.output
    assert "models.down: all 1 calls failed" in str(res.exception)
    assert not (tmp_path / "p.jsonl").exists() and not (tmp_path / "s.json").exists()


def test_infer_of_a_method_excluded_in_params_is_refused_naming_the_model_and_reason(tmp_path):
    from tests.helpers.moca_requests import write_png

    write_png(tmp_path / "img.png")
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[str(tmp_path / "img.png")])])
    params = tmp_path / "params.yaml"
    params.write_text(
        "seed: 0\nmodels:\n  r: {backend: random, exclude_methods: {direct: answers by chance only}}\n"
        "cache: {path: " + str(tmp_path / "c.sqlite") + "}\n"
    )
    res = runner.invoke(
        app,
        [
            "infer",
            "--benchmark",
            "moca",
            "--instances",
            str(inst),
            "--model",
            "r",
            "--params",
            str(params),
            "--results-dir",
            str(tmp_path / "results"),
        ],
    )
    assert isinstance(res.exception, SocialbenchError), res.output
    message = str(res.exception)
    assert "models.r" in message and "answers by chance only" in message and "\n" not in message
    assert not (tmp_path / "results").exists() and not (tmp_path / "c.sqlite").exists()  # nothing run or written


def test_benchmarks_lists_each_registered_benchmark_with_its_methods():
    res = runner.invoke(app, ["benchmarks"])
    lines = dict(line.split(": methods ", 1) for line in res.output.splitlines())
    assert res.exit_code == 0 and "direct" in lines["moca"].split(", ") and "codar" in lines["moca"].split(", ")


def test_infer_gives_the_methods_the_answer_options_of_params(tmp_path):
    from tests.helpers.moca_requests import write_png

    write_png(tmp_path / "img.png")
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[str(tmp_path / "img.png")])])
    answer = json.dumps(
        {"mechanism": "expressive aggression", "label": "mock", "subject": "subject0", "target": "target0"}
    )
    params = tmp_path / "params.yaml"
    params.write_text(
        "seed: 0\nmoca: {answer: {code_fence: tolerate}}\ncache: {path: " + str(tmp_path / "c.sqlite") + "}\n"
        "media: {allowed_roots: [" + str(tmp_path) + "]}\n"
        "models:\n  s: {backend: scripted, options: {default: " + json.dumps("```json\n" + answer + "\n```") + "}}\n"
    )
    res = runner.invoke(
        app,
        [
            "infer",
            "--benchmark",
            "moca",
            "--instances",
            str(inst),
            "--model",
            "s",
            "--params",
            str(params),
            "--out",
            str(tmp_path / "p.jsonl"),
            "--stats",
            str(tmp_path / "s.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    (rec,) = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert rec["label"] == "mock" and rec["error"] is None  # the fence was tolerated, as params say


# ---- results at a glance: gold and request in predictions, the overall score, option help -----------


def test_infer_records_carry_the_gold_answer_and_a_pointer_to_the_request(tmp_path, repo_root):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[_png(tmp_path / "img.png")])])
    import yaml

    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["media"] = {**(params.get("media") or {}), "allowed_roots": [str(tmp_path)]}  # the image is not under data/
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    res = runner.invoke(app, _infer_args(tmp_path, inst, "--params", str(tmp_path / "params.yaml")))
    assert res.exit_code == 0, res.output
    record = json.loads((tmp_path / "p.jsonl").read_text().splitlines()[0])
    gold = json.loads(inst.read_text())
    assert record["gold"] == {k: gold[k] for k in ("subject", "target", "mechanism", "label")}
    assert record["request"] == {
        "trace": "results/traces/moca/random/direct.jsonl",
        "id": "a",
        "key": record["request_key"],
    }


def test_tables_put_the_macro_over_scenarios_beside_the_per_scenario_scores(tmp_path):
    a = score_file(tmp_path, "a", {"intent": metrics(10.0), "stance": metrics(20.0)})
    res = runner.invoke(app, tables_args(tmp_path, a))
    assert res.exit_code == 0, res.output
    head = json.loads((tmp_path / "head.json").read_text())["a.direct"]
    assert head["overall"] == {"dyad": 25.0, "faith": None, "holis": 15.0}
    all_md = (tmp_path / "tables" / "all.md").read_text()
    assert "### Overall: macro over scenarios (intent, stance; N = 3 each)" in all_md
    assert "| baseline | a | 50.00 | 50.00 | 50.00 | 50.00 | 25.00 | – | 15.00 |" in all_md


def cli_options():
    """(command path, option) of every option of every `socialbench` command, sub-apps included."""
    import typer

    def walk(cmd, path, ctx):
        if hasattr(cmd, "list_commands"):  # a group: the root loads each command's module when asked for it
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                yield from walk(sub, [*path, name], sub.context_class(sub, parent=ctx, info_name=name))
        else:
            yield from ((" ".join(path), p) for p in cmd.params if getattr(p, "param_type_name", "") == "option")

    root = typer.main.get_command(app)
    return list(walk(root, [], root.context_class(root)))


def test_every_cli_option_has_help_text():
    options = cli_options()
    assert len(options) > 50  # the walk reached the sub-apps
    assert [f"{c} {p.opts[0]}" for c, p in options if not (p.help or "").strip()] == []


def test_benchmark_and_method_options_list_their_choices():
    from socialbench.core.benchmarks import get_benchmark

    # The packages the help was built from (tests may register the test-only toybench later).
    src = Path(__file__).resolve().parents[1] / "src" / "socialbench"
    names = sorted(p.name for p in src.iterdir() if (p / "benchmark.py").is_file())
    methods = [m for n in names for m in get_benchmark(n).method_names()]
    for cmd, opt in cli_options():
        if opt.name == "benchmark":
            assert all(n in opt.help for n in names), f"{cmd} --benchmark: {opt.help}"
        if opt.name == "method" and cmd != "score":  # score's --method is a check on the records, any name
            assert all(m in opt.help for m in methods), f"{cmd} --method: {opt.help}"


def test_moca_source_options_list_every_source():
    from socialbench.moca.cli import SOURCES_HELP
    from socialbench.moca.dataset.sources import SOURCE_NAMES

    assert SOURCES_HELP == ", ".join(SOURCE_NAMES)
    found = [p for c, p in cli_options() if c.startswith("moca ") and p.name == "source"]
    assert found and all(SOURCES_HELP in p.help for p in found)


@pytest.mark.parametrize(
    "option, choices",
    [
        ("source", ["demo", "ami"]),
        ("on_invalid", ["drop", "fail"]),
        ("on_error", ["skip", "fail"]),
        ("task", ["state", "you", "consensus"]),
    ],
)
def test_options_with_fixed_values_list_them(option, choices):
    found = [
        (c, p) for c, p in cli_options() if p.name == option and not (option == "source" and c.startswith("moca "))
    ]
    assert found and all(all(ch in p.help for ch in choices) for _, p in found), [(c, p.help) for c, p in found]


def test_score_help_describes_its_paths_and_lists_the_benchmarks():
    out = runner.invoke(app, ["score", "--help"], env={"COLUMNS": "200"}).output
    assert "prediction records written by infer" in out and "one of: " in out
