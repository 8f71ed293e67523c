"""The generic multi-round runner (socialbench.core.runner), driven through real methods: MoCA's
direct method and the test-only toybench's three-round chain."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from socialbench.backends.scripted import ScriptedBackend
from socialbench.core.backend import BackendContext, ModelSpec, create_backend
from socialbench.core.benchmarks import get_benchmark, register
from socialbench.core.cache import RequestCache
from socialbench.core.errors import ConfigError, DataError
from socialbench.core.runner import run_method
from tests.conftest import make_instance
from tests.helpers.loopback import Fault, LoopbackServer
from tests.helpers.moca_requests import write_png
from tests.helpers.toybench.benchmark import ToyBenchmark, make_instances

REPO = Path(__file__).resolve().parents[2]
GOOD = json.dumps({"mechanism": "expressive aggression", "label": "mock", "subject": "subject0", "target": "target0"})


def instances(tmp_path, n):
    img = tmp_path / "img.png"
    img.write_bytes(b"\x89PNG image bytes")
    return [make_instance(f"i{k}", media=[str(img)]) for k in range(n)]


def scripted(answer="{}", name="scripted-model", **options):
    spec = ModelSpec(name=name, backend="scripted", options={"default": answer, **options})
    return spec, ScriptedBackend(spec)


def predict(insts, spec, cache, backend=None, seed=1, method="direct", source="instances", dev=None):
    bench = get_benchmark("moca")
    records, _, stats = run_method(
        bench,
        bench.method(method, spec, seed),
        insts,
        spec=spec,
        cache=cache,
        seed=seed,
        backend=backend,
        progress=False,
        source=source,
        dev_instances=dev,
    )
    return records, stats


def toy(method, spec, cache, backend, n=3):
    register(ToyBenchmark)
    bench = get_benchmark("toybench")
    return run_method(
        bench,
        bench.method(method, spec, 1),
        make_instances(n),
        spec=spec,
        cache=cache,
        seed=1,
        backend=backend,
        progress=False,
    )


# ---- single-call methods through the runner -------------------------------------------------
def test_every_instance_gets_a_record_with_raw_and_resolved_fields(tmp_path):
    spec, backend = scripted(GOOD)
    recs, stats = predict(instances(tmp_path, 3), spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert [r["id"] for r in recs] == ["i0", "i1", "i2"]
    assert all(r["raw"] == GOOD and r["mechanism"] == "expressive aggression" and r["error"] is None for r in recs)
    assert recs[0]["subject"] == recs[0]["slots"]["subject"]["subject0"]
    assert stats.cache_misses == 3 and stats.cache_hits == 0 and stats.rounds == 1


def test_rerun_with_no_change_makes_zero_model_calls(tmp_path):
    cache = RequestCache(tmp_path / "c.sqlite")
    insts = instances(tmp_path, 4)
    spec, first = scripted(GOOD)
    predict(insts, spec, cache, first)
    _, second = scripted(GOOD)
    recs, stats = predict(insts, spec, cache, second)
    assert second.calls == [] and stats.cache_hits == 4
    assert all(r["raw"] == GOOD for r in recs)


def test_one_added_instance_costs_one_call(tmp_path):
    cache = RequestCache(tmp_path / "c.sqlite")
    insts = instances(tmp_path, 4)
    spec, first = scripted(GOOD)
    predict(insts[:3], spec, cache, first)
    _, second = scripted(GOOD)
    predict(insts, spec, cache, second)
    assert second.calls == ["i3/direct/answer"]


def test_failed_call_is_recorded_scored_as_error_and_retried_next_run(tmp_path):
    cache = RequestCache(tmp_path / "c.sqlite")
    insts = instances(tmp_path, 2)
    spec, backend = scripted(GOOD, fail_ids=["i1/direct/answer"])
    recs, stats = predict(insts, spec, cache, backend)
    assert recs[1]["error"] == "scripted failure" and recs[1]["label"] is None
    assert stats.errors == 1
    _, again = scripted(GOOD)
    predict(insts, spec, cache, again)
    assert again.calls == ["i1/direct/answer"]  # failures are not cached


def test_a_cache_filled_by_an_older_version_of_a_test_double_is_not_replayed(tmp_path, monkeypatch):
    from tests.helpers.versioned_double import load_double

    cache = RequestCache(tmp_path / "c.sqlite")
    insts = instances(tmp_path, 2)
    spec = ModelSpec(name="double", backend="scripted")
    other = GOOD.replace("expressive aggression", "humour")
    predict(insts, spec, cache, load_double(monkeypatch, tmp_path, GOOD).VersionedDouble(spec))
    same = load_double(monkeypatch, tmp_path, GOOD).VersionedDouble(spec)
    predict(insts, spec, cache, same)
    assert same.calls == []  # the same code: every answer from the cache
    changed = load_double(monkeypatch, tmp_path, other).VersionedDouble(spec)
    recs, stats = predict(insts, spec, cache, changed)
    assert changed.calls == ["i0/direct/answer", "i1/direct/answer"] and stats.cache_hits == 0
    assert [r["raw"] for r in recs] == [other, other]


def test_changed_image_byte_is_a_cache_miss(tmp_path):
    cache = RequestCache(tmp_path / "c.sqlite")
    insts = instances(tmp_path, 1)
    spec, first = scripted(GOOD)
    predict(insts, spec, cache, first)
    (tmp_path / "img.png").write_bytes(b"\x89PNG image bytez")
    _, second = scripted(GOOD)
    predict(insts, spec, cache, second)
    assert second.calls == ["i0/direct/answer"]


def test_random_backend_is_deterministic_and_valid(tmp_path, taxonomy):
    spec = ModelSpec(name="random", backend="random")
    insts = instances(tmp_path, 5)
    runs = []
    for k in range(2):
        backend = create_backend(spec, BackendContext(seed=7))
        recs, _ = predict(insts, spec, RequestCache(tmp_path / f"c{k}.sqlite"), backend, seed=7)
        runs.append(recs)
    assert runs[0] == runs[1]
    assert all(r["error"] is None and r["label"] in taxonomy.label_names("intent") for r in runs[0])


def test_prior_backend_answers_the_dev_majority(tmp_path):
    dev = [
        make_instance("d0", label="provoke"),
        make_instance("d1", label="provoke"),
        make_instance("d2", label="mock"),
    ]
    spec = ModelSpec(name="prior", backend="prior")
    recs, _ = predict(instances(tmp_path, 2), spec, RequestCache(tmp_path / "c.sqlite"), dev=dev)
    assert {r["label"] for r in recs} == {"provoke"}
    assert {r["mechanism"] for r in recs} == {"expressive aggression"}


def test_prior_backend_with_an_empty_dev_split_says_it_has_no_records():
    with pytest.raises(ConfigError, match="the dev split has no records"):
        create_backend(ModelSpec(name="prior", backend="prior"), BackendContext(seed=1, dev_answers=[]))
    with pytest.raises(ConfigError, match=r"needs the dev split \(--dev\)"):
        create_backend(ModelSpec(name="prior", backend="prior"), BackendContext(seed=1, dev_answers=None))


def test_video_instance_without_frames_stops_the_run_naming_file_record_and_field(tmp_path):
    spec, backend = scripted(GOOD)
    insts = instances(tmp_path, 1) + [make_instance("v", modality="video_text", transcript="A: hi")]
    with pytest.raises(DataError) as exc:
        predict(insts, spec, RequestCache(tmp_path / "c.sqlite"), backend, source="test.jsonl")
    assert (exc.value.path, exc.value.record, exc.value.field) == ("test.jsonl", "v", "frames")
    assert "run socialbench moca frames first" in str(exc.value)
    assert backend.calls == []  # no request went out


def test_missing_image_at_inference_is_answered_without_a_call_and_the_others_run(tmp_path):
    spec, backend = scripted(GOOD)
    insts = instances(tmp_path, 1) + [make_instance("a", media=[str(tmp_path / "gone.png")])]
    recs, stats = predict(insts, spec, RequestCache(tmp_path / "c.sqlite"), backend)
    gone = next(r for r in recs if r["id"] == "a")
    assert gone["error"].startswith("media: image file not found") and "gone.png" in gone["media_error"]
    assert gone["label"] is None and gone["slots"] and gone["request_key"] is None
    assert backend.calls == ["i0/direct/answer"] and stats.requests == 1


def test_an_instance_marked_media_error_is_kept_and_answered_without_a_call(tmp_path):
    spec, backend = scripted(GOOD)
    insts = [make_instance("v", modality="video_text", transcript="A: hi", media_error="clip.mp4: truncated")]
    recs, stats = predict(insts, spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert recs[0]["error"] == "media: clip.mp4: truncated" and recs[0]["media_error"] == "clip.mp4: truncated"
    assert backend.calls == [] and stats.requests == 0


def test_the_constrained_variant_sends_the_enum_schema_under_its_own_name(tmp_path):
    spec, backend = scripted(GOOD)
    cache = RequestCache(tmp_path / "c.sqlite")
    recs, _ = predict(instances(tmp_path, 1), spec, cache, backend, method="direct_constrained")
    assert backend.calls == ["i0/direct_constrained/answer"]
    assert recs[0]["method"] == "direct_constrained" and recs[0]["label"] == "mock"
    _, again = scripted(GOOD)
    predict(instances(tmp_path, 1), spec, cache, again)  # direct: JSON mode, a request of its own
    assert again.calls == ["i0/direct/answer"]


def test_a_fenced_answer_is_invalid_by_default_and_parsed_when_params_tolerate_it(tmp_path):
    fenced = "```json\n" + GOOD + "\n```"
    spec, backend = scripted(fenced)
    cache = RequestCache(tmp_path / "c.sqlite")
    strict, _ = predict(instances(tmp_path, 1), spec, cache, backend)
    assert strict[0]["label"] is None and "code fence" in strict[0]["error"]
    bench = get_benchmark("moca")
    method = bench.method("direct", spec, 1, bench.method_settings({"answer": {"code_fence": "tolerate"}}, "direct"))
    tolerant, _, stats = run_method(
        bench, method, instances(tmp_path, 1), spec=spec, cache=cache, seed=1, backend=backend, progress=False
    )
    assert tolerant[0]["label"] == "mock" and tolerant[0]["error"] is None and stats.cache_hits == 1


def test_bad_instance_stops_the_run_before_the_backend_starts(tmp_path, monkeypatch):
    import socialbench.core.runner as runner_mod

    def no_backend(*a, **k):
        raise AssertionError("the backend must not start for a run that cannot be built")

    monkeypatch.setattr(runner_mod, "create_backend", no_backend)
    with pytest.raises(DataError):
        predict(
            [make_instance("v", modality="video_text")],
            ModelSpec(name="random", backend="random"),
            RequestCache(tmp_path / "c.sqlite"),
        )


def test_a_backend_factory_gets_the_context_and_its_backend_is_left_open(tmp_path):
    spec, backend = scripted(GOOD)
    contexts, closed = [], []
    backend.close = lambda: closed.append(True)

    def factory(context):
        contexts.append(context)
        return backend

    recs, _ = predict(instances(tmp_path, 2), spec, RequestCache(tmp_path / "c.sqlite"), factory, seed=4)
    assert [c.seed for c in contexts] == [4] and closed == [] and len(recs) == 2


def test_a_backend_factory_is_not_called_for_a_run_that_cannot_be_built(tmp_path):
    def factory(context):
        raise AssertionError("the backend must not start for a run that cannot be built")

    with pytest.raises(DataError):
        predict(
            [make_instance("v", modality="video_text")],
            ModelSpec(name="random", backend="random"),
            RequestCache(tmp_path / "c.sqlite"),
            factory,
        )


def test_a_shared_backend_run_counts_only_its_own_retries(tmp_path):
    spec, backend = scripted(GOOD)
    backend.retries, backend.attempts = 5, 7  # what earlier runs on the same backend counted
    _, stats = predict(instances(tmp_path, 1), spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert (stats.retries, stats.attempts) == (0, 0)


def test_records_point_at_the_trace_file_the_caller_names(tmp_path):
    spec, backend = scripted(GOOD)
    bench = get_benchmark("moca")
    records, _, _ = run_method(
        bench,
        bench.method("direct", spec, 1),
        instances(tmp_path, 1),
        spec=spec,
        cache=RequestCache(tmp_path / "c.sqlite"),
        seed=1,
        backend=backend,
        progress=False,
        trace_pointer="results/traces/moca/scripted-model/direct.jsonl",
    )
    assert records[0]["request"]["trace"] == "results/traces/moca/scripted-model/direct.jsonl"


def test_a_part_the_backend_cannot_take_fails_before_any_call(tmp_path, monkeypatch):
    spec, backend = scripted(GOOD)
    monkeypatch.setattr(type(backend), "accepts", frozenset())  # a text-only backend
    with pytest.raises(ConfigError, match=r"models.scripted-model .*request i0/direct/answer: part 1, image"):
        predict(instances(tmp_path, 1), spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert backend.calls == []


def test_a_truncated_answer_is_recorded_with_its_finish_reason(tmp_path):
    spec, backend = scripted(GOOD[:20], finish_reasons={"i0/direct/answer": "length"})
    recs, stats = predict(instances(tmp_path, 1), spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert recs[0]["finish_reason"] == "length" and stats.truncated == 1
    assert recs[0]["error"].startswith("answer truncated at max_tokens")


# ---- multi-round methods --------------------------------------------------------------------
def test_a_chain_runs_round_by_round_with_each_prompt_built_from_the_last_answer(tmp_path):
    spec, backend = scripted('{"answer": "red"}', responses={"toy-test-000/chain/notes": "NOTES-0"})
    records, traces, stats = toy("chain", spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert stats.rounds == 3 and stats.requests == 9
    assert [c["stage"] for c in traces[0]["calls"]] == ["notes", "check", "answer"]
    assert traces[0]["calls"][1]["key"] != traces[1]["calls"][1]["key"]  # the check quoted each one's notes
    assert records[0]["answer"] == "red" and records[1]["answer"] == "red"


def test_every_round_of_all_instances_goes_out_together(tmp_path):
    spec, backend = scripted('{"answer": "red"}')
    toy("chain", spec, RequestCache(tmp_path / "c.sqlite"), backend, n=4)
    stages = [rid.rsplit("/", 1)[1] for rid in backend.calls]
    assert stages == ["notes"] * 4 + ["check"] * 4 + ["answer"] * 4


def test_a_rejected_check_sends_the_chain_back_once_and_the_trace_says_so(tmp_path):
    spec, backend = scripted('{"answer": "red"}', responses={"toy-test-000/chain/check": "REJECTED: too vague"})
    records, traces, stats = toy("chain", spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert [c["stage"] for c in traces[0]["calls"]] == ["notes", "check", "notes2", "check2", "answer"]
    assert traces[0]["trace"] == {"stages": ["notes", "check", "notes2", "check2", "answer"], "revised": True}
    assert [c["stage"] for c in traces[1]["calls"]] == ["notes", "check", "answer"]
    assert stats.rounds == 5


def test_a_trace_records_each_calls_stage_key_text_tokens_and_finish_reason(tmp_path):
    spec, backend = scripted('{"answer": "blue"}')
    _, traces, _ = toy("direct", spec, RequestCache(tmp_path / "c.sqlite"), backend, n=1)
    (call,) = traces[0]["calls"]
    assert set(call) >= {
        "round",
        "stage",
        "request_id",
        "key",
        "text",
        "input_tokens",
        "output_tokens",
        "finish_reason",
    }
    assert (call["stage"], call["text"], call["finish_reason"], len(call["key"])) == (
        "answer",
        '{"answer": "blue"}',
        "stop",
        64,
    )


def test_a_failed_middle_stage_is_the_instances_error_and_the_others_go_on(tmp_path):
    spec, backend = scripted('{"answer": "green"}', fail_ids=["toy-test-001/chain/check"])
    records, _, _ = toy("chain", spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert records[1]["error"] == "stage check: scripted failure" and records[1].get("answer") is None
    assert records[0]["answer"] == "green" and records[2]["answer"] == "green"


def test_a_baseline_that_cannot_follow_a_chain_records_an_error_instead_of_crashing(tmp_path):
    spec = ModelSpec(name="random", backend="random")
    records, _, stats = toy(
        "chain", spec, RequestCache(tmp_path / "c.sqlite"), create_backend(spec, BackendContext(seed=1))
    )
    assert all("answers only requests that list their answer's choices" in r["error"] for r in records)
    assert stats.errors == 3


def test_a_warm_rerun_of_a_chain_makes_no_call(tmp_path):
    cache = RequestCache(tmp_path / "c.sqlite")
    spec, first = scripted('{"answer": "red"}', responses={"toy-test-000/chain/check": "REJECTED: again"})
    toy("chain", spec, cache, first)
    _, second = scripted('{"answer": "red"}', responses={"toy-test-000/chain/check": "REJECTED: again"})
    records, _, stats = toy("chain", spec, cache, second)
    assert second.calls == [] and stats.cache_hits == stats.requests == 11


@pytest.mark.slow
def test_kill_9_in_the_middle_of_a_chain_resumes_without_repeating_a_finished_call(tmp_path):
    n = 6
    cache_path = tmp_path / "cache.sqlite"
    # Each call takes 0.5 s, so round 2 is in flight when the run is killed.
    with LoopbackServer("openai", fault_for=lambda _n, _body: Fault(delay_s=0.5)) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.chain_worker", str(cache_path), srv.url, str(n)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while len(srv.completions()) < 2 * n and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        stage = lambda rec: str(rec.body["messages"][0]["content"])[:5]  # noqa: E731  ("Write" | "Check" | "Answe")
        before = [stage(r) for r in srv.completions()]
        assert before.count("Write") == n and before.count("Check") == n  # round 2 was in flight
        from tests.helpers.chain_worker import run

        records, traces, stats = run(str(cache_path), srv.url, n)
        after = [stage(r) for r in srv.completions()[len(before) :]]
    assert "Write" not in after  # round 1 finished before the kill: replayed from the cache
    assert after.count("Answe") == n and after.count("Check") <= n
    assert stats.cache_hits >= n and len(records) == n
    assert all([c["stage"] for c in t["calls"]] == ["notes", "check", "answer"] for t in traces)


def test_a_methods_run_summary_goes_into_the_run_accounting(tmp_path, monkeypatch):
    from tests.helpers.toybench.methods.chain import Chain

    monkeypatch.setattr(
        Chain,
        "summary",
        lambda self, finals: {"revised": float(sum(f.trace["revised"] for f in finals))},
        raising=False,
    )
    spec, backend = scripted('{"answer": "red"}', responses={"toy-test-000/chain/check": "REJECTED: vague"})
    _, _, stats = toy("chain", spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert stats.method == {"revised": 1.0} and stats.as_dict()["method"] == {"revised": 1.0}


def test_a_method_without_a_summary_leaves_it_empty(tmp_path):
    spec, backend = scripted('{"answer": "red"}')
    _, _, stats = toy("direct", spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert stats.method == {}


def test_a_trace_has_the_same_bytes_whether_its_calls_were_made_or_replayed_from_the_cache(tmp_path):
    from socialbench.core.io import jsonl_text

    cache = RequestCache(tmp_path / "c.sqlite")
    spec, first = scripted('{"answer": "red"}')
    _, made, _ = toy("chain", spec, cache, first)
    _, second = scripted('{"answer": "red"}')
    _, replayed, stats = toy("chain", spec, cache, second)
    assert stats.cache_hits == stats.requests and jsonl_text(made) == jsonl_text(replayed)


# ---- reasoning models and what was sent ---------------------------------------------------------------
WRONG = json.dumps({"mechanism": "mock", "label": "mock", "subject": "subject3", "target": "target1"})


def test_a_json_object_inside_the_reasoning_is_never_the_answer(tmp_path):
    raw = f"<think>First guess: {WRONG}. No, the coach speaks.</think>\n{GOOD}"
    spec, backend = scripted(raw)
    recs, stats = predict(instances(tmp_path, 1), spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert recs[0]["error"] is None and recs[0]["subject"] == recs[0]["slots"]["subject"]["subject0"]
    assert recs[0]["mechanism"] == "expressive aggression"
    assert (stats.reasoning, stats.reasoning_only, stats.truncated) == (1, 0, 0)


def test_the_trace_keeps_the_reasoning_and_the_cache_the_raw_text(tmp_path):
    raw = f"<think>thinking {WRONG}</think>{GOOD}"
    cache = RequestCache(tmp_path / "c.sqlite")
    spec, backend = scripted(raw)
    bench = get_benchmark("moca")
    _, traces, _ = run_method(
        bench,
        bench.method("direct", spec, 1),
        instances(tmp_path, 1),
        spec=spec,
        cache=cache,
        seed=1,
        backend=backend,
        progress=False,
    )
    (call,) = traces[0]["calls"]
    assert (call["text"], call["reasoning"]) == (GOOD, f"thinking {WRONG}")
    assert cache.get(call["key"]).text == raw


def test_a_response_that_is_all_reasoning_is_a_truncated_answer(tmp_path):
    spec, backend = scripted(f"<think>still weighing {WRONG}")
    recs, stats = predict(instances(tmp_path, 1), spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert recs[0]["finish_reason"] == "length" and recs[0]["error"].startswith("answer truncated at max_tokens")
    assert recs[0]["subject"] is None
    assert (stats.truncated, stats.reasoning, stats.reasoning_only) == (1, 1, 1)


def test_every_stage_of_a_chain_gets_its_answer_without_the_reasoning(tmp_path):
    spec, backend = scripted('<think>{"answer": "blue"}</think>{"answer": "red"}')
    records, traces, stats = toy("chain", spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert records[0]["answer"] == "red" and stats.reasoning == stats.requests
    assert all(c["reasoning"] == '{"answer": "blue"}' for c in traces[0]["calls"])


def test_a_call_without_reasoning_has_no_reasoning_in_its_trace(tmp_path):
    spec, backend = scripted('{"answer": "blue"}')
    _, traces, stats = toy("direct", spec, RequestCache(tmp_path / "c.sqlite"), backend, n=1)
    assert "reasoning" not in traces[0]["calls"][0] and stats.reasoning == 0


def test_the_run_records_what_each_request_was_constrained_with(tmp_path):
    spec, backend = scripted(GOOD)
    _, stats = predict(instances(tmp_path, 2), spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert stats.constraints == {"none": 2} and stats.temperature_sent is None
    assert stats.as_dict()["constraints"] == {"none": 2}


def test_json_mode_on_the_anthropic_backend_is_sent_and_recorded_as_the_key_schema(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPBACK_ANTHROPIC_KEY", "sk-ant-loopback-runner")
    with LoopbackServer("anthropic", api_key="sk-ant-loopback-runner") as server:
        options = {"base_url": server.url, "api_key_env": "LOOPBACK_ANTHROPIC_KEY", "timeout": 5}
        spec = ModelSpec(name="claude", backend="anthropic", model_id="claude-test-1", options=options)
        png = write_png(tmp_path / "frame.png")
        insts = [make_instance(f"i{k}", media=[png.path]) for k in range(2)]
        _, stats = predict(insts, spec, RequestCache(tmp_path / "c.sqlite"))
        bodies = [r.body for r in server.completions()]
    assert len(bodies) == 2 and stats.constraints == {"key_schema": 2} and stats.temperature_sent is False
    schema = bodies[0]["output_config"]["format"]["schema"]
    assert schema["required"] == ["mechanism", "label", "subject", "target"]
    assert all("enum" not in v for v in schema["properties"].values())


def test_each_calls_trace_records_the_size_of_every_image_as_sent(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPBACK_ANTHROPIC_KEY", "sk-ant-loopback-runner")
    with LoopbackServer("anthropic", api_key="sk-ant-loopback-runner") as server:
        options = {"base_url": server.url, "api_key_env": "LOOPBACK_ANTHROPIC_KEY", "timeout": 5}
        spec = ModelSpec(name="claude", backend="anthropic", model_id="claude-test-1", options=options)
        png = write_png(tmp_path / "big.png", size=(1000, 700))
        bench = get_benchmark("moca")
        insts = [make_instance("i0", media=[png.path])]
        kw = {"spec": spec, "cache": RequestCache(tmp_path / "c.sqlite"), "seed": 1, "progress": False}
        _, first, _ = run_method(bench, bench.method("direct", spec, 1), insts, **kw)
        _, replayed, _ = run_method(bench, bench.method("direct", spec, 1), insts, **kw)  # from the cache
    assert first[0]["calls"][0]["images_sent"] == [[1000, 700]]  # as the source has it: no 448 downscale
    assert replayed == first


def test_a_backend_that_sends_no_pixels_records_no_image_sizes(tmp_path):
    spec, backend = scripted(GOOD)
    png = write_png(tmp_path / "a.png")
    bench = get_benchmark("moca")
    insts = [make_instance("i0", media=[png.path])]
    _, traces, _ = run_method(
        bench,
        bench.method("direct", spec, 1),
        insts,
        spec=spec,
        cache=RequestCache(tmp_path / "c.sqlite"),
        seed=1,
        backend=backend,
        progress=False,
    )
    assert "images_sent" not in traces[0]["calls"][0]


def test_json_form_names_what_an_answer_to_a_json_request_is():
    from socialbench.core.runner import json_form

    assert json_form(' {"label": "mock"}\n') == "lone_object"
    assert json_form('{"label": "mock"} Explanation: the coach mocks') == "object_then_text"
    assert json_form('```json\n{"label": "mock"}\n```') == "object_inside"
    assert json_form('{"label": "mo') == "no_object" and json_form("[1, 2]") == "no_object"


def test_a_run_on_a_server_that_ignores_json_mode_records_it_and_the_answers_forms(tmp_path):
    """What was sent (constraints), what the backend declares of it (json_enforced: transformers serve
    ignores response_format) and how the answers came out (json_answers)."""
    png = write_png(tmp_path / "frame.png")
    insts = [make_instance(f"i{k}", media=[png.path]) for k in range(3)]
    with LoopbackServer("openai") as server:
        server.scripted = [
            Fault(text=GOOD),
            Fault(text=GOOD + " Explanation: the coach mocks the referee."),
            Fault(text="mock"),
        ]
        spec = ModelSpec(name="served", backend="transformers_serve", model_id="tiny", options={"base_url": server.url})
        _, stats = predict(insts, spec, RequestCache(tmp_path / "c.sqlite"))
        sent = [r.body.get("response_format", {}).get("type") for r in server.completions()]
    assert sent == ["json_object"] * 3 and stats.constraints == {"json_object": 3}  # MoCA direct: JSON mode
    assert stats.json_enforced is False
    assert stats.json_answers == {"lone_object": 1, "object_then_text": 1, "no_object": 1}


def test_a_run_that_sends_no_constraint_records_no_json_enforcement(tmp_path):
    spec, backend = scripted(GOOD)
    _, stats = predict(instances(tmp_path, 2), spec, RequestCache(tmp_path / "c.sqlite"), backend)
    assert stats.json_enforced is None and stats.json_answers == {}
