import json

from socialbench.backends.base import ModelSpec
from socialbench.backends.scripted import ScriptedBackend
from socialbench.cache import RequestCache
from socialbench.moca.infer import predict

from tests.conftest import make_instance


def instances(tmp_path, n):
    img = tmp_path / "img.png"
    img.write_bytes(b"\x89PNG image bytes")
    return [make_instance(f"i{k}", media=[str(img)]) for k in range(n)]


def scripted(answer="{}", **options):
    spec = ModelSpec(name="scripted-model", backend="scripted", options={"default": answer, **options})
    return spec, ScriptedBackend(spec)


GOOD = json.dumps({"mechanism": "expressive aggression", "label": "mock", "subject": "subject0", "target": "target0"})


def test_every_instance_gets_a_record_with_raw_and_resolved_fields(tmp_path, taxonomy):
    spec, backend = scripted(GOOD)
    cache = RequestCache(tmp_path / "c.sqlite")
    recs, stats = predict(instances(tmp_path, 3), spec=spec, method="direct", tax=taxonomy, seed=1, cache=cache, backend=backend, progress=False)
    assert [r["id"] for r in recs] == ["i0", "i1", "i2"]
    assert all(r["raw"] == GOOD and r["mechanism"] == "expressive aggression" and r["error"] is None for r in recs)
    assert recs[0]["subject"] == recs[0]["slots"]["subject"]["subject0"]
    assert stats.cache_misses == 3 and stats.cache_hits == 0


def test_rerun_with_no_change_makes_zero_model_calls(tmp_path, taxonomy):
    cache = RequestCache(tmp_path / "c.sqlite")
    insts = instances(tmp_path, 4)
    spec, first = scripted(GOOD)
    predict(insts, spec=spec, method="direct", tax=taxonomy, seed=1, cache=cache, backend=first, progress=False)
    _, second = scripted(GOOD)
    recs, stats = predict(insts, spec=spec, method="direct", tax=taxonomy, seed=1, cache=cache, backend=second, progress=False)
    assert second.calls == [] and stats.cache_hits == 4
    assert all(r["raw"] == GOOD for r in recs)


def test_one_added_instance_costs_one_call(tmp_path, taxonomy):
    cache = RequestCache(tmp_path / "c.sqlite")
    insts = instances(tmp_path, 4)
    spec, first = scripted(GOOD)
    predict(insts[:3], spec=spec, method="direct", tax=taxonomy, seed=1, cache=cache, backend=first, progress=False)
    _, second = scripted(GOOD)
    predict(insts, spec=spec, method="direct", tax=taxonomy, seed=1, cache=cache, backend=second, progress=False)
    assert second.calls == ["i3/direct/answer"]


def test_failed_call_is_recorded_scored_as_error_and_retried_next_run(tmp_path, taxonomy):
    cache = RequestCache(tmp_path / "c.sqlite")
    insts = instances(tmp_path, 2)
    spec, backend = scripted(GOOD, fail_ids=["i1/direct/answer"])
    recs, stats = predict(insts, spec=spec, method="direct", tax=taxonomy, seed=1, cache=cache, backend=backend, progress=False)
    assert recs[1]["error"] == "scripted failure" and recs[1]["label"] is None
    assert stats.errors == 1
    _, again = scripted(GOOD)
    predict(insts, spec=spec, method="direct", tax=taxonomy, seed=1, cache=cache, backend=again, progress=False)
    assert again.calls == ["i1/direct/answer"]  # failures are not cached


def test_changed_image_byte_is_a_cache_miss(tmp_path, taxonomy):
    cache = RequestCache(tmp_path / "c.sqlite")
    insts = instances(tmp_path, 1)
    spec, first = scripted(GOOD)
    predict(insts, spec=spec, method="direct", tax=taxonomy, seed=1, cache=cache, backend=first, progress=False)
    (tmp_path / "img.png").write_bytes(b"\x89PNG image bytez")
    _, second = scripted(GOOD)
    predict(insts, spec=spec, method="direct", tax=taxonomy, seed=1, cache=cache, backend=second, progress=False)
    assert second.calls == ["i0/direct/answer"]


def test_random_backend_is_deterministic_and_valid(tmp_path, taxonomy):
    from socialbench.backends.base import BackendContext, create_backend

    spec = ModelSpec(name="random", backend="random")
    insts = instances(tmp_path, 5)
    runs = []
    for k in range(2):
        cache = RequestCache(tmp_path / f"c{k}.sqlite")
        backend = create_backend(spec, BackendContext(seed=7))
        recs, _ = predict(insts, spec=spec, method="direct", tax=taxonomy, seed=7, cache=cache, backend=backend, progress=False)
        runs.append(recs)
    assert runs[0] == runs[1]
    assert all(r["error"] is None and r["label"] in taxonomy.label_names("intent") for r in runs[0])


def test_prior_backend_answers_the_dev_majority(tmp_path, taxonomy):
    from socialbench.backends.base import BackendContext, create_backend

    dev = [make_instance("d0", label="provoke"), make_instance("d1", label="provoke"), make_instance("d2", label="mock")]
    spec = ModelSpec(name="prior", backend="prior")
    backend = create_backend(spec, BackendContext(seed=1, dev_instances=dev))
    recs, _ = predict(instances(tmp_path, 2), spec=spec, method="direct", tax=taxonomy, seed=1, cache=RequestCache(tmp_path / "c.sqlite"), backend=backend, progress=False)
    assert {r["label"] for r in recs} == {"provoke"}
    assert {r["mechanism"] for r in recs} == {"expressive aggression"}


def test_unknown_method_is_a_socialbench_error_listing_the_known_methods(tmp_path, taxonomy):
    import pytest

    from socialbench.errors import SocialbenchError
    from socialbench.moca.infer import build_requests

    with pytest.raises(SocialbenchError, match=r"unknown method 'cot'; known methods: direct"):
        build_requests(instances(tmp_path, 1), taxonomy, ModelSpec(name="m", backend="random"), "cot", 1)


def test_video_instance_without_frames_stops_the_run_naming_file_record_and_field(tmp_path, taxonomy):
    import pytest

    from socialbench.errors import DataError

    spec, backend = scripted(GOOD)
    insts = instances(tmp_path, 1) + [make_instance("v", modality="video_text", transcript="A: hi")]
    with pytest.raises(DataError) as exc:
        predict(insts, spec=spec, method="direct", tax=taxonomy, seed=1, cache=RequestCache(tmp_path / "c.sqlite"),
                backend=backend, progress=False, source="test.jsonl")  # fmt: skip
    assert (exc.value.path, exc.value.record, exc.value.field) == ("test.jsonl", "v", "frames")
    assert "run socialbench media moca-frames first" in str(exc.value)
    assert backend.calls == []  # no request went out


def test_missing_image_at_inference_is_a_data_error_of_field_media(tmp_path, taxonomy):
    import pytest

    from socialbench.errors import DataError

    spec, backend = scripted(GOOD)
    insts = [make_instance("a", media=[str(tmp_path / "gone.png")])]
    with pytest.raises(DataError) as exc:
        predict(insts, spec=spec, method="direct", tax=taxonomy, seed=1, cache=RequestCache(tmp_path / "c.sqlite"),
                backend=backend, progress=False, source="test.jsonl")  # fmt: skip
    assert (exc.value.path, exc.value.record, exc.value.field) == ("test.jsonl", "a", "media")
    assert "image file not found" in str(exc.value) and "gone.png" in str(exc.value)


def test_bad_instance_stops_the_run_before_the_backend_starts(tmp_path, taxonomy, monkeypatch):
    import pytest

    from socialbench.errors import DataError
    from socialbench.moca import infer as infer_mod

    def no_backend(*a, **k):
        raise AssertionError("the backend must not start for a run that cannot be built")

    monkeypatch.setattr(infer_mod, "create_backend", no_backend)
    spec = ModelSpec(name="random", backend="random")
    with pytest.raises(DataError):
        predict([make_instance("v", modality="video_text")], spec=spec, method="direct", tax=taxonomy, seed=1,
                cache=RequestCache(tmp_path / "c.sqlite"), progress=False)  # fmt: skip


def test_prior_backend_with_an_empty_dev_split_says_it_has_no_records():
    import pytest

    from socialbench.backends.base import BackendContext, create_backend
    from socialbench.errors import ConfigError

    with pytest.raises(ConfigError, match="the dev split has no records"):
        create_backend(ModelSpec(name="prior", backend="prior"), BackendContext(seed=1, dev_instances=[]))
    with pytest.raises(ConfigError, match=r"needs the dev split \(--dev\)"):
        create_backend(ModelSpec(name="prior", backend="prior"), BackendContext(seed=1, dev_instances=None))
