"""The trace viewer's core (socialbench.results.viewer): reading and cross-checking a run, the default rows,
the page and its shards (rows, marks, filters, escaping, links, determinism, the index), the method's
trace section, the command, and the folder at demo size (sizes, media stored once). Pages are read by
parsing them (tests/helpers/html_tree.py) with every shard's rows drawn in; the script's behaviour in a
browser is checked by scripts/check_viewer.sh (Chromium), run by the slow test at the end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from socialbench.core.benchmarks import register
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.traces import staged_section
from socialbench.results.viewer import View, build_view, check_rows, default_rows, write_view
from socialbench.results.viewer_media import MediaStore
from socialbench.results.viewer_page import read_shard_js
from tests.helpers.html_tree import parse, rows_of
from tests.helpers.toybench.benchmark import ToyBenchmark, make_instances
from tests.helpers.toybench.methods.chain import Chain
from tests.helpers.toybench.results.hooks import ToyResults

REPO = Path(__file__).resolve().parents[2]


def drawn(view: View) -> str:
    """The page as a browser shows it once every row is drawn: the shards' rows in the rows' list."""
    rows = "".join(h for _, text in view.shards for h in read_shard_js(text)[1])
    return view.page.replace('<div id="rows"></div>', f'<div id="rows">{rows}</div>')


def drawn_file(page: Path) -> str:
    """A written page as a browser shows it once every row is drawn (its shards read from beside it)."""
    shards = sorted((page.parent / f"{page.stem}.shards").glob("*.js"))
    rows = "".join(h for f in shards for h in read_shard_js(f.read_text("utf-8"))[1])
    return page.read_text("utf-8").replace('<div id="rows"></div>', f'<div id="rows">{rows}</div>')


def index_of(html: str) -> dict:
    return json.loads(html.split('id="sb-index">')[1].split("</script>")[0])


# ---- a toybench run (a benchmark without its own rows: the default rows) ------------------------
def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def toy_run(tmp_path, answers=("red", "blue", "blue"), errors=(None, None, "unparsable"), traces=True, **trace_over):
    insts = make_instances(3)  # answers: red, green, blue
    inst = write_jsonl(tmp_path / "test.jsonl", insts)
    preds = [
        {"id": i["id"], "model": "m", "method": "chain", "answer": a, "raw": json.dumps({"answer": a}), "error": e}
        for i, a, e in zip(insts, answers, errors)
    ]
    pred = write_jsonl(tmp_path / "pred.jsonl", preds)
    trace = None
    if traces:
        recs = [
            {
                "id": i["id"],
                "model": "m",
                "method": "chain",
                "final": {},
                **trace_over,
                "calls": [
                    {
                        "round": 0,
                        "stage": "answer",
                        "request_id": f"{i['id']}/chain/answer",
                        "text": p["raw"],
                        "finish_reason": "stop",
                        "input_tokens": 3,
                        "output_tokens": 2,
                        "cached": False,
                        "error": None,
                    }
                ],
            }
            for i, p in zip(insts, preds)
        ]
        trace = write_jsonl(tmp_path / "trace.jsonl", recs)
    return inst, pred, trace


def toy_view(tmp_path, inst, pred, trace, run="m/chain", **kw) -> View:
    out = tmp_path / "viewer" / f"{run}.html"
    return build_view(ToyBenchmark(), inst, pred, trace, out, MediaStore(tmp_path / "viewer" / "media", tmp_path), **kw)


def toy_page(tmp_path, **kw) -> str:
    inst, pred, trace = toy_run(tmp_path, **kw)
    return drawn(toy_view(tmp_path, inst, pred, trace))


def test_the_page_has_one_row_per_instance_in_instance_order(tmp_path):
    rows = rows_of(parse(toy_page(tmp_path)))
    assert [r.attrs["data-id"] for r in rows] == ["toy-test-000", "toy-test-001", "toy-test-002"]


def test_a_wrong_field_is_marked_in_its_cell_and_its_row(tmp_path):
    rows = rows_of(parse(toy_page(tmp_path)))
    assert [r.attrs["data-correct"] for r in rows] == ["correct", "wrong", "correct"]
    wrong_cells = rows[1].find_all("td", "wrong")
    assert len(wrong_cells) == 1 and "✗" in wrong_cells[0].text and "blue" in wrong_cells[0].text
    assert rows[1].attrs["data-wrong"] == "answer" and rows[0].find_all("td", "wrong") == []


def test_a_record_error_is_shown_and_sets_the_rows_error_flag(tmp_path):
    rows = rows_of(parse(toy_page(tmp_path)))
    assert [r.attrs["data-error"] for r in rows] == ["no", "no", "yes"]
    assert "error: unparsable" in rows[2].find_all("p", "err")[0].text


def test_the_page_offers_filters_by_group_correctness_error_and_wrong_field(tmp_path):
    root = parse(toy_page(tmp_path))
    selects = {s.attrs["id"]: [o.attrs["value"] for o in s.find_all("option")] for s in root.find_all("select")}
    assert selects["f-correct"] == ["", "correct", "wrong"]
    assert selects["f-error"] == ["", "yes", "no"]
    assert selects["f-field"] == ["", "answer"]
    assert "f-group" not in selects  # toybench rows have no group: no empty filter
    assert root.find_all("input")[0].attrs["id"] == "f-q"
    index, script = root.find_all("script")
    assert index.attrs["type"] == "application/json" and "location.hash" in script.text and "f-" in script.text


def test_markup_in_instance_text_and_model_output_stays_text(tmp_path):
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    inst, pred, trace = toy_run(tmp_path, answers=(evil, "green", "blue"))
    html = drawn(toy_view(tmp_path, inst, pred, trace))
    root = parse(html)
    assert len(root.find_all("script")) == 2 and root.find_all("img") == []
    assert evil in rows_of(root)[0].text  # shown as it is, as text
    assert "&lt;script&gt;alert(1)" in html


def test_the_same_inputs_give_the_same_bytes(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    assert toy_view(tmp_path, inst, pred, trace) == toy_view(tmp_path, inst, pred, trace)


def test_the_page_loads_nothing_from_outside_its_viewer_folder(tmp_path):
    root = parse(toy_page(tmp_path))
    links = [v for n in root.iter() for k, v in n.attrs.items() if k in ("src", "href", "action")]
    assert all(v.startswith(("../media/", "#")) for v in links)
    csp = [n.attrs["content"] for n in root.find_all("meta") if n.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0] and "img-src 'self' data:" in csp[0]
    assert root.find_all("link") == [] and all("src" not in s.attrs for s in root.find_all("script"))
    assert index_of(str(toy_page(tmp_path)))["base"] == "chain.shards/"


def test_the_title_names_the_benchmark_model_and_method_of_the_records(tmp_path):
    root = parse(toy_page(tmp_path))
    assert root.find_all("title")[0].text == "toybench · m · chain"


def test_an_instance_without_a_prediction_is_a_wrong_row_with_an_error():
    rows = default_rows(make_instances(2), {}, {})
    assert [(r["correct"], r["error"]) for r in rows] == [(False, "no prediction for this instance")] * 2


def test_a_duplicate_prediction_is_an_error_naming_file_line_and_field(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    pred.write_text(pred.read_text() + pred.read_text().splitlines()[0] + "\n")
    with pytest.raises(
        DataError, match=r"pred.jsonl, record line 4, field 'id': duplicate id 'toy-test-000' \(first at line 1\)"
    ):
        toy_view(tmp_path, inst, pred, trace)


def test_a_prediction_for_no_instance_is_an_error(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    pred.write_text(pred.read_text() + json.dumps({"id": "other-1", "model": "m", "method": "chain"}) + "\n")
    with pytest.raises(DataError, match=r"record line 4, field 'id': id 'other-1' matches no instance"):
        toy_view(tmp_path, inst, pred, trace)


def test_traces_of_another_run_are_an_error_naming_the_record(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    recs = [json.loads(x) for x in trace.read_text().splitlines()]
    recs[1]["method"] = "direct"
    write_jsonl(trace, recs)
    with pytest.raises(DataError, match=r"trace.jsonl, record line 2, field 'method': 'direct' differs from 'chain'"):
        toy_view(tmp_path, inst, pred, trace)


def test_trace_calls_that_are_not_a_list_are_an_error(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    recs = [json.loads(x) for x in trace.read_text().splitlines()]
    recs[2]["calls"] = {"round": 0}
    write_jsonl(trace, recs)
    with pytest.raises(DataError, match=r"record line 3, field 'calls': must be a list of call objects"):
        toy_view(tmp_path, inst, pred, trace)


def test_without_traces_the_rows_say_they_have_no_trace_record(tmp_path):
    root = parse(toy_page(tmp_path, traces=False))
    assert all("no trace record" in r.text for r in rows_of(root)) and root.find_all("details", "calls") == []


def test_rows_that_leave_out_an_instance_are_refused_naming_the_benchmark():
    insts = make_instances(2)
    with pytest.raises(SocialbenchError, match=r"benchmark toy: viewer_rows: .*no row for 'toy-test-001'"):
        check_rows([{"id": "toy-test-000"}], insts, "toy")


def test_rows_with_an_unknown_key_are_refused():
    with pytest.raises(SocialbenchError, match=r"unknown key 'colour'"):
        check_rows([{"id": "toy-test-000", "colour": "red"}], make_instances(1), "toy")


def test_the_viewer_command_writes_the_page(tmp_path):
    from socialbench.cli import app
    from socialbench.core.benchmarks import register

    register(ToyBenchmark)
    inst, pred, trace = toy_run(tmp_path)
    out = tmp_path / "viewer" / "m" / "chain.html"
    res = CliRunner().invoke(
        app,
        [
            "viewer",
            "--benchmark",
            "toybench",
            "--instances",
            str(inst),
            "--predictions",
            str(pred),
            "--traces",
            str(trace),
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    (shard,) = sorted((out.parent / "chain.shards").iterdir())
    assert (
        "viewer: 3 instances" in res.output and shard.name == "000.js" and len(read_shard_js(shard.read_text())[1]) == 3
    )
    assert rows_of(parse(out.read_text("utf-8"))) == [] and len(index_of(out.read_text("utf-8"))["rows"]) == 3


def test_the_viewer_command_refuses_an_out_that_is_one_of_its_inputs(tmp_path):
    from socialbench.cli import app
    from socialbench.core.benchmarks import register

    register(ToyBenchmark)
    inst, pred, trace = toy_run(tmp_path)
    before = pred.read_bytes()
    res = CliRunner().invoke(
        app,
        [
            "viewer",
            "--benchmark",
            "toybench",
            "--instances",
            str(inst),
            "--predictions",
            str(pred),
            "--traces",
            str(trace),
            "--out",
            str(pred),
        ],
    )
    assert res.exit_code != 0 and "same file as --predictions" in str(res.exception) and pred.read_bytes() == before


def test_predictions_that_name_no_run_are_titled_by_the_results_layout(tmp_path):
    inst, _, _ = toy_run(tmp_path, traces=False)
    pred = tmp_path / "predictions" / "toybench" / "mymodel" / "direct.jsonl"
    pred.parent.mkdir(parents=True)
    pred.write_text("")
    root = parse(drawn(toy_view(tmp_path, inst, pred, None)))
    assert root.find_all("title")[0].text == "toybench · mymodel · direct"
    assert all(r.attrs["data-correct"] == "wrong" and r.attrs["data-error"] == "yes" for r in rows_of(root))


# ---- the index and the shards -----------------------------------------------------------------
def test_the_index_names_every_instance_with_what_the_filters_read_and_its_shard(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    view = toy_view(tmp_path, inst, pred, trace, shard_rows=2)
    index = index_of(view.page)
    assert index["rows"] == [
        ["toy-test-000", "", "correct", "no", "", "", 0],
        ["toy-test-001", "", "wrong", "no", "answer", "", 0],
        ["toy-test-002", "", "correct", "yes", "", "", 1],
    ]
    assert index["starts"] == [0, 2] and [n for n, _ in view.shards] == ["000.js", "001.js"]


def test_the_shards_hold_the_rows_in_instance_order(tmp_path):
    insts = make_instances(7)
    inst = write_jsonl(tmp_path / "test.jsonl", insts)
    pred = write_jsonl(tmp_path / "pred.jsonl", [{"id": i["id"], "answer": "red"} for i in insts])
    view = toy_view(tmp_path, inst, pred, None, shard_rows=3)
    got = [
        (k, [parse(h).find_all("article")[0].attrs["data-id"] for h in rows])
        for k, rows in (read_shard_js(t) for _, t in view.shards)
    ]
    assert got == [(0, [i["id"] for i in insts[:3]]), (1, [i["id"] for i in insts[3:6]]), (2, [insts[6]["id"]])]


def test_writing_a_view_again_with_fewer_shards_removes_the_old_ones(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    out = tmp_path / "viewer" / "m" / "chain.html"
    write_view(toy_view(tmp_path, inst, pred, trace, shard_rows=1), out)
    write_view(toy_view(tmp_path, inst, pred, trace), out)
    assert sorted(p.name for p in (out.parent / "chain.shards").iterdir()) == ["000.js"]


def test_a_shard_row_count_below_one_is_refused(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    with pytest.raises(SocialbenchError, match="--shard-rows must be at least 1"):
        toy_view(tmp_path, inst, pred, trace, shard_rows=0)


# ---- the method's trace section --------------------------------------------------------------
STAGED = {
    "stages": [
        {"stage": "notes", "pass": 1, "output": "n <em>1</em>"},
        {"stage": "check", "pass": 1, "output": {"status": "REJECTED", "breakpoint": 1}},
        {"stage": "check", "pass": 2, "output": {"status": "ACCEPTED"}},
    ],
    "verdicts": [{"status": "REJECTED", "breakpoint": 1}, {"status": "ACCEPTED"}],
}


def test_a_method_without_a_trace_section_has_its_trace_drawn_as_a_tree_and_no_trace_filter(tmp_path):
    root = parse(toy_page(tmp_path, trace=STAGED))
    (art, *_) = rows_of(root)
    assert art.find_all("details", "stage") == [] and "n <em>1</em>" in art.find_all("details", "trace")[0].text
    assert not [s for s in root.find_all("select") if s.attrs["id"] == "f-verdict"] and art.attrs["data-verdict"] == ""


def test_a_methods_trace_section_draws_its_blocks_marks_and_filter(tmp_path, monkeypatch):
    register(ToyBenchmark)  # found by name, as the viewer stage finds it
    monkeypatch.setattr(Chain, "trace_filter", "check", raising=False)
    monkeypatch.setattr(
        Chain, "trace_section", classmethod(lambda cls, t: staged_section(t, t["verdicts"], None)), raising=False
    )
    root = parse(toy_page(tmp_path, trace=STAGED))
    (sel,) = [s for s in root.find_all("select") if s.attrs["id"] == "f-verdict"]
    assert any(lab.text.startswith("check") for lab in root.find_all("label"))
    assert [o.attrs["value"] for o in sel.find_all("option")] == ["", "accepted", "revised"]
    (art, *_) = rows_of(root)
    titles = [d.find_all("summary")[0].text for d in art.find_all("details", "stage")]
    assert titles == ["notes · pass 1", "check · pass 1 REJECTED → stage 1", "check · pass 2 ACCEPTED"]
    assert art.attrs["data-verdict"] == "revised accepted" and "ACCEPTED" in art.find_all("header")[0].text
    assert index_of(str(toy_page(tmp_path, trace=STAGED)))["rows"][0][5] == "revised accepted"


def test_a_trace_the_methods_section_cannot_read_is_an_error_naming_the_record(tmp_path, monkeypatch):
    register(ToyBenchmark)  # found by name, as the viewer stage finds it
    monkeypatch.setattr(Chain, "trace_section", classmethod(lambda cls, t: t["absent"]), raising=False)
    inst, pred, trace = toy_run(tmp_path, trace={"x": 1})
    with pytest.raises(DataError, match=r"trace.jsonl.*id toy-test-000.*'trace'.*method chain cannot show"):
        toy_view(tmp_path, inst, pred, trace)


# ---- the benchmark's folder at demo size -------------------------------------------------------
def media_rows(self, instances, predictions, traces):
    """toybench's rows with each instance's ``media``: the first an image, the rest its frames."""
    rows = default_rows(instances, predictions, traces)
    for r, i in zip(rows, instances):
        r["media"] = [{"kind": "frame" if j else "image", "path": p} for j, p in enumerate(i.get("media") or [])]
    return rows


def demo_folder(tmp_path, monkeypatch, n=72, runs=("direct", "chain")):
    """A toybench benchmark of ``n`` instances, each with a 640x480 image (a third of them with eight
    frames), and ``runs`` of it with traces like a chain's (stage passes with outputs), written by the
    viewer command into results/viewer/toybench/."""
    from PIL import Image

    from socialbench.core.benchmarks import register

    register(ToyBenchmark)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ToyResults, "viewer_rows", media_rows)
    (tmp_path / "data").mkdir()
    insts = make_instances(n)
    for k, i in enumerate(insts):
        Image.new("RGB", (640, 480), (k * 3 % 256, 90, 160)).save(tmp_path / "data" / f"{k}.png")
        i["media"] = [f"data/{k}.png"] + ([f"data/{(k + j) % n}.png" for j in range(1, 9)] if k % 3 == 0 else [])
    write_jsonl(tmp_path / "test.jsonl", insts)
    for run in runs:
        preds = [
            {"id": i["id"], "model": "m", "method": run, "answer": "red", "raw": '{"answer": "red"}'} for i in insts
        ]
        for kind in ("predictions", "traces"):
            (tmp_path / f"results/{kind}/toybench/m").mkdir(parents=True, exist_ok=True)
        write_jsonl(tmp_path / f"results/predictions/toybench/m/{run}.jsonl", preds)
        stages = [
            {"stage": s, "pass": p, "output": {"note": f"{s} of {{id}} in pass {p}: " + "words " * 40}}
            for p in (1, 2)
            for s in ("notes", "check")
        ]
        write_jsonl(
            tmp_path / f"results/traces/toybench/m/{run}.jsonl",
            [
                {
                    "id": i["id"],
                    "model": "m",
                    "method": run,
                    "calls": [
                        {"round": r, "stage": s["stage"], "text": json.dumps(s["output"]).replace("{id}", i["id"])}
                        for r, s in enumerate(stages)
                    ],
                    "trace": {"stages": stages},
                }
                for i in insts
            ],
        )
    viewer_command(runs)
    return insts, tmp_path / "results" / "viewer" / "toybench"


def viewer_command(runs):
    from socialbench.cli import app

    res = CliRunner().invoke(
        app,
        [
            "viewer",
            "--benchmark",
            "toybench",
            "--instances",
            "test.jsonl",
            "--results-dir",
            "results",
            "--shard-rows",
            "16",
            *[a for r in runs for a in ("--run", f"m/{r}")],
        ],
    )
    assert res.exit_code == 0, res.output


def test_each_thumbnail_is_stored_once_for_every_run_and_named_by_its_sha256(tmp_path, monkeypatch):
    import hashlib
    import re

    insts, folder = demo_folder(tmp_path, monkeypatch)
    stored = sorted((folder / "media").iterdir())
    refs = [
        m
        for run in ("direct", "chain")
        for f in sorted((folder / "m" / f"{run}.shards").glob("*.js"))
        for h in read_shard_js(f.read_text())[1]
        for m in re.findall(r'src="\.\./media/([0-9a-f]{64}\.jpg)"', h)
    ]
    assert set(refs) == {p.name for p in stored} and len(refs) > 2 * len(stored)
    assert all(p.name == hashlib.sha256(p.read_bytes()).hexdigest() + ".jpg" for p in stored)


def test_the_viewer_folder_at_demo_size_is_smaller_than_its_traces_and_no_file_exceeds_25_mb(tmp_path, monkeypatch):
    insts, folder = demo_folder(tmp_path, monkeypatch)
    files = [p for p in folder.rglob("*") if p.is_file()]
    traces = sum(p.stat().st_size for p in (tmp_path / "results/traces/toybench").rglob("*.jsonl"))
    assert sum(p.stat().st_size for p in files) <= traces and max(p.stat().st_size for p in files) <= 25 * 1024 * 1024
    assert len(index_of((folder / "m" / "chain.html").read_text())["rows"]) == len(insts) == 72


def test_the_viewer_folder_has_the_same_bytes_when_built_again(tmp_path, monkeypatch):
    _, folder = demo_folder(tmp_path, monkeypatch)
    first = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    shutil.rmtree(folder)
    viewer_command(("direct", "chain"))
    assert {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == first


def test_a_pages_media_for_mlflow_are_each_medium_its_rows_show_once_with_the_link_they_use(tmp_path, monkeypatch):
    from socialbench.results.viewer_page import page_media

    _, folder = demo_folder(tmp_path, monkeypatch, n=12, runs=("direct",))
    href, media = page_media(folder / "m" / "direct.html")
    assert href == "../media"
    assert list(media) == sorted(p.name for p in (folder / "media").iterdir())
    assert all(path.resolve() == (folder / "media" / name).resolve() for name, path in media.items())


def store_files(root):
    return [p for p in root.rglob("*") if p.is_file()]


def log_two_pages(tmp_path, monkeypatch, packs):
    """The demo folder's two runs logged as track logs them, with a pack size of a ``packs``-th of the
    media; (viewer folder, artifact root, summary, evaluations, pack size)."""
    from socialbench.results.tracking import log_evaluations
    from socialbench.results.viewer_page import page_media
    from socialbench.stages.track import relinker

    _, folder = demo_folder(tmp_path, monkeypatch, n=12, runs=("direct", "chain"))
    evs = []
    for run in ("direct", "chain"):
        page = folder / "m" / f"{run}.html"
        href, media = page_media(page)
        evs.append(
            {
                "benchmark": "toybench",
                "model": "m",
                "method": run,
                "params": {"seed": 1},
                "content": {"predictions_sha256": run},
                "provenance": {"git_commit": "abc"},
                "scores": {"all": {"acc": 0.5}},
                "stats": {},
                "artifacts": [(folder / "m" / f"{run}.shards", f"viewer/{run}.shards")],
                "viewer": {"page": page, "folder": "viewer", "media": media, "relink": relinker(page, href)},
            }
        )
    pack_bytes = sum(p.stat().st_size for p in (folder / "media").iterdir()) // packs
    arts = tmp_path / "mlartifacts"
    out = log_evaluations(evs, f"sqlite:///{tmp_path}/mlflow.db", "exp", arts, media_pack_bytes=pack_bytes)
    return folder, arts, out, evs, pack_bytes


@pytest.mark.slow
def test_pages_logged_to_mlflow_find_their_media_packed_once_in_the_parent_run(tmp_path, monkeypatch):
    """Two runs' pages logged with a pack size that forces several packs: the parent run holds each
    medium once, in packs and their index (no file per image), a run its page and shards only, each
    image a logged page draws is in the index of the packs its link leads to, every run holds at most
    2,000 files, the store no more bytes than it was given, and an unchanged rerun logs nothing."""
    import re

    from socialbench.results.tracking import log_evaluations
    from socialbench.results.viewer_packs import INDEX_NAME, read_packed
    from socialbench.results.viewer_page import read_shard_js, relink_media

    folder, arts, out, evs, pack_bytes = log_two_pages(tmp_path, monkeypatch, packs=5)
    runs = {p.parent.name: p for p in arts.glob("*/artifacts")}  # <artifact location>/<run>/artifacts
    parent = runs[out["parent"]]
    index = json.loads((parent / "media" / INDEX_NAME).read_text())
    assert 5 <= len(index["packs"]) <= 7  # several packs, none per image
    assert sorted(p.name for p in (parent / "media").iterdir()) == sorted([*index["packs"], INDEX_NAME])
    stored = sorted(p.name for p in (folder / "media").iterdir())
    assert sorted(index["media"]) == stored  # every medium, once
    assert all(read_packed(parent / "media", n, index) == (folder / "media" / n).read_bytes() for n in stored)
    assert all(len(store_files(r)) <= 2000 for r in runs.values())
    # the bytes handed to MLflow: the viewer folder, with each page as logged (its script grown), plus the index
    pages = [
        (folder / "m" / f"{r}.html", next(arts.glob(f"*/artifacts/toybench/m/{r}/viewer/{r}.html")))
        for r in ("direct", "chain")
    ]
    given = sum(p.stat().st_size for p in store_files(folder)) + sum(
        b.stat().st_size - a.stat().st_size for a, b in pages
    )
    assert sum(p.stat().st_size for p in store_files(arts)) <= given + (parent / "media" / INDEX_NAME).stat().st_size
    for child, run in zip(out["new"], ("direct", "chain")):
        viewer = runs[child] / "toybench" / "m" / run / "viewer"
        assert [p.relative_to(runs[child]).parts[-2] for p in store_files(runs[child])].count("media") == 0
        text = (viewer / f"{run}.html").read_text()
        link = re.search(r'var PK="([^"]+)"', text).group(1)
        assert (viewer / link).resolve() == (parent / "media").resolve()
        assert text == relink_media((folder / "m" / f"{run}.html").read_text(), "../media", link)
        shards = sorted((viewer / f"{run}.shards").iterdir())
        srcs = {
            m for f in shards for h in read_shard_js(f.read_text())[1] for m in re.findall(r'src="../media/([^"]+)"', h)
        }
        assert srcs and srcs <= set(index["media"])
    before = {p: p.stat().st_mtime_ns for p in store_files(arts)}
    assert log_evaluations(evs, f"sqlite:///{tmp_path}/mlflow.db", "exp", arts, media_pack_bytes=pack_bytes) == {
        "new": [],
        "existing": out["new"],
        "parent": None,
    }
    assert {p: p.stat().st_mtime_ns for p in store_files(arts)} == before  # an unchanged rerun logs nothing


@pytest.mark.slow
def test_the_projects_viewer_check_passes_in_chromium_at_demo_size(tmp_path):
    """scripts/check_viewer.sh at the demo's 72 instances in several shards: Chromium from disk, then a
    logged page from a real MLflow server (its images from the parent run's packs by Range requests)
    and from Python's http.server (whole packs)."""
    if shutil.which("chromium") is None and os.geteuid() != 0:
        pytest.skip("Chromium is not installed and installing it needs root (scripts/check_viewer.sh)")
    env = {**os.environ, "VIEWER_CHECK_N": "72", "VIEWER_CHECK_SHARD_ROWS": "16", "VIEWER_CHECK_DIR": str(tmp_path)}
    proc = subprocess.run(["bash", str(REPO / "scripts/check_viewer.sh")], env=env, capture_output=True, text=True)
    if proc.returncode != 0 and "installing it needs root" in proc.stderr:
        pytest.skip("Chromium is not installed")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "check_viewer: DOM checks passed (72 rows" in proc.stdout and "check_viewer: OK" in proc.stdout
    assert "Range requests, each answered 206" in proc.stdout


# ---- answers under each option order (params robustness, issue 34) ------------------------------------
def order_preds(tmp_path, k, answers, method=None):
    insts = make_instances(3)
    recs = [
        {"id": i["id"], "model": "m", "method": method or f"chain__order{k}", "answer": a, "raw": a}
        for i, a in zip(insts, answers)
    ]
    return write_jsonl(tmp_path / f"chain__order{k}.jsonl", recs)


def test_a_runs_page_shows_each_instances_answers_under_every_order_side_by_side(tmp_path):
    inst, pred, trace = toy_run(tmp_path, answers=("red", "green", "blue"), errors=(None, None, None))
    orders = [
        (1, order_preds(tmp_path, 1, ("red", "blue", "blue"))),
        (2, order_preds(tmp_path, 2, ("red", "red", "blue"))),
    ]
    arts = rows_of(parse(drawn(toy_view(tmp_path, inst, pred, trace, orders=orders))))
    first, second = arts[0], arts[1]
    table = second.find_all("table", "orders")[0]
    assert [th.text for th in table.find_all("th")][:4] == ["field", "order 0", "order 1", "order 2"]
    assert "answer changes with order" in second.text and "same answer under 3 orders" in first.text
    cells = [td for td in table.find_all("td") if "pred" in td.classes]
    assert ["wrong" in td.classes for td in cells[:3]] == [False, True, True]  # green, blue, red for gold green


def test_a_page_without_order_runs_has_no_orders_table(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    assert not parse(drawn(toy_view(tmp_path, inst, pred, trace))).find_all("table", "orders")


def test_order_predictions_of_another_run_are_an_error_naming_the_file(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    other = order_preds(tmp_path, 1, ("red", "red", "red"), method="direct__order1")
    with pytest.raises(DataError, match=r"chain__order1\.jsonl.*'direct__order1' differs from 'chain__order1'"):
        toy_view(tmp_path, inst, pred, trace, orders=[(1, other)])
