"""CoDAR's Step 2 retrieval (socialbench.moca.eval.retrieval) on the real runner with the codar_script
test double: the routes decide which entities are looked up, the passages reach the Context
Synthesizer, the trace records what each query retrieved, and a resumed run repeats no search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from socialbench.core.backend import ModelSpec
from socialbench.core.benchmarks import get_benchmark
from socialbench.core.cache import RequestCache
from socialbench.core.errors import ConfigError
from socialbench.core.io import jsonl_text
from socialbench.moca.eval.retrieval import NO_EVIDENCE, RetrievalSettings, queries
from tests.conftest import make_instance
from tests.moca.conftest import IMAGE_BYTES, run_with_double

pytest.importorskip("bm25s")
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def corpus(tmp_path):
    c = tmp_path / "corpus"
    c.mkdir()
    (c / "roles.md").write_text(
        "# Sport\n\nThe referee enforces the rules of a match; fans often mock the referee.\n\n"
        "# Housing\n\nThe landlord owns the rented flat and decides on repairs.\n"
    )
    return c


@pytest.fixture
def insts(image_file):
    return [
        make_instance(
            "i0", scenario="intent", media=[str(image_file)], text='"a true genius at work" (about the referee)'
        ),
        make_instance("i1", scenario="stance", media=[str(image_file)], text='"sure, if you say so" #noted'),
    ]


def run(insts, tmp_path, retrieval=None, cache=None, **options):
    """(traces, requests by id, backend calls) of one codar run with the double (its query names the
    text's hashtag or person, routed ``route``, and its quote, routed model_prior)."""
    settings = {} if retrieval is None else {"retrieval": retrieval}
    cache = cache or RequestCache(tmp_path / "c.sqlite")
    _, traces, _, calls, seen = run_with_double(
        insts, "codar", cache, settings, {"reject_every": 0, "entities": "text", **options}
    )
    return traces, seen, calls


def bm25(corpus, k=2):
    return {"retriever": "bm25", "k": k, "options": {"corpus": str(corpus)}}


def context_prompt(seen, iid):
    return seen[f"{iid}/codar/context"].messages[1].text()


def count_searches(monkeypatch):
    from socialbench.retrievers.bm25 import BM25Retriever

    made = []
    real = BM25Retriever.search

    def counting(self, query, k):
        made.append(query)
        return real(self, query, k)

    monkeypatch.setattr(BM25Retriever, "search", counting)
    return made


def test_a_routed_entity_is_looked_up_once_per_question_and_the_trace_keeps_what_came_back(insts, tmp_path, corpus):
    traces, *_ = run(insts[:1], tmp_path, bm25(corpus), route="hybrid")
    (step,) = traces[0]["trace"]["retrieval"]
    assert [r["entity"] for r in step["retrieved"]] == ["the referee", "the referee"]
    first = step["retrieved"][0]
    assert first["query"] == "Which background knowledge explains the referee?" and first["k"] == 2
    assert first["passages"][0]["doc_id"] == "roles.md#1" and first["passages"][0]["title"] == "Sport"
    assert step["status"] == "retrieved" and step["route"] == "retriever:bm25"


def test_a_model_prior_entity_is_never_looked_up(insts, tmp_path, corpus):
    traces, *_ = run(insts[:1], tmp_path, bm25(corpus), route="hybrid")
    (step,) = traces[0]["trace"]["retrieval"]
    assert {"name": "a true genius at work", "route": "model_prior"} in step["requested"]
    assert all(r["entity"] != "a true genius at work" for r in step["retrieved"])


def test_when_every_route_is_model_prior_no_search_is_made(insts, tmp_path, corpus, monkeypatch):
    made = count_searches(monkeypatch)
    traces, seen, _ = run(insts[:1], tmp_path, bm25(corpus), route="model_prior")
    (step,) = traces[0]["trace"]["retrieval"]
    assert made == [] and step["retrieved"] == [] and step["status"] == "all_model_prior"
    assert f"Retrieved evidence: {NO_EVIDENCE}" in context_prompt(seen, "i0")


def test_the_passages_reach_the_context_synthesizer_each_once(insts, tmp_path, corpus):
    _, seen, _ = run(insts[:1], tmp_path, bm25(corpus), route="web_search")
    prompt = context_prompt(seen, "i0")
    line = (
        "- [the referee] The referee enforces the rules of a match; fans often mock the referee. (source: roles.md#1)"
    )
    assert prompt.count(line) == 1


def test_a_search_that_finds_nothing_says_so_and_the_context_answers_from_model_prior(insts, tmp_path, corpus):
    traces, seen, _ = run(insts[1:], tmp_path, bm25(corpus), route="hybrid")  # #noted: not in the corpus
    (step,) = traces[0]["trace"]["retrieval"]
    assert step["status"] == "nothing_found" and all(r["passages"] == [] for r in step["retrieved"])
    assert f"Retrieved evidence: {NO_EVIDENCE}" in context_prompt(seen, "i1")


def test_a_resumed_run_repeats_no_search_and_writes_the_same_traces(insts, tmp_path, corpus, monkeypatch):
    made = count_searches(monkeypatch)
    first, *_ = run(insts, tmp_path, bm25(corpus), route="hybrid")
    n = len(made)
    again, _, calls = run(insts, tmp_path, bm25(corpus), route="hybrid", cache=RequestCache(tmp_path / "c.sqlite"))
    assert n == 4 and len(made) == n and calls == []
    assert jsonl_text(again) == jsonl_text(first)


def test_none_keeps_the_trace_without_retrieved_as_before_retrievers(insts, tmp_path):
    traces, seen, _ = run(insts[:1], tmp_path, {"retriever": "none"}, route="web_search")
    (step,) = traces[0]["trace"]["retrieval"]
    assert "retrieved" not in step and step["status"] == "no_retriever" and step["retriever"] is None
    assert f"Retrieved evidence: {NO_EVIDENCE}" in context_prompt(seen, "i0")


def test_none_gives_the_same_bytes_as_a_method_built_without_retrieval_settings(insts, tmp_path):
    explicit, *_ = run(insts, tmp_path / "a", {"retriever": "none"}, route="hybrid")
    absent, *_ = run(insts, tmp_path / "b", None, route="hybrid")
    assert jsonl_text(explicit) == jsonl_text(absent)


def test_the_papers_web_search_without_a_key_stops_before_any_call(insts, tmp_path, monkeypatch):
    monkeypatch.delenv("BRAVE_SEARCH_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="moca.retrieval: retriever web needs a Brave Search API key"):
        run(insts, tmp_path, {}, route="hybrid")  # {}: the params defaults (retriever web)


def test_an_ablation_without_step_2_makes_no_retriever(insts, tmp_path, monkeypatch):
    monkeypatch.delenv("BRAVE_SEARCH_API_KEY", raising=False)
    settings = {"stages": ["observer", "conflict", "decoder", "checker"], "retrieval": {}}
    # the wo_step2 ablation's run: its own templates fit its stages (the method's checker offers breakpoint 2)
    spec = ModelSpec(name="m", backend="codar_script")
    method = get_benchmark("moca").method("codar__wo_step2", spec, 1, settings)
    assert method.retriever is None


@pytest.mark.parametrize(
    "config, words",
    [
        ({"k": 0}, "moca.retrieval.k: expected a whole number from 1 to 20"),
        ({"retriever": "bm25", "top": 3}, "moca.retrieval: unknown key(s) ['top']"),
        ({"options": {"api_key": "sk-123"}}, "moca.retrieval.options.api_key: looks like a secret"),
    ],
)
def test_bad_retrieval_settings_are_a_config_error_naming_the_key(config, words):
    with pytest.raises(ConfigError) as err:
        RetrievalSettings.parse(config)
    assert words in str(err.value) and "sk-123" not in str(err.value)


def test_only_the_methods_that_retrieve_get_the_retrieval_settings():
    bench = get_benchmark("moca")
    section = {"retrieval": {"retriever": "none"}, "ablations": {}}
    assert bench.method_settings(section, "codar")["retrieval"] == {"retriever": "none"}
    assert "retrieval" not in bench.method_settings(section, "direct")


def test_a_question_that_names_the_entity_is_the_query_itself():
    q = {
        "entities": [{"name": "#noted", "route": "web_search"}, {"name": "x", "route": "model_prior"}],
        "questions": ["What does #noted signal?", "Which norms apply?"],
    }
    assert [x.text for x in queries(q)] == ["What does #noted signal?", "#noted: Which norms apply?"]


def test_the_demo_corpus_answers_the_demos_entities():
    from socialbench.core.retrieval import create_retriever

    r = create_retriever("bm25", {"corpus": str(REPO / "data" / "corpus" / "moca_demo")})
    for entity in ("#mondaymood", "#justsaying", "the landlord", "the fans of the rival team"):
        hits = r.search(f"Which background knowledge explains {entity}?", 1)
        assert hits and entity.lstrip("#").split()[-1] in json.dumps(hits[0].as_dict()).lower()


def test_infer_without_the_web_search_key_stops_before_any_run(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from socialbench.cli import app

    monkeypatch.delenv("BRAVE_SEARCH_API_KEY", raising=False)
    inst = tmp_path / "i.jsonl"
    inst.write_text(json.dumps(make_instance("x-0", media=[str(tmp_path / "img.png")])) + "\n")
    (tmp_path / "img.png").write_bytes(IMAGE_BYTES)
    params = tmp_path / "params.yaml"
    params.write_text(
        "seed: 3\nmodels:\n  r: {backend: codar_script}\nmoca: {methods: [direct, codar]}\n"
        f"cache: {{path: {tmp_path / 'c.sqlite'}}}\n"
    )
    args = ["infer", "--benchmark", "moca", "--instances", str(inst), "--params", str(params), "--no-progress"]
    res = CliRunner().invoke(
        app,
        [*args, "--model", "r", "--method", "direct", "--method", "codar", "--results-dir", str(tmp_path / "results")],
    )
    assert res.exit_code != 0 and "BRAVE_SEARCH_API_KEY" in str(res.exception)
    assert not (tmp_path / "results").exists() and not (tmp_path / "c.sqlite").exists()


@pytest.mark.parametrize(
    "text, names",
    [
        ('"a true genius at work" (about the referee)', ["the referee", "a true genius at work"]),
        ('"whatever, next topic" #justsaying', ["#justsaying", "whatever, next topic"]),
    ],
)
def test_the_doubles_text_entities_are_the_hashtag_or_person_then_the_quote(text, names):
    from socialbench.moca.eval.testing import text_entities

    got = text_entities(f"Text: {text}\nExplicit perception: x", "hybrid")
    assert [e["name"] for e in got] == names and [e["route"] for e in got] == ["hybrid", "model_prior"]
