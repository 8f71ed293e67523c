"""MeetingToM as a registered benchmark: its methods and their ablation runs
(``<method>__<ablation>``), the baselines and a scripted backend answering its requests through the
real runner, and the prediction records and scores that come out."""

import json

import pytest

from socialbench.core.backend import BackendContext, ModelSpec, create_backend
from socialbench.core.benchmarks import available_benchmarks, get_benchmark
from socialbench.core.cache import RequestCache
from socialbench.core.errors import ConfigError
from socialbench.core.runner import run_method
from socialbench.meetingtom.eval.scoring import score
from socialbench.meetingtom.methods.no_prompt import NoPromptMethod
from tests.meetingtom.eval.test_prompts import MARKERS, make

#: A params section like params.yaml's (copied, so the tests do not read params.yaml).
SECTION = {
    "method_options": {"no_prompt": {"ingestion": "frames"}},
    "ablations": {
        "modality_video": {"table": "modality", "label": "video only", "modality": "video"},
        "modality_utterances": {"table": "modality", "label": "utterances only", "modality": "utterances"},
        "no_markers": {"table": "markers", "label": "discourse markers removed", "remove_markers": True},
        "prior_role": {"table": "priors", "label": "+ role", "priors": ["role"]},
        "prior_phase": {"table": "priors", "label": "+ meeting phase", "priors": ["phase"]},
        "prior_dialogue_act": {"table": "priors", "label": "+ dialogue act", "priors": ["dialogue_act"]},
        "ingest_native": {"table": "ingestion", "label": "native video", "ingestion": "native"},
    },
    "discourse_markers": MARKERS,
}


@pytest.fixture
def bench():
    return get_benchmark("meetingtom")


def task21(n=6, split="test"):
    return [make("task2_1", k=k, gold="ACD"[k % 3], split=split) for k in range(n)]


def run(bench, backend, insts, tmp_path, options=None, dev=None, name="no_prompt", backend_obj=None):
    spec = ModelSpec(name=backend, backend=backend, category="baseline", options=options or {})
    cache = RequestCache(tmp_path / "cache.sqlite")
    try:
        return run_method(
            bench,
            bench.method(name, spec, 7, bench.method_settings(SECTION, name)),
            insts,
            spec=spec,
            cache=cache,
            seed=7,
            dev_instances=dev,
            backend=backend_obj,
            progress=False,
        )
    finally:
        cache.close()


def scripted(options=None):
    """A scripted backend the test holds, to count its calls."""
    spec = ModelSpec(name="scripted", backend="scripted", options=options or {})
    return create_backend(spec, BackendContext(seed=7))


def first_request(bench, run_name, inst):
    (req,) = bench.method(
        run_name, ModelSpec(name="m", backend="scripted"), 7, bench.method_settings(SECTION, run_name)
    ).step(inst, [])
    return req


# ---- registration and run names ------------------------------------------------------------------
def test_meetingtom_is_a_registered_benchmark_with_its_four_methods(bench):
    assert "meetingtom" in available_benchmarks()
    assert bench.method_names() == ["ecot", "naive_cot", "no_prompt", "task_cot"]


def test_an_ablation_run_is_the_methods_own_class_under_the_runs_name(bench):
    # no class is made at run time: the run is an instance of the method's class, named after the run
    from socialbench.core.backend import ModelSpec

    run = bench.method("no_prompt__prior_role", ModelSpec(name="m", backend="random"), seed=1)
    assert type(run) is NoPromptMethod and bench.method_class("no_prompt__prior_role") is NoPromptMethod
    assert run.name == "no_prompt__prior_role" and NoPromptMethod.name == "no_prompt"


def test_an_ablation_run_keeps_its_methods_prompt_hash(bench):
    assert (
        bench.prompt_hash("no_prompt__prior_role", bench.method_settings(SECTION, "no_prompt__prior_role"))
        == bench.prompt_hash("no_prompt", {})
        != bench.prompt_hash("naive_cot", {})
    )


def test_an_ablation_of_an_unknown_method_is_a_config_error(bench):
    with pytest.raises(ConfigError, match="unknown method 'direct'"):
        bench.method_class("direct__prior_role")


def test_an_unknown_ablation_is_a_config_error_naming_it(bench):
    with pytest.raises(
        ConfigError, match="names the ablation 'prior_mood', which meetingtom.ablations does not define"
    ):
        bench.method_settings(SECTION, "no_prompt__prior_mood")


def test_a_methods_settings_are_its_method_options(bench):
    assert bench.method_settings(SECTION, "no_prompt") == {"ingestion": "frames"}


def test_an_ablations_settings_go_over_the_methods_options(bench):
    settings = bench.method_settings(SECTION, "no_prompt__ingest_native")
    assert settings["ingestion"] == "native" and settings["table"] == "ingestion"


def test_removing_markers_brings_the_marker_list(bench):
    assert bench.method_settings(SECTION, "no_prompt__no_markers")["markers"] == MARKERS
    assert "markers" not in bench.method_settings(SECTION, "no_prompt__prior_role")


@pytest.mark.parametrize(
    "name,expected", [("no_prompt__prior_role", ("no_prompt", "prior_role")), ("ecot", ("ecot", "none"))]
)
def test_provenance_names_the_prompt_hash_the_prompting_method_and_the_ablation(bench, name, expected):
    prov = bench.provenance(name, bench.method_settings(SECTION, name))
    assert set(prov) == {"prompt_template_sha256", "prompting", "ablation"}
    assert (prov["prompting"], prov["ablation"]) == expected and prov["prompt_template_sha256"] == bench.prompt_hash(
        expected[0], {}
    )


# ---- what an ablation run asks ---------------------------------------------------------------------
def test_the_video_only_run_gives_no_transcript(bench):
    req = first_request(bench, "no_prompt__modality_video", make(modality="both"))
    text = req.messages[1].text()
    assert len(req.media()) == 1 and "Um, so uh we go" not in text and "(not given)" in text


def test_the_utterances_only_run_gives_no_video(bench):
    req = first_request(bench, "no_prompt__modality_utterances", make(modality="both"))
    assert req.media() == [] and "Um, so uh we go" in req.messages[1].text()


def test_the_no_markers_run_strips_the_markers(bench):
    text = first_request(bench, "no_prompt__no_markers", make()).messages[1].text()
    assert "B: so we go" in text and "Um" not in text and "umbrella and hummus" in text


def test_the_role_run_shows_the_roles(bench):
    assert (
        "A: PM, B: ME, C: UI, D: ID"
        in first_request(bench, "no_prompt__prior_role", make("task2_2")).messages[1].text()
    )


def test_the_phase_run_shows_the_phase(bench):
    assert (
        "decision or closing): opening"
        in first_request(bench, "no_prompt__prior_phase", make("task3_1")).messages[1].text()
    )


def test_the_dialogue_act_run_marks_the_lines(bench):
    assert (
        "] B (inform): Um, so uh we go"
        in first_request(bench, "no_prompt__prior_dialogue_act", make()).messages[1].text()
    )


@pytest.mark.parametrize("name", ["no_prompt", "naive_cot", "task_cot", "ecot"])
def test_a_methods_default_run_shows_no_role_phase_or_act(bench, name):
    text = first_request(bench, name, make("task2_2")).messages[1].text()
    assert not any(s in text for s in ("Participant roles", "Meeting phase", "(inf)", "(el.inf)", "dialogue act"))


def test_an_ablation_runs_request_is_named_after_the_run(bench):
    assert first_request(bench, "no_prompt__prior_role", make()).request_id.endswith("/no_prompt__prior_role/answer")


# ---- runs through the runner ------------------------------------------------------------------------
def test_task1_with_priors_makes_no_call_and_is_recorded_not_evaluated(bench, tmp_path):
    backend = scripted({"default": '{"answer": "A"}'})
    records, _, _ = run(
        bench, "scripted", [make("task1"), make("task2_1")], tmp_path, name="no_prompt__prior_role", backend_obj=backend
    )
    t1 = next(r for r in records if r["task"] == "task1")
    assert backend.calls == ["ami-task2_1-IS1001a.B.you.1/no_prompt__prior_role/answer"]
    assert t1["not_evaluated"].startswith("Task 1 is not evaluated") and t1["error"] is None and t1["answer"] is None


def test_a_default_run_records_no_not_evaluated(bench, tmp_path):
    records, _, _ = run(bench, "scripted", [make("task1")], tmp_path, {"default": '{"answer": "A"}'})
    assert "not_evaluated" not in records[0]


def test_the_video_only_run_on_a_source_without_media_makes_no_call_and_is_not_evaluated(bench, tmp_path):
    backend = scripted({"default": '{"answer": "1"}'})
    inst = make(clip=None)  # an utterances-only source (the real corpus as shared: no video)
    records, _, _ = run(bench, "scripted", [inst], tmp_path, name="no_prompt__modality_video", backend_obj=backend)
    assert backend.calls == [] and records[0]["answer"] is None and records[0]["error"] is None
    assert records[0]["not_evaluated"] == "not evaluated: no video in this source"
    s = score([inst], records, source="p")["task2_1/ami"]
    assert (s["n"], s["n_total"], s["invalid"], s["accuracy"]) == (0, 1, 0, None)


def test_the_video_only_run_of_an_instance_whose_clip_failed_makes_no_call_and_is_invalid(bench, tmp_path):
    backend = scripted({"default": '{"answer": "1"}'})
    inst = make(modality="both", clip=None, clip_problem="window_beyond_end")
    records, _, _ = run(bench, "scripted", [inst], tmp_path, name="no_prompt__modality_video", backend_obj=backend)
    assert backend.calls == [] and records[0]["answer"] is None and records[0]["error"].startswith("media:")


def test_a_reasoning_runs_record_and_trace_keep_the_reasoning(bench, tmp_path):
    inst = make("task2_2")
    raw = f'D frowns.\nFinal answer: {{"answer": "{inst["answer"]}"}}'
    records, traces, _ = run(bench, "scripted", [inst], tmp_path, {"default": raw}, name="ecot")
    assert (records[0]["answer"], records[0]["value"], records[0]["reasoning"]) == (
        inst["answer"],
        "negative",
        "D frowns.",
    )
    assert traces[0]["trace"] == {"reasoning": "D frowns."} and traces[0]["calls"][0]["text"] == raw


def test_a_reasoning_models_think_block_is_taken_out_before_the_answer_is_read(bench, tmp_path):
    inst = make("task2_2")
    wrong = next(o["label"] for o in inst["options"] if o["label"] != inst["answer"])
    raw = f'<think>{{"answer": "{wrong}"}}?</think>{{"reasoning": "D frowns.", "answer": "{inst["answer"]}"}}'
    records, traces, stats = run(bench, "scripted", [inst], tmp_path, {"default": raw}, name="ecot")
    assert records[0]["answer"] == inst["answer"] and stats.reasoning == 1
    assert traces[0]["calls"][0]["reasoning"] == f'{{"answer": "{wrong}"}}?'


def test_the_record_holds_the_gold_label_and_value_for_error_analysis(bench, tmp_path):
    inst = make("task3_2")
    records, _, _ = run(bench, "scripted", [inst], tmp_path, {"default": '{"answer": ["A"]}'})
    rec = records[0]
    assert (
        (rec["gold"], rec["gold_value"]) == (inst["answer"], ["B", "D"])
        and rec["task"] == "task3_2"
        and rec["source"] == "ami"
    )


def test_the_chance_baseline_answers_every_request_with_an_option(bench, tmp_path):
    insts = task21()
    records, _, stats = run(bench, "random", insts, tmp_path)
    assert stats.errors == 0
    for inst, rec in zip(sorted(insts, key=lambda i: i["id"]), records):
        assert rec["error"] is None and rec["answer"] in {o["label"] for o in inst["options"]}


def test_the_prior_baseline_answers_the_dev_splits_most_frequent_value(bench, tmp_path):
    # Task 1's options are shuffled per instance: the prior must count values, not letters.
    dev = [
        make("task1", k=k, split="dev", gold=g) for k, g in enumerate(["hesitation", "hesitation", "focused_listening"])
    ]
    test = [make("task1", k=10 + k) for k in range(6)]
    assert len({i["answer"] for i in test}) > 1  # the same value sits at different letters
    records, _, _ = run(bench, "prior", test, tmp_path, dev=dev)
    assert {r["value"] for r in records} == {"hesitation"} and all(r["error"] is None for r in records)


@pytest.mark.slow  # loads the real MiniLM weights (a few seconds)
def test_the_minilm_baseline_picks_the_participant_whose_words_match_the_question(bench, tmp_path):
    # D answers the question with its own words; A and C say nothing
    from socialbench.meetingtom.dataset.instances import build_task21
    from tests.meetingtom.dataset.test_instances import CAND, EVENT, WORDS

    inst = build_task21(CAND, EVENT, "ABCD", WORDS, None, source="ami", split="test", modality="utterances", seed=7)
    records, _, stats = run(bench, "minilm", [inst], tmp_path)
    assert stats.errors == 0 and records[0]["value"] == "D"


def test_an_invalid_answer_is_recorded_and_scored_wrong(bench, tmp_path):
    insts = task21(2)
    records, traces, _ = run(bench, "scripted", insts, tmp_path, {"default": "I think it is B."})
    assert all(r["answer"] is None and r["error"].startswith("no answer object") for r in records)
    assert traces[0]["calls"][0]["text"] == "I think it is B."
    s = score(insts, records, source="p")["task2_1/ami"]
    assert (s["correct"], s["invalid"]) == (0, 2)


def test_a_right_answer_scores_and_the_record_names_the_participant(bench, tmp_path):
    inst = task21(1)[0]
    records, _, _ = run(bench, "scripted", [inst], tmp_path, {"default": json.dumps({"answer": inst["answer"]})})
    assert records[0]["value"] == inst["addressee"] == "A"
    assert score([inst], records, source="p")["task2_1/ami"]["accuracy"] == 100.0


# ---- dev answers and option values ------------------------------------------------------------------
def test_dev_answers_are_each_tasks_gold_values_without_task3_2(bench):
    dev = [make(t, split="dev") for t in ("task1", "task2_1", "task2_2", "task3_1", "task3_2")]
    assert bench.dev_answers(dev) == [
        {"group": "task1", "answers": {"answer": "hesitation"}},
        {"group": "task2_1", "answers": {"answer": "D"}},
        {"group": "task2_2", "answers": {"answer": "negative"}},
        {"group": "task3_1", "answers": {"answer": "pseudo_consensus"}},
    ]


def test_an_instance_the_recorded_answers_do_not_cover_is_not_evaluated_not_wrong(bench, tmp_path):
    # The human row's file backend answers only the instances it has records for (the demo's).
    answers = tmp_path / "human.jsonl"
    covered, uncovered = task21(2)
    answers.write_text(json.dumps({"id": covered["id"], "answer": covered["answer"]}) + "\n")
    records = run(bench, "file", [covered, uncovered], tmp_path, options={"path": str(answers), "method": "no_prompt"})[
        0
    ]
    recs = {r["id"]: r for r in records}
    assert recs[covered["id"]]["answer"] == covered["answer"] and "not_evaluated" not in recs[covered["id"]]
    assert "no answer for instance" in recs[uncovered["id"]]["not_evaluated"] and recs[uncovered["id"]]["error"] is None
    group = score([covered, uncovered], records, source="p")[f"task2_1/{covered['source']}"]
    assert (group["n"], group["n_total"], group["accuracy"], group["invalid"]) == (1, 2, 100.0, 0)


# ---- check-params renders each run's templates (issue 33, class 7) ----------------------------------------
def with_typo(monkeypatch, run: str, name: str, typo: str = "\n$transcirpt\n") -> None:
    """Run ``run``'s template ``name`` read with ``typo`` added (a package template with a mistake)."""
    from socialbench.meetingtom.benchmark import MeetingToMBenchmark

    real = MeetingToMBenchmark.template

    def template(self, method, file):
        text = real(self, method, file)
        return text + typo if method == run and file == name else text

    monkeypatch.setattr(MeetingToMBenchmark, "template", template)


def test_an_ablation_runs_template_that_cannot_render_is_refused_naming_the_ablation(monkeypatch):
    from tests.meetingtom.conftest import mt_params

    with_typo(monkeypatch, "no_prompt__no_markers", "user.txt")
    with pytest.raises(
        ConfigError,
        match=r"meetingtom\.ablations\.no_markers: template templates/no_prompt/user\.txt:"
        r" placeholder \$transcirpt has no value \(known: answer_format, ",
    ):
        mt_params({**SECTION, "methods": ["no_prompt", "no_prompt__no_markers"]})


def test_a_methods_system_template_with_a_lone_dollar_is_refused_naming_the_method(monkeypatch):
    from tests.meetingtom.conftest import mt_params

    with_typo(monkeypatch, "ecot", "system.txt", "costs $ 5")
    with pytest.raises(ConfigError, match=r"meetingtom\.method_options\.ecot: template templates/ecot/system\.txt: "):
        mt_params({**SECTION, "methods": ["ecot"]})


def test_a_missing_task_guidance_file_is_refused_naming_the_method(monkeypatch):
    from socialbench.meetingtom.benchmark import MeetingToMBenchmark
    from tests.meetingtom.conftest import mt_params

    real = MeetingToMBenchmark.template

    def template(self, method, name):
        if name == "task3_2.txt":
            raise ConfigError(f"benchmark meetingtom: method {method}: template {name} not found")
        return real(self, method, name)

    monkeypatch.setattr(MeetingToMBenchmark, "template", template)
    with pytest.raises(ConfigError, match=r"meetingtom\.method_options\.task_cot: .*template task3_2\.txt not found"):
        mt_params({**SECTION, "methods": ["task_cot"]})


def test_a_run_not_in_methods_is_not_rendered(monkeypatch):
    from tests.meetingtom.conftest import mt_params

    with_typo(monkeypatch, "no_prompt__no_markers", "user.txt")
    mt_params({**SECTION, "methods": ["no_prompt"]})


def test_every_shipped_meetingtom_template_renders_with_the_placeholders_its_methods_fill(repo_root):
    from socialbench.core.benchmarks import template_problem
    from socialbench.meetingtom.schema.methods import TEMPLATE_PLACEHOLDERS

    for path in (repo_root / "src/socialbench/meetingtom/templates").rglob("*.txt"):
        placeholders = TEMPLATE_PLACEHOLDERS.get(path.name)
        if placeholders is not None:
            assert template_problem(path.read_text("utf-8"), str(path), placeholders) is None


def test_the_request_fills_every_placeholder_check_params_renders_with():
    """A template naming every placeholder of TEMPLATE_PLACEHOLDERS renders in a real request: the
    list check-params uses is no wider than what build_request fills."""
    from socialbench.meetingtom.eval.prompts import build_request
    from socialbench.meetingtom.schema.methods import TEMPLATE_PLACEHOLDERS
    from tests.meetingtom.eval.test_prompts import SPEC

    system, user = (" ".join(f"${p}" for p in sorted(TEMPLATE_PLACEHOLDERS[f])) for f in ("system.txt", "user.txt"))
    req = build_request(make(), (system, user, None), SPEC, {}, "no_prompt")
    assert "$" not in req.messages[0].text() + req.messages[1].text()


def test_a_run_removing_markers_reads_the_marker_list_and_no_other_run_does():
    bench = get_benchmark("meetingtom")
    section = {"ablations": {"no_markers": {"remove_markers": True}}, "discourse_markers": ["uh"]}
    assert bench.settings_keys(section, "no_prompt__no_markers")[-1] == "discourse_markers"
    assert "discourse_markers" not in bench.settings_keys(section, "no_prompt")
