"""``socialbench prepare`` (src/socialbench/stages/prepare.py): good records kept, bad ones dropped into
the report with their reasons; an input that keeps nothing is one clear error."""

import json

from socialbench.cli import app
from socialbench.core.benchmarks import BENCHMARKS
from tests.conftest import make_instance
from tests.helpers.toybench.benchmark import ToyBenchmark
from tests.stages.conftest import main_error, media_in, png, runner, write_jsonl


def test_prepare_drops_bad_records_into_the_report(tmp_path):
    img = png(tmp_path / "img.png")  # prepare decodes images: a real PNG
    raw = write_jsonl(
        tmp_path / "raw.jsonl",
        [
            make_instance("ok", media=[img]),
            make_instance("bad", media=[img], scenario="intent", label="happy"),
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


def test_prepare_on_an_empty_file_exits_2_naming_it(tmp_path, monkeypatch, capsys):
    raw = tmp_path / "raw.jsonl"
    raw.write_text("")
    code, err = main_error(
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
    code, err = main_error(
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
    code, err = main_error(
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
    img = png(tmp_path / "img.png")
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
    code, err = main_error(
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


def test_a_benchmark_without_a_prepare_stage_is_refused_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(BENCHMARKS.classes, "toybench", ToyBenchmark)
    raw = write_jsonl(tmp_path / "raw.jsonl", [make_instance("ok")])
    out, report = tmp_path / "out.jsonl", tmp_path / "dropped.jsonl"
    args = ["prepare", "--benchmark", "toybench", "--raw", str(raw), "--out", str(out), "--report", str(report)]
    code, err = main_error(monkeypatch, capsys, args)
    assert code != 0 and "benchmark 'toybench' has no prepare stage" in err
    assert not out.exists()
