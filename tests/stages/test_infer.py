"""socialbench infer (src/socialbench/stages/infer.py): several methods in one process, one backend, the
results layout; each run's files the same bytes as a run of its own."""

import json

from typer.testing import CliRunner

from socialbench.cli import app
from socialbench.core.errors import SocialbenchError
from tests.conftest import make_instance
from tests.stages.conftest import infer, main_error, method_args, png, write_jsonl

runner = CliRunner()
METHODS = ("direct", "direct_constrained", "codar")


def test_several_methods_write_each_run_where_the_layout_puts_it(tmp_path, inputs):
    res = infer(*inputs, "--model", "r", "--results-dir", str(tmp_path / "results"), *method_args(METHODS))
    assert res.exit_code == 0, res.output
    for kind, ext in (("predictions", ".jsonl"), ("traces", ".jsonl"), ("runs", ".stats.json")):
        found = sorted(p.name for p in (tmp_path / "results" / kind / "moca" / "r").iterdir())
        assert found == sorted(f"{m}{ext}" for m in METHODS), kind


def test_several_methods_in_one_process_write_the_bytes_of_single_runs(tmp_path, inputs):
    inst, params = inputs
    res = infer(inst, params, "--model", "r", "--results-dir", str(tmp_path / "multi"), *method_args(METHODS))
    assert res.exit_code == 0, res.output
    for method in METHODS:
        one = tmp_path / "single" / method
        one.mkdir(parents=True)
        res = infer(
            inst,
            params,
            "--model",
            "r",
            "--method",
            method,
            "--out",
            str(one / "p.jsonl"),
            "--trace",
            str(one / "t.jsonl"),
            "--stats",
            str(one / "s.json"),
            "--cache",
            str(one / "fresh.sqlite"),  # a cold cache: the single run calls the backend itself
        )
        assert res.exit_code == 0, res.output
        multi = tmp_path / "multi"
        assert (one / "p.jsonl").read_bytes() == (multi / "predictions" / "moca" / "r" / f"{method}.jsonl").read_bytes()
        assert (one / "t.jsonl").read_bytes() == (multi / "traces" / "moca" / "r" / f"{method}.jsonl").read_bytes()


def test_predictions_point_at_the_pipeline_trace_path_wherever_the_files_go(tmp_path, inputs):
    res = infer(*inputs, "--model", "r", "--results-dir", str(tmp_path / "elsewhere"), "--method", "direct")
    assert res.exit_code == 0, res.output
    rec = json.loads((tmp_path / "elsewhere/predictions/moca/r/direct.jsonl").read_text().splitlines()[0])
    assert rec["request"]["trace"] == "results/traces/moca/r/direct.jsonl"


def test_one_backend_serves_every_method_and_is_closed_once(tmp_path, inputs, monkeypatch):
    import socialbench.stages.infer as infer_mod

    made = []
    real = infer_mod.create_backend

    def counting(spec, context):
        backend = real(spec, context)
        close = backend.close
        made.append({"closed": 0})

        def counted_close():
            made[-1]["closed"] += 1
            close()

        backend.close = counted_close
        return backend

    monkeypatch.setattr(infer_mod, "create_backend", counting)
    res = infer(*inputs, "--model", "r", "--results-dir", str(tmp_path / "results"), *method_args(METHODS))
    assert res.exit_code == 0, res.output
    assert made == [{"closed": 1}]


def test_a_method_params_exclude_for_the_model_is_refused_before_anything_runs(tmp_path, inputs):
    res = infer(*inputs, "--model", "s", "--results-dir", str(tmp_path / "results"), *method_args(METHODS))
    assert isinstance(res.exception, SocialbenchError)
    message = str(res.exception)
    assert "models.s" in message and "no second look" in message and "\n" not in message
    assert not (tmp_path / "results").exists() and not (tmp_path / "c.sqlite").exists()  # nothing run or written


def test_out_stats_and_trace_name_one_run_only(tmp_path, inputs):
    res = infer(
        *inputs,
        "--model",
        "r",
        *method_args(("direct", "codar")),
        "--out",
        str(tmp_path / "p.jsonl"),
        "--stats",
        str(tmp_path / "s.json"),
    )
    assert isinstance(res.exception, SocialbenchError) and "--results-dir" in str(res.exception)
    assert not (tmp_path / "p.jsonl").exists()


def test_results_dir_with_out_is_refused(tmp_path, inputs):
    res = infer(*inputs, "--model", "r", "--results-dir", str(tmp_path / "results"), "--out", str(tmp_path / "p.jsonl"))
    assert isinstance(res.exception, SocialbenchError) and "--out" in str(res.exception)


def test_a_method_given_twice_is_refused(tmp_path, inputs):
    res = infer(*inputs, "--model", "r", "--results-dir", str(tmp_path / "results"), *method_args(("direct", "direct")))
    assert isinstance(res.exception, SocialbenchError) and "twice" in str(res.exception)


def test_benchmark_has_no_default(tmp_path, inputs):
    inst, params = inputs
    res = runner.invoke(app, ["infer", "--instances", str(inst), "--params", str(params), "--model", "r"])
    assert res.exit_code == 2 and "--benchmark" in res.output


def test_recorded_answers_that_cover_part_of_the_instances_say_how_many_are_not_evaluated_and_why(tmp_path, inputs):
    inst, params = inputs
    answers = tmp_path / "human.jsonl"
    answers.write_text(
        json.dumps(
            {
                "id": "x-0",
                "subject": "the speaker",
                "target": "the player",
                "label": "mock",
                "mechanism": "expressive aggression",
            }
        )
        + "\n"
    )
    params.write_text(
        f"seed: 3\nmodels:\n  human: {{backend: file, options: {{path: {answers}}}}}\n"
        f"cache: {{path: {tmp_path / 'c.sqlite'}}}\nmedia: {{allowed_roots: [{tmp_path}]}}\n"
    )
    out = tmp_path / "p.jsonl"
    res = infer(inst, params, "--model", "human", "--out", str(out), "--stats", str(tmp_path / "s.json"))
    assert res.exit_code == 0, res.output
    assert "2 of 3 instances not evaluated: the recorded answers of models.human hold no record" in res.output
    assert "Retry" not in res.output and "0 errors" in res.output
    scored = runner.invoke(
        app,
        [
            "score",
            "--benchmark",
            "moca",
            "--instances",
            str(inst),
            "--predictions",
            str(out),
            "--out",
            str(tmp_path / "sc.json"),
        ],
    )
    assert scored.exit_code == 0, scored.output
    assert "2 of 3 instances not evaluated" in scored.output and "hold no record for them (no_record" in scored.output
    assert "have `error` set" not in scored.output


def test_recorded_answers_that_match_no_instance_are_an_error_and_nothing_is_written(tmp_path, inputs):
    """Issue 33, class 9: with no instance answered, a warning and exit 0 would pass for a result."""
    from socialbench.core.errors import DataError

    inst, params = inputs
    answers = tmp_path / "human.jsonl"
    answers.write_text(json.dumps({"id": "other-split-0", "label": "mock"}) + "\n")
    params.write_text(
        f"seed: 3\nmodels:\n  human: {{backend: file, options: {{path: {answers}}}}}\n"
        f"cache: {{path: {tmp_path / 'c.sqlite'}}}\nmedia: {{allowed_roots: [{tmp_path}]}}\n"
    )
    out = tmp_path / "p.jsonl"
    res = infer(inst, params, "--model", "human", "--out", str(out), "--stats", str(tmp_path / "s.json"))
    assert isinstance(res.exception, DataError), res.output
    assert str(res.exception).startswith(
        f"{answers}, field 'id': the recorded answers of models.human match none of the 3 instances of {inst}"
    )
    assert not out.exists() and not (tmp_path / "s.json").exists()


def test_an_instance_whose_media_leads_outside_the_media_roots_is_refused_naming_the_record(tmp_path, inputs):
    inst, params = inputs
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere.png"
    outside.write_bytes((tmp_path / "img.png").read_bytes())
    (tmp_path / "link.png").symlink_to(outside)
    records = [json.loads(line) for line in inst.read_text().splitlines()]
    records[1]["media"] = [str(tmp_path / "link.png")]
    inst.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "p.jsonl"
    res = infer(inst, params, "--model", "r", "--method", "direct", "--out", str(out), "--stats", str(tmp_path / "s"))
    assert res.exit_code == 1
    assert "record x-1, field 'media'" in str(res.exception) and "through a symlink" in str(res.exception)
    assert not out.exists()


def _web_params(params, tmp_path, url, **options):
    """The inputs' params with a CoDAR model that looks its entities up, over the web retriever at ``url``."""
    opts = {"api_key_env": "SB_TEST_BRAVE_KEY", "base_url": url, "max_retries": 0, **options}
    params.write_text(
        "seed: 3\nmodels:\n  w: {backend: codar_script, options: {entities: text, route: hybrid}}\n"
        f"moca: {{methods: [codar], retrieval: {{retriever: web, k: 1, options: {json.dumps(opts)}}}}}\n"
        f"cache: {{path: {tmp_path / 'c.sqlite'}}}\nmedia: {{allowed_roots: [{tmp_path}]}}\n"
    )


def test_failed_searches_count_as_errors_in_the_stats_and_the_report(tmp_path, inputs, monkeypatch):
    from tests.helpers.brave_loopback import BraveServer, Fault

    monkeypatch.setenv("SB_TEST_BRAVE_KEY", "k")
    inst, params = inputs
    with BraveServer(token="k", faults=[Fault(status=500)]) as server:
        _web_params(params, tmp_path, server.url)
        res = infer(
            inst,
            params,
            "--model",
            "w",
            "--method",
            "codar",
            "--out",
            str(tmp_path / "p.jsonl"),
            "--stats",
            str(tmp_path / "s.json"),
        )
    assert res.exit_code == 0, res.output
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["search_errors"] == 1 and stats["searches"] >= 2 and stats["errors"] >= 1
    assert "1 failed" in res.output and "0 errors" not in res.output
    assert "searches failed (e.g." in res.output and "HTTP 500 from 127.0.0.1" in res.output


def test_every_search_failing_stops_the_run_and_writes_nothing(tmp_path, inputs, monkeypatch):
    from tests.helpers.brave_loopback import BraveServer, Fault

    monkeypatch.setenv("SB_TEST_BRAVE_KEY", "k")
    inst, params = inputs
    with BraveServer(token="k", faults=[Fault(status=500)] * 50) as server:
        _web_params(params, tmp_path, server.url, max_consecutive_failures=2)
        res = infer(
            inst,
            params,
            "--model",
            "w",
            "--method",
            "codar",
            "--out",
            str(tmp_path / "p.jsonl"),
            "--stats",
            str(tmp_path / "s.json"),
        )
    assert isinstance(res.exception, SocialbenchError)  # the command line prints it as one line
    message = str(res.exception)
    assert message.startswith("retriever web: stopped after 2 failed searches in a row") and "\n" not in message
    assert not (tmp_path / "p.jsonl").exists()


def test_a_run_whose_searches_all_failed_writes_no_result(tmp_path, inputs, monkeypatch):
    from tests.helpers.brave_loopback import BraveServer, Fault

    monkeypatch.setenv("SB_TEST_BRAVE_KEY", "k")
    inst, params = inputs
    with BraveServer(token="k", faults=[Fault(status=500)] * 50) as server:
        _web_params(params, tmp_path, server.url, max_consecutive_failures=100)
        out = tmp_path / "p.jsonl"
        res = infer(
            inst, params, "--model", "w", "--method", "codar", "--out", str(out), "--stats", str(tmp_path / "s")
        )
    assert isinstance(res.exception, SocialbenchError)
    assert str(res.exception).startswith("moca codar: all ") and "searches failed" in str(res.exception)
    assert not out.exists()


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
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[png(tmp_path / "img.png")])])
    code, err = main_error(
        monkeypatch, capsys, _infer_args(tmp_path, inst, "--method", "cot", "--params", str(repo_root / "params.yaml"))
    )
    from socialbench.core.benchmarks import get_benchmark

    known = ", ".join(get_benchmark("moca").method_names())
    assert code == 2 and err.strip() == f"error: benchmark moca: unknown method 'cot'; known methods: {known}"


def test_infer_on_an_empty_instances_file_exits_2(tmp_path, monkeypatch, capsys, repo_root):
    inst = tmp_path / "i.jsonl"
    inst.write_text("")
    code, err = main_error(monkeypatch, capsys, _infer_args(tmp_path, inst, "--params", str(repo_root / "params.yaml")))
    assert code == 2 and f"error: {inst}: no records" in err and not (tmp_path / "p.jsonl").exists()


def test_infer_with_an_empty_dev_file_says_the_dev_file_has_no_records(tmp_path, monkeypatch, capsys, repo_root):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[png(tmp_path / "img.png")])])
    dev = tmp_path / "dev.jsonl"
    dev.write_text("")
    args = _infer_args(tmp_path, inst, "--dev", str(dev), "--params", str(repo_root / "params.yaml"))
    args[args.index("random")] = "prior"
    code, err = main_error(monkeypatch, capsys, args)
    assert code == 2 and f"error: {dev}: the dev file has no records" in err and "(--dev)" not in err


def test_infer_on_a_video_instance_without_frames_names_file_record_and_field(tmp_path, monkeypatch, capsys, repo_root):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("v", modality="video_text", transcript="A: hi")])
    code, err = main_error(monkeypatch, capsys, _infer_args(tmp_path, inst, "--params", str(repo_root / "params.yaml")))
    assert code == 2 and f"error: {inst}, record v, field 'frames': a video_text instance needs sampled frames" in err


def test_infer_stats_record_what_the_run_was_made_with(tmp_path):
    from socialbench.core.benchmarks import get_benchmark
    from socialbench.core.hashing import sha256_file

    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[png(tmp_path / "img.png")])])
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

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[png(tmp_path / "img.png")])])
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


def test_infer_gives_the_methods_the_answer_options_of_params(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[png(tmp_path / "img.png")])])
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


def test_infer_records_carry_the_gold_answer_and_a_pointer_to_the_request(tmp_path, repo_root):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", media=[png(tmp_path / "img.png")])])
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
