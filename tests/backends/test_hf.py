"""hf: the real transformers path (AutoProcessor, chat template, images, generate) on a tiny randomly
initialised LLaVA-architecture model built in the test from configs, with a locally trained tokenizer.

The tests import socialbench.backends.hf (torch and transformers) when they run, not at collection:
every xdist worker collects every module, and only one runs these."""

from __future__ import annotations

import dataclasses

import pytest

from socialbench.core.backend import Decoding, Message, ModelSpec, Request, create_backend
from socialbench.core.errors import ConfigError
from tests.helpers.moca_requests import moca_request, write_clip, write_png, write_wav
from tests.helpers.tiny_vlm import TOKENS_PER_IMAGE, build_tiny_llm, build_tiny_vlm


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_vlm(tmp_path_factory.mktemp("tiny-vlm"))


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    d = tmp_path_factory.mktemp("frames")
    return [
        write_png(d / f"f{k}.png", size=(64, 48), colour=(40 * k, 90, 200 - 40 * k), timestamp=k * 0.5)
        for k in range(3)
    ]


def backend_for(model_dir, batch_size=1, **options):
    spec = ModelSpec(
        name="tiny",
        backend="hf",
        model_id=str(model_dir),
        batch_size=batch_size,
        image_size=48,
        options={"device": "cpu", "local_files_only": True, **options},
    )
    return create_backend(spec)


def run(backend, requests):
    got = {}
    backend.complete_many(requests, lambda i, r: got.__setitem__(i, r))
    return [got[i] for i in range(len(requests))]


@pytest.fixture(scope="module")
def backend(tiny_model):
    b = backend_for(tiny_model)
    yield b
    b.close()


def test_generates_text_within_max_tokens(backend, frames):
    resp = backend.complete(moca_request(0, frames[:1], max_tokens=9))
    assert resp.error is None and isinstance(resp.text, str) and 1 <= resp.output_tokens <= 9


def test_each_image_becomes_the_model_s_image_tokens(backend, frames):
    one, three = run(backend, [moca_request(0, frames[:1], max_tokens=2), moca_request(0, frames, max_tokens=2)])
    assert three.input_tokens - one.input_tokens == 2 * TOKENS_PER_IMAGE


def test_text_only_request_works(backend):
    resp = backend.complete(moca_request(1, [], max_tokens=4))
    assert resp.error is None and resp.input_tokens > 0


def test_greedy_decoding_is_deterministic_across_loads(tiny_model, backend, frames):
    req = moca_request(2, frames[:2], max_tokens=8)
    fresh = backend_for(tiny_model)
    assert backend.complete(req).text == fresh.complete(req).text
    fresh.close()


def test_batched_results_match_unbatched(tiny_model, backend, frames):
    reqs = [moca_request(i, frames[: 1 + i % 3], max_tokens=6) for i in range(4)]
    batched = backend_for(tiny_model, batch_size=4)
    assert [r.text for r in run(batched, reqs)] == [r.text for r in run(backend, reqs)]
    batched.close()


def test_a_changed_image_fails_only_its_request(backend, frames, tmp_path):
    part = write_png(tmp_path / "x.png")
    write_png(tmp_path / "x.png", colour=(0, 0, 0))
    bad, good = run(backend, [moca_request(0, [part], max_tokens=2), moca_request(1, frames[:1], max_tokens=2)])
    assert "content hash" in bad.error and good.error is None


def test_model_loads_only_when_a_call_is_needed(tiny_model):
    b = backend_for(tiny_model)
    b.complete_many([], lambda i, r: None)
    assert b.model is None


def test_dtype_is_part_of_the_identity(tiny_model):
    fp32, bf16 = backend_for(tiny_model).identity(), backend_for(tiny_model, dtype="bfloat16").identity()
    assert fp32["dtype"] == "float32" and bf16["dtype"] == "bfloat16" and fp32 != bf16


@pytest.mark.parametrize("model_id", ["/nonexistent/model", "nobody/no-such-model"])
def test_a_model_that_is_neither_a_folder_nor_cached_is_a_config_error(model_id, tmp_path, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))  # an empty cache
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = ModelSpec(name="hfm", backend="hf", model_id=model_id, options={"device": "cpu"})
    with pytest.raises(ConfigError) as exc:
        create_backend(spec).load()
    assert str(exc.value) == (
        f"models.hfm.model_id: {model_id!r} is neither a local folder nor a model in the local"
        " Hugging Face cache (the run is offline)"
    )


def test_a_folder_that_is_not_a_model_is_a_config_error(tmp_path):
    spec = ModelSpec(name="hfm", backend="hf", model_id=str(tmp_path), options={"device": "cpu"})
    with pytest.raises(ConfigError, match="folder without config.json"):
        create_backend(spec).load()


def hub_cache_holding(model_dir, tmp_path, monkeypatch, commit):
    """A local Hugging Face cache (made here) holding model_dir as local-org/tiny-vlm at commit."""
    import shutil

    import huggingface_hub

    repo = tmp_path / "hub" / "models--local-org--tiny-vlm"
    shutil.copytree(model_dir, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


def test_a_model_id_found_in_the_local_hugging_face_cache_loads_offline(tiny_model, tmp_path, monkeypatch, frames):
    hub_cache_holding(tiny_model, tmp_path, monkeypatch, "0" * 40)
    spec = ModelSpec(name="tiny", backend="hf", model_id="local-org/tiny-vlm", image_size=48, options={"device": "cpu"})
    backend = create_backend(spec)
    resp = backend.complete(moca_request(0, frames[:1], max_tokens=3))
    assert resp.error is None and isinstance(resp.text, str)
    backend.close()


def test_an_unpinned_local_model_is_identified_by_its_files(tiny_model, tmp_path):
    import shutil

    copy = tmp_path / "model"
    shutil.copytree(tiny_model, copy)
    spec = ModelSpec(name="tiny", backend="hf", model_id=str(copy), options={"device": "cpu"})
    before = create_backend(spec).identity()["revision"]
    assert before.startswith("files:") and create_backend(spec).identity()["revision"] == before
    (copy / "generation_config.json").write_text('{"do_sample": false}')
    assert create_backend(spec).identity()["revision"] != before
    pinned = ModelSpec(name="tiny", backend="hf", model_id=str(copy), revision="v1", options={"device": "cpu"})
    assert create_backend(pinned).identity()["revision"] == "v1"


def test_an_unpinned_hub_model_is_identified_by_the_commit_its_cache_holds(tiny_model, tmp_path, monkeypatch):
    commit = "1" * 40
    hub_cache_holding(tiny_model, tmp_path, monkeypatch, commit)
    spec = ModelSpec(name="tiny", backend="hf", model_id="local-org/tiny-vlm", options={"device": "cpu"})
    assert create_backend(spec).identity()["revision"] == commit


def test_identity_of_a_model_that_cannot_be_there_is_a_config_error_not_a_traceback(tmp_path):
    # predict() asks for the identity (the cache key) before anything loads.
    spec = ModelSpec(name="hfm", backend="hf", model_id=str(tmp_path / "nowhere" / "model"), options={"device": "cpu"})
    with pytest.raises(ConfigError, match=r"models\.hfm\.model_id"):
        create_backend(spec).identity()


def test_a_model_folder_under_a_dot_cache_folder_is_still_fingerprinted(tiny_model, tmp_path):
    import shutil

    copy = tmp_path / ".cache" / "models" / "m"
    shutil.copytree(tiny_model, copy)
    spec = ModelSpec(name="tiny", backend="hf", model_id=str(copy), options={"device": "cpu"})
    before = create_backend(spec).identity()["revision"]
    (copy / "generation_config.json").write_text('{"do_sample": false}')
    assert create_backend(spec).identity()["revision"] != before


def test_an_unpinned_hub_model_online_is_pinned_to_the_commit_the_hub_names(monkeypatch, tmp_path):
    # Online and not cached: the commit the hub names now goes into the key and the load, so a later
    # run (with the model cached) has the same identity. The hub call is replaced: no network here.
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)

    class Info:
        sha = "2" * 40

    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", lambda self, repo_id, **kw: Info())
    backend = create_backend(ModelSpec(name="q", backend="hf", model_id="org/model", options={"device": "cpu"}))
    assert backend.identity()["revision"] == "2" * 40 and backend.load_kwargs["revision"] == "2" * 40


# ---- parts, decoding and finish reasons (Request v2) ---------------------------------------------
def test_it_takes_images_and_frames_only_and_refuses_audio_before_loading(tiny_model, tmp_path):
    from socialbench.backends.hf import HFBackend

    assert HFBackend.accepts == frozenset({"image"})
    b = backend_for(tiny_model)
    with pytest.raises(
        ConfigError, match=r"models\.tiny \(backend hf\): request inst-0000/direct/answer: part 1, audio"
    ):
        b.complete_many([moca_request(0, [write_wav(tmp_path / "a.wav")])], lambda i, r: None)
    with pytest.raises(ConfigError, match="part 1, video: video as a file"):
        b.complete_many([moca_request(0, [write_clip(tmp_path / "c.mp4")])], lambda i, r: None)
    assert b.model is None  # refused before the model loaded


def test_view_labels_are_text_before_their_images(frames):
    from socialbench.backends.hf import chat_messages
    from socialbench.core.backend import VideoPart

    labelled = dataclasses.replace(frames[0], view="Closeup A")
    video = VideoPart(frames=tuple(frames[1:]), view="Corner")
    content = chat_messages(moca_request(0, [labelled, video]))[1]["content"]
    assert content[:5] == [
        {"type": "text", "text": "[Closeup A]"},
        {"type": "image"},
        {"type": "text", "text": "[Corner]"},
        {"type": "image"},
        {"type": "image"},
    ]
    assert chat_messages(moca_request(0, frames[:1]))[1]["content"][0] == {"type": "image"}  # no view: as before


def test_frames_of_a_video_are_its_images(backend, frames):
    from socialbench.core.backend import VideoPart

    as_video = backend.complete(moca_request(0, [VideoPart(frames=tuple(frames))], max_tokens=2))
    as_images = backend.complete(moca_request(0, frames, max_tokens=2))
    assert as_video.error is None and as_video.input_tokens == as_images.input_tokens


def test_finish_reason_is_length_exactly_when_max_tokens_was_reached_without_eos(backend, frames):
    limits = [m for _ in range(4) for m in (1, 3, 40)]
    responses = run(backend, [moca_request(i, frames[:1], max_tokens=m) for i, m in enumerate(limits)])
    assert all(r.finish_reason in ("stop", "length") for r in responses)
    for r, m in zip(responses, limits):
        assert r.truncated == (r.finish_reason == "length")
        if r.truncated:
            assert r.output_tokens == m, r  # cut at max_tokens...
        if r.output_tokens < m:
            assert r.finish_reason == "stop", r  # ...and an answer that ended before it is complete
    assert any(r.truncated for r in responses)  # a random model does not stop within 1 token


def test_answer_cut_at_eos_at_a_stop_string_or_at_max_tokens(backend):
    from socialbench.core.backend import Decoding

    tok = backend.tokenizer
    ids = tok.encode("subject target scenario", add_special_tokens=False)
    eos = {tok.eos_token_id}
    text, n, finish = backend._answer(ids, eos, Decoding(max_tokens=len(ids)))
    assert (text, n, finish) == ("subject target scenario", len(ids), "length")
    text, n, finish = backend._answer(ids + [tok.eos_token_id, 5], eos, Decoding(max_tokens=len(ids) + 2))
    assert (text, n, finish) == ("subject target scenario", len(ids) + 1, "stop")
    text, n, finish = backend._answer(ids, eos, Decoding(max_tokens=len(ids), stop=("target",)))
    assert text == "subject " and finish == "stop" and n < len(ids)
    text, n, finish = backend._answer(ids, eos, Decoding(max_tokens=len(ids) + 5))
    assert finish == "stop"  # ended before max_tokens (the whole batch stopped)


def test_generate_arguments_follow_the_decoding(backend):
    from socialbench.core.backend import Decoding

    greedy = backend.generate_kwargs(Decoding(max_tokens=5, top_p=0.9, stop=("}",)))
    assert greedy["do_sample"] is False and greedy["top_p"] is None and greedy["max_new_tokens"] == 5
    assert greedy["stop_strings"] == ["}"] and greedy["tokenizer"] is backend.tokenizer
    sampled = backend.generate_kwargs(Decoding(temperature=0.7, top_p=0.9))
    assert (sampled["do_sample"], sampled["temperature"], sampled["top_p"]) == (True, 0.7, 0.9)
    assert "stop_strings" not in sampled


def test_json_mode_requests_share_the_generation_group_of_the_others(backend):
    from socialbench.backends.hf import _generation_group

    keyed = moca_request(0, json_schema=None, json_object=True, json_keys={"answer": {"type": "string"}})
    assert _generation_group(keyed.decoding) == _generation_group(moca_request(1).decoding)
    assert hash(_generation_group(keyed.decoding)) is not None
    assert backend.temperature_sent() is True


def test_the_constraint_recorded_is_the_one_json_mode_applies(tiny_model):
    keyed = moca_request(0, json_schema=None, json_object=True, json_keys={"answer": {"type": "string"}})
    schema = moca_request(0, json_schema={"type": "object"})
    free = moca_request(0, json_schema=None)
    default, keys, off = (backend_for(tiny_model, json_mode=m) for m in ("json_schema", "key_schema", "none"))
    assert [default.constraint(r) for r in (keyed, schema, free)] == ["json_object", "json_schema", "none"]
    assert [keys.constraint(r) for r in (keyed, schema, free)] == ["key_schema", "json_schema", "none"]
    assert [off.constraint(r) for r in (keyed, schema, free)] == ["none", "none", "none"]
    assert off.identity()["json_mode"] == "none" and "json_mode" not in default.identity()


def test_stop_strings_end_generation_and_are_cut_from_the_answer(backend, frames):
    stops = ("e", "a", " ", "o")
    resp = backend.complete(moca_request(0, frames[:1], max_tokens=16, stop=stops))
    assert resp.error is None and not any(s in resp.text for s in stops)
    assert resp.finish_reason == "stop" or resp.output_tokens == 16


def test_sampling_with_a_seed_is_reproducible(backend, frames):
    req = moca_request(3, frames[:1], max_tokens=6, temperature=1.0, top_p=0.9, seed=123)
    assert backend.complete(req).text == backend.complete(req).text


def test_a_generation_failure_has_finish_reason_error(backend, frames, tmp_path):
    part = write_png(tmp_path / "x.png")
    write_png(tmp_path / "x.png", colour=(0, 0, 0))
    assert backend.complete(moca_request(0, [part], max_tokens=2)).finish_reason == "error"


def test_the_sizes_handed_to_the_processor_are_reported_per_request(tiny_model, frames):
    # no model load: the sizes come from the images and params image_size alone
    assert backend_for(tiny_model).images_sent(moca_request(0, frames[:2])) == [[48, 36], [48, 36]]
    spec = ModelSpec(
        name="t", backend="hf", model_id=str(tiny_model), options={"device": "cpu", "local_files_only": True}
    )
    assert create_backend(spec).images_sent(moca_request(0, frames[:1])) == [[64, 48]]  # as the source has it


# ---- a text-only model: chunked prefill and the prefix cache ----------------------------------------
@pytest.fixture(scope="module")
def tiny_llm(tmp_path_factory):
    return build_tiny_llm(tmp_path_factory.mktemp("tiny-llm"))


def text_request(request_id: str, system: str, user: str, max_tokens: int = 6) -> Request:
    return Request(
        request_id=request_id,
        messages=(Message("system", (system,)), Message("user", (user,))),
        task={},
        decoding=Decoding(max_tokens=max_tokens, temperature=0.0),
    )


def llm_backend(model_dir, **options):
    spec = ModelSpec(
        name="tiny-llm",
        backend="hf",
        model_id=str(model_dir),
        modalities=[],
        options={"device": "cpu", "local_files_only": True, "prefill_chunk": 8, **options},
    )
    return create_backend(spec)


SHARED = "You annotate. " + " ".join(f"option {k} means a thing" for k in range(12))


def test_an_answer_is_the_same_whether_its_prompt_prefix_was_kept_or_computed(tiny_llm):
    first, second = text_request("a", SHARED, "the first instance"), text_request("b", SHARED, "another one")
    warm, cold = llm_backend(tiny_llm), llm_backend(tiny_llm)
    warm_answers = run(warm, [first, second])
    cold_answer = run(cold, [second])[0]
    assert warm.prefixes.hits == 1 and warm.prefixes.tokens_reused >= 16
    assert cold.prefixes.hits == 0
    assert warm_answers[1].text == cold_answer.text
    assert warm_answers[1].input_tokens == cold_answer.input_tokens


def test_kept_states_are_bitwise_those_computed_again(tiny_llm):
    import torch

    warm, cold = llm_backend(tiny_llm), llm_backend(tiny_llm)
    warm.load(), cold.load()
    ids = warm.tokenizer(f"{SHARED} and one instance's own text")["input_ids"]
    other = warm.tokenizer(f"{SHARED} and a different text altogether")["input_ids"]
    warm.prefilled(other)
    reused, fresh = warm.prefilled(ids), cold.prefilled(ids)
    assert warm.prefixes.hits == 1
    for a, b in zip(reused.layers, fresh.layers):
        assert torch.equal(a.keys, b.keys) and torch.equal(a.values, b.values)


def test_a_prompt_is_prefilled_in_one_pass_with_prefill_chunk_0(tiny_llm):
    backend = llm_backend(tiny_llm, prefill_chunk=0)
    answers = run(backend, [text_request("a", SHARED, "x"), text_request("b", SHARED, "y")])
    assert all(a.error is None for a in answers)
    assert backend.prefixes.calls == 0 and not backend.prefixes.entries


def test_a_prefill_chunk_other_than_the_default_is_part_of_the_identity(tiny_llm):
    assert "prefill_chunk" not in llm_backend(tiny_llm, prefill_chunk=256).identity()
    assert llm_backend(tiny_llm, prefill_chunk=64).identity()["prefill_chunk"] == 64


def test_shared_chunks_is_the_common_prefix_in_whole_chunks():
    from socialbench.backends.hf import shared_chunks  # torch, transformers: see the module docstring

    assert shared_chunks([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 9], 2) == 4
    assert shared_chunks([1, 2, 3], [1, 2, 3], 2) == 2
    assert shared_chunks([7], [1], 2) == 0


def test_the_prefix_store_drops_the_least_recently_used_to_stay_within_its_limit():
    import torch

    from socialbench.backends.hf import PrefixStore

    def states(n):  # one layer of n tokens: 2 tensors of n float32 values, 8n bytes
        return [(torch.zeros(1, 1, n, 1), torch.zeros(1, 1, n, 1))]

    store = PrefixStore(chunk=2, limit_bytes=8 * 9)
    store.add([1, 2, 3, 4], states(4))
    store.add([5, 6], states(2))
    assert store.longest([1, 2, 3, 4, 9], at_most=4)[1] == 4  # now the most recently used
    store.add([7, 8, 9, 10], states(4))  # 10 tokens over a limit of 9: [5, 6] goes
    assert set(store.entries) == {(1, 2, 3, 4), (7, 8, 9, 10)}
    assert store.longest([5, 6, 1], at_most=2) == (None, 0)
    store.add(list(range(12)), states(12))  # larger than the limit: not kept
    assert store.used == 8 * 8 and len(store.entries) == 2
