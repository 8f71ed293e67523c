import json

from typer.testing import CliRunner

from socialbench.cli import app

from tests.conftest import make_instance

runner = CliRunner()


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_score_command_writes_metrics_per_scenario(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b", scenario="stance")])
    preds = write_jsonl(tmp_path / "p.jsonl", [
        {"id": "a", "subject": "the speaker", "target": "the player", "mechanism": "expressive aggression", "label": "mock"},
    ])
    out = tmp_path / "s.json"
    res = runner.invoke(app, ["score", "--benchmark", "moca", "--instances", str(inst), "--predictions", str(preds), "--out", str(out)])
    assert res.exit_code == 0, res.output
    scores = json.loads(out.read_text())
    assert scores["intent"]["holis"] == 100.0 and scores["stance"]["holis"] == 0.0
    assert set(scores["intent"]) == {"label", "subject", "target", "mechanism", "dyad", "faith", "holis", "c_sem_dyad", "invalid_rate", "n"}


def test_score_command_takes_a_taxonomy_file(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", label="taunt", mechanism="irony")])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", "subject": "the speaker", "target": "the player", "mechanism": "Irony", "label": "taunt"}])
    tax = tmp_path / "t.yaml"
    tax.write_text("labels: {intent: [taunt]}\nmechanisms: {intent: [irony]}\n")
    out = tmp_path / "s.json"
    res = runner.invoke(app, ["score", "--instances", str(inst), "--predictions", str(preds), "--out", str(out), "--taxonomy", str(tax)])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["intent"]["holis"] == 100.0


def test_prepare_drops_bad_records_into_the_report(tmp_path):
    img = tmp_path / "img.png"
    img.write_bytes(b"png")
    raw = write_jsonl(tmp_path / "raw.jsonl", [make_instance("ok", media=[str(img)]), make_instance("bad", media=[str(img)], scenario="intent", label="happy"),
                                              make_instance("nomedia", media=[str(tmp_path / "missing.png")])])
    out, report = tmp_path / "out.jsonl", tmp_path / "dropped.jsonl"
    res = runner.invoke(app, ["prepare", "--raw", str(raw), "--out", str(out), "--report", str(report)])
    assert res.exit_code == 0, res.output
    assert [json.loads(l)["id"] for l in out.read_text().splitlines()] == ["ok"]
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
    monkeypatch.setattr(sys, "argv", ["socialbench", "score", "--instances", str(bad), "--predictions", str(bad), "--out", str(tmp_path / "s.json")])
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
    monkeypatch.setattr(sys, "argv", ["socialbench", "score", "--instances", str(missing), "--predictions", str(missing),
                                      "--out", str(tmp_path / "s.json")])  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {missing}" in err and "Traceback" not in err
