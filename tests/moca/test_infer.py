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
