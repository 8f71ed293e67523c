"""The trace viewer's core (socialbench.results.viewer): reading and cross-checking a run, the default rows,
thumbnails, the page's HTML (rows, marks, filters, escaping, self-containment, determinism) and how a
multi-stage trace is drawn. Pages are checked by parsing them (html.parser); the script's behaviour in
a browser is checked by scripts/check_viewer.sh (Chromium)."""

from __future__ import annotations

import base64
import io
import json
from html.parser import HTMLParser

import pytest
from PIL import Image
from typer.testing import CliRunner

from socialbench.core.errors import DataError, SocialbenchError
from socialbench.results.viewer import (
    build_page,
    calls_html,
    check_rows,
    default_rows,
    embed_media,
    pick_frames,
    thumbnail,
    trace_html,
    verdict_tokens,
    verdicts,
)
from tests.helpers.toybench.benchmark import ToyBenchmark, make_instances

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None]):
        self.tag, self.attrs, self.children, self.parts = tag, attrs, [], []

    @property
    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text for p in self.parts)

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def iter(self):
        yield self
        for c in self.children:
            yield from c.iter()

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [n for n in self.iter() if n.tag == tag and (cls is None or cls in n.classes)]


class _Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        self.stack[-1].parts.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        for k in range(len(self.stack) - 1, 0, -1):
            if self.stack[k].tag == tag:
                del self.stack[k:]
                return

    def handle_data(self, data):
        self.stack[-1].parts.append(data)


def parse(html: str) -> Node:
    """The page as a tree (the HTML tests read it as a browser's parser would build it)."""
    t = _Tree()
    t.feed(html)
    t.close()
    return t.root


def rows_of(root: Node) -> list[Node]:
    return root.find_all("article", "row")


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


def toy_page(tmp_path, **kw) -> str:
    inst, pred, trace = toy_run(tmp_path, **kw)
    return build_page(ToyBenchmark(), inst, pred, trace).html


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
    (script,) = root.find_all("script")
    assert "location.hash" in script.text and "f-" in script.text


def test_markup_in_instance_text_and_model_output_stays_text(tmp_path):
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    inst, pred, trace = toy_run(tmp_path, answers=(evil, "green", "blue"))
    html = build_page(ToyBenchmark(), inst, pred, trace).html
    root = parse(html)
    assert len(root.find_all("script")) == 1 and root.find_all("img") == []
    assert evil in rows_of(root)[0].text  # shown as it is, as text
    assert "&lt;script&gt;alert(1)" in html


def test_the_same_inputs_give_the_same_bytes(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    assert build_page(ToyBenchmark(), inst, pred, trace).html == build_page(ToyBenchmark(), inst, pred, trace).html


def test_the_page_loads_nothing_from_outside_itself(tmp_path):
    root = parse(toy_page(tmp_path))
    links = [v for n in root.iter() for k, v in n.attrs.items() if k in ("src", "href", "action")]
    assert all(v.startswith(("data:", "#")) for v in links)
    csp = [n.attrs["content"] for n in root.find_all("meta") if n.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0] and "img-src data:" in csp[0]
    assert root.find_all("link") == [] and all("src" not in s.attrs for s in root.find_all("script"))


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
        build_page(ToyBenchmark(), inst, pred, trace)


def test_a_prediction_for_no_instance_is_an_error(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    pred.write_text(pred.read_text() + json.dumps({"id": "other-1", "model": "m", "method": "chain"}) + "\n")
    with pytest.raises(DataError, match=r"record line 4, field 'id': id 'other-1' matches no instance"):
        build_page(ToyBenchmark(), inst, pred, trace)


def test_traces_of_another_run_are_an_error_naming_the_record(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    recs = [json.loads(x) for x in trace.read_text().splitlines()]
    recs[1]["method"] = "direct"
    write_jsonl(trace, recs)
    with pytest.raises(DataError, match=r"trace.jsonl, record line 2, field 'method': 'direct' differs from 'chain'"):
        build_page(ToyBenchmark(), inst, pred, trace)


def test_trace_calls_that_are_not_a_list_are_an_error(tmp_path):
    inst, pred, trace = toy_run(tmp_path)
    recs = [json.loads(x) for x in trace.read_text().splitlines()]
    recs[2]["calls"] = {"round": 0}
    write_jsonl(trace, recs)
    with pytest.raises(DataError, match=r"record line 3, field 'calls': must be a list of call objects"):
        build_page(ToyBenchmark(), inst, pred, trace)


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
    assert "viewer: 3 instances" in res.output and len(rows_of(parse(out.read_text("utf-8")))) == 3


# ---- media ------------------------------------------------------------------------------------
def png_bytes(size=(640, 480), mode="RGB", colour=(200, 40, 40)) -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size, colour).save(buf, format="PNG")
    return buf.getvalue()


def decode_uri(uri: str) -> Image.Image:
    assert uri.startswith("data:image/jpeg;base64,")
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))


def test_a_thumbnail_is_a_jpeg_data_uri_scaled_to_fit():
    uri, w, h = thumbnail(png_bytes((640, 480)), 256)
    im = decode_uri(uri)
    assert (w, h) == (256, 192) and im.size == (256, 192) and im.format == "JPEG"


def test_a_thumbnail_never_enlarges_a_small_image():
    assert thumbnail(png_bytes((100, 50)), 256)[1:] == (100, 50)


def test_a_transparent_image_is_flattened_on_white():
    uri, _, _ = thumbnail(png_bytes((40, 40), "RGBA", (0, 0, 0, 0)), 64)
    assert min(decode_uri(uri).getpixel((20, 20))) > 245


def test_bytes_that_are_no_image_are_a_value_error():
    with pytest.raises(ValueError, match="not a readable image"):
        thumbnail(b"not an image", 64)


def test_media_are_embedded_and_a_missing_file_is_marked_and_reported(tmp_path):
    (tmp_path / "a.png").write_bytes(png_bytes())
    rows = [{"id": "x", "media": [{"kind": "image", "path": "a.png"}, {"kind": "image", "path": "gone.png"}]}]
    problems = embed_media(rows, tmp_path)
    ok, gone = rows[0]["media"]
    assert ok["src"].startswith("data:image/jpeg;base64,") and "problem" not in ok
    assert gone["problem"] == "file not found" and problems == ["x: gone.png: file not found"]


def test_a_frame_whose_bytes_differ_from_its_recorded_sha256_is_shown_with_a_warning(tmp_path):
    (tmp_path / "f.png").write_bytes(png_bytes())
    rows = [{"id": "x", "media": [{"kind": "frame", "path": "f.png", "sha256": "0" * 64}]}]
    problems = embed_media(rows, tmp_path)
    (m,) = rows[0]["media"]
    assert m["src"] and "sha256 differs" in m["problem"] and len(problems) == 1


def test_a_video_without_frames_is_not_embedded_but_named(tmp_path):
    rows = [{"id": "x", "media": [{"kind": "video", "path": "clip.mp4"}]}]
    embed_media(rows, tmp_path)
    assert "src" not in rows[0]["media"][0] and "no sampled frames" in rows[0]["media"][0]["problem"]


def test_frames_beyond_the_maximum_are_thinned_evenly_keeping_first_and_last():
    frames = [{"i": k} for k in range(16)]
    assert [f["i"] for f in pick_frames(frames, 4)] == [0, 5, 10, 15]
    assert pick_frames(frames[:3], 8) == frames[:3]


def test_a_thinned_video_says_how_many_frames_it_shows(tmp_path):
    for k in range(5):
        (tmp_path / f"{k}.png").write_bytes(png_bytes((32, 32), colour=(k * 40, 0, 0)))
    rows = [{"id": "x", "media": [{"kind": "frame", "path": f"{k}.png"} for k in range(5)]}]
    embed_media(rows, tmp_path, max_frames=2)
    assert [m["path"] for m in rows[0]["media"]] == ["0.png", "4.png"] and ["2 of 5 frames shown", "info"] in rows[0][
        "badges"
    ]


# ---- calls and multi-stage traces ------------------------------------------------------------
CODAR_LIKE = {
    "stages": [
        {"stage": "observer", "pass": 1, "output": {"caption": "Two people <em>argue</em>."}},
        {"stage": "conflict", "pass": 1, "output": {"The_Conflict": "praise vs failure"}},
        {"stage": "checker", "pass": 1, "output": {"status": "REJECTED", "breakpoint": 3, "refine": "unsupported"}},
        {"stage": "conflict", "pass": 2, "output": {"The_Conflict": "praise against a visible failure"}},
        {"stage": "checker", "pass": 2, "output": {"status": "ACCEPTED", "breakpoint": None, "refine": ""}},
    ],
    "retrieval": {"routes": ["model_prior"], "status": "none: answer from model prior"},
}


def test_each_stage_pass_of_a_multi_stage_trace_is_its_own_block_titled_by_stage_and_pass():
    root = parse(trace_html(CODAR_LIKE))
    titles = [d.find_all("summary")[0].text for d in root.find_all("details", "stage")]
    assert titles[:2] == ["observer · pass 1", "conflict · pass 1"] and len(titles) == 5
    assert "REJECTED → stage 3" in titles[2] and "ACCEPTED" in titles[4]


def test_stage_outputs_and_other_trace_keys_are_shown_as_escaped_text():
    html = trace_html(CODAR_LIKE)
    root = parse(html)
    assert root.find_all("em") == [] and "Two people <em>argue</em>." in root.text
    assert "none: answer from model prior" in root.text  # a key outside the stages


def test_verdicts_are_found_wherever_they_are_nested_in_order():
    assert verdicts(CODAR_LIKE) == [{"status": "REJECTED", "breakpoint": 3}, {"status": "ACCEPTED", "breakpoint": None}]


def test_a_revised_then_accepted_chain_is_filtered_as_both():
    assert verdict_tokens(CODAR_LIKE) == ["revised", "accepted"]


def test_the_traces_own_not_accepted_flag_decides_over_the_last_verdict():
    assert verdict_tokens({**CODAR_LIKE, "not_accepted": True}) == ["revised", "not-accepted"]


def test_a_trace_without_verdicts_has_no_checker_filter_value():
    assert verdict_tokens({"notes": "x"}) == [] and verdict_tokens(None) == []


def test_a_stage_called_again_is_marked_as_a_rerun():
    calls = [
        {"round": r, "stage": s, "text": "{}", "finish_reason": "stop"}
        for r, s in enumerate(["observer", "checker", "observer", "checker", "checker"])
    ]
    heads = [d.text for d in parse(calls_html(calls)).find_all("div", "call-head")]
    assert [("rerun 1" in h, "rerun 2" in h) for h in heads] == [(False, False)] * 2 + [(True, False)] * 2 + [
        (False, True)
    ]


def test_a_failed_or_truncated_call_is_marked_with_its_error():
    calls = [
        {"round": 0, "stage": "answer", "text": "", "finish_reason": "error", "error": "HTTP 500"},
        {"round": 0, "stage": "answer", "text": "{", "finish_reason": "length"},
    ]
    root = parse(calls_html(calls))
    assert [("bad" in d.classes) for d in root.find_all("div", "call")] == [True, True]
    assert "error: HTTP 500" in root.text


def test_the_checker_filter_appears_only_for_runs_with_verdicts(tmp_path):
    root = parse(toy_page(tmp_path, trace=CODAR_LIKE))
    (sel,) = [s for s in root.find_all("select") if s.attrs["id"] == "f-verdict"]
    assert [o.attrs["value"] for o in sel.find_all("option")] == ["", "accepted", "revised"]
    assert all(r.attrs["data-verdict"] == "revised accepted" for r in rows_of(root))
    assert not [s for s in parse(toy_page(tmp_path)).find_all("select") if s.attrs["id"] == "f-verdict"]


# The shape CoDAR's trace has (socialbench/moca/methods/codar.py): stage passes with inputs, output, error;
# the verdicts again in their own list (with the rule's verdict on an invalid tuple); `accepted`
# and, when never accepted, `not_accepted` with the reason.
CODAR_TRACE = {
    "accepted": False,
    "final_pass": 1,
    "method": "codar",
    "revision_rounds": 1,
    "retries": 1,
    "revisions": 1,
    "not_accepted": "no ACCEPTED within 1 revision round(s): the output is the last decoder answer",
    "retrieval": [{"pass": 0, "routes": ["model_prior"], "retrieved": False}],
    "stages": [
        {
            "stage": "observer",
            "pass": 0,
            "attempt": 1,
            "request_id": "x/codar/observer",
            "inputs": {},
            "output": {"caption": "c"},
            "error": None,
        },
        {
            "stage": "decoder",
            "pass": 0,
            "attempt": 1,
            "request_id": "x/codar/decoder",
            "inputs": {"The_Conflict": "praise vs failure"},
            "output": None,
            "error": "not one JSON object",
        },
        {
            "stage": "decoder",
            "pass": 0,
            "attempt": 2,
            "request_id": "x/codar/decoder.retry1",
            "inputs": {"The_Conflict": "praise vs failure"},
            "output": {"label": "mock"},
            "error": None,
        },
        {
            "stage": "checker",
            "pass": 0,
            "attempt": 1,
            "request_id": "x/codar/checker",
            "inputs": {},
            "output": {"status": "REJECTED", "breakpoint": 1, "refine": "unsupported evidence"},
            "error": None,
        },
        {
            "stage": "observer",
            "pass": 1,
            "attempt": 1,
            "request_id": "x/codar/observer.rev1",
            "inputs": {"revision": "r"},
            "output": {"caption": "c2"},
            "error": None,
        },
        {
            "stage": "decoder",
            "pass": 1,
            "attempt": 1,
            "request_id": "x/codar/decoder.rev1",
            "inputs": {},
            "output": {"label": "nonsense"},
            "error": None,
        },
    ],
    "stages_run": ["observer", "decoder", "checker"],
    "verdicts": [
        {"pass": 0, "status": "REJECTED", "breakpoint": 1, "refine": "unsupported evidence", "by": "checker"},
        {"pass": 1, "status": "REJECTED", "breakpoint": 4, "refine": "one value per field", "by": "rule"},
    ],
}


def test_a_traces_own_verdicts_list_is_its_verdicts_without_the_copies_in_the_stages():
    assert verdicts(CODAR_TRACE) == [{"status": "REJECTED", "breakpoint": 1}, {"status": "REJECTED", "breakpoint": 4}]


def test_a_not_accepted_reason_makes_the_row_not_accepted():
    assert verdict_tokens(CODAR_TRACE) == ["revised", "not-accepted"]


def test_a_retry_is_titled_by_its_attempt_and_a_failed_attempt_is_marked_as_an_error():
    root = parse(trace_html(CODAR_TRACE))
    titles = [d.find_all("summary")[0].text for d in root.find_all("details", "stage")]
    assert titles[:3] == ["observer · pass 0", "decoder · pass 0 error", "decoder · pass 0 · attempt 2"]
    assert titles[3] == "checker · pass 0 REJECTED → stage 1" and titles[4] == "observer · pass 1"


def test_what_a_stage_was_given_is_folded_and_its_empty_keys_left_out():
    root = parse(trace_html(CODAR_TRACE))
    decoder = root.find_all("details", "stage")[2]
    (inputs,) = decoder.find_all("details", "inputs")
    assert "open" not in inputs.attrs and "praise vs failure" in inputs.text
    assert "null" not in decoder.text and "error" not in [dt.text for dt in decoder.find_all("dt")]


def test_a_codar_like_row_shows_the_last_verdict_and_not_accepted_in_its_header(tmp_path):
    (art, *_) = rows_of(parse(toy_page(tmp_path, trace=CODAR_TRACE)))
    head = art.find_all("header")[0].text
    assert (
        "REJECTED → stage 4" in head and "not accepted" in head and art.attrs["data-verdict"] == "revised not-accepted"
    )


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
    root = parse(build_page(ToyBenchmark(), inst, pred, None).html)
    assert root.find_all("title")[0].text == "toybench · mymodel · direct"
    assert all(r.attrs["data-correct"] == "wrong" and r.attrs["data-error"] == "yes" for r in rows_of(root))


def test_media_outside_the_media_root_are_marked_and_never_read(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "secret.png").write_bytes(png_bytes())
    (tmp_path / "root" / "link.png").symlink_to(tmp_path / "secret.png")
    rows = [
        {
            "id": "x",
            "media": [
                {"kind": "image", "path": "../secret.png"},
                {"kind": "image", "path": str(tmp_path / "secret.png")},
                {"kind": "image", "path": "link.png"},
            ],
        }
    ]
    problems = embed_media(rows, tmp_path / "root")
    assert len(problems) == 3 and all("src" not in m and "not embedded" in m["problem"] for m in rows[0]["media"])
    assert "through a symlink" in rows[0]["media"][2]["problem"]


def test_a_fifo_as_media_is_marked_without_opening_it(tmp_path):
    import os
    import signal

    def hung(*_):
        raise TimeoutError("embed_media opened the FIFO and waited for a writer")

    os.mkfifo(tmp_path / "f.png")
    rows = [{"id": "x", "media": [{"kind": "image", "path": "f.png"}]}]
    old = signal.signal(signal.SIGALRM, hung)  # a broken check fails the test instead of hanging the suite
    signal.alarm(20)
    try:
        problems = embed_media(rows, tmp_path)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert problems == [
        "x: f.png: is a FIFO (named pipe), not a media file; refused before opening it (reading it could wait forever)"
    ]
