"""MoCA's direct methods (src/socialbench/moca/methods/direct.py: direct, and direct_constrained over the
same class): one answering call per instance, the answer-format policy of params ``moca.answer``
(retries with the note), media that cannot be shown answered without a call. Runs go through the real
runner with the codar_script test double (a scripted backend, not a model)."""

from __future__ import annotations

import pytest

from socialbench.core.backend import ModelSpec
from socialbench.core.benchmarks import Final, get_benchmark
from socialbench.core.cache import RequestCache
from socialbench.core.errors import ConfigError
from socialbench.moca.eval.prompts import slot_maps
from tests.conftest import make_instance
from tests.moca.conftest import run_with_double

BENCH = get_benchmark("moca")
SPEC = ModelSpec(name="m", backend="random")
RETRY_ONCE = {"answer": {"retries": 1}}


@pytest.fixture
def insts(image_file):
    # distinct texts: the double's answers depend on the instance id, the cache key on the content
    return [make_instance(f"i{k}", media=[str(image_file)], text=f"Nice job, genius #{k}.") for k in range(3)]


def run(insts, tmp_path, method="direct", settings=None, **options):
    """(records, traces, stats, backend calls, requests by id) of one run with the codar_script double."""
    return run_with_double(insts, method, RequestCache(tmp_path / f"{method}.sqlite"), settings, options)


def user_text(request):
    return request.messages[1].text()


@pytest.mark.parametrize("method", ["direct", "direct_constrained"])
def test_by_default_an_unparsable_direct_answer_is_not_retried(insts, tmp_path, method):
    records, _, stats, calls, _ = run(insts[:1], tmp_path, method=method, unparsable=[f"i0/{method}/answer"])
    assert calls == [f"i0/{method}/answer"] and records[0]["error"].startswith("unparsable")
    assert stats.method["answer_errors"] == 1.0 and stats.method["invalid_rate"] == 100.0


def test_with_params_retries_an_unparsable_direct_answer_is_asked_again_with_the_note(insts, tmp_path):
    records, _, stats, calls, seen = run(insts[:1], tmp_path, settings=RETRY_ONCE, unparsable=["i0/direct/answer"])
    assert calls == ["i0/direct/answer", "i0/direct/answer.retry1"]
    first, retry = user_text(seen["i0/direct/answer"]), user_text(seen["i0/direct/answer.retry1"])
    assert retry.startswith(first) and "[Format]" in retry and "unparsable" in retry
    assert records[0]["error"] is None and records[0]["format"] == {
        "retries": 1,
        "repairs": ["retry"],
        "ignored_keys": [],
        "last_tuple_kept": None,
    }
    assert (stats.method["format_retries"], stats.method["answers_repaired"]) == (1.0, 1.0)


def test_an_answer_unparsable_after_its_retries_is_the_instances_error(insts, tmp_path):
    unparsable = ["i0/direct/answer", "i0/direct/answer.retry1"]
    records, _, stats, calls, _ = run(insts[:1], tmp_path, settings=RETRY_ONCE, unparsable=unparsable)
    assert calls == unparsable and records[0]["error"].startswith("unparsable")
    assert records[0]["format"] == {"retries": 1, "repairs": [], "ignored_keys": [], "last_tuple_kept": None}
    assert stats.method["answer_errors"] == 1.0


def test_a_failed_call_is_not_asked_again_as_a_format_retry(insts, tmp_path):
    records, _, _, calls, _ = run(insts[:1], tmp_path, settings=RETRY_ONCE, fail_ids=["i0/direct/answer"])
    assert calls == ["i0/direct/answer"] and records[0]["error"] == "scripted failure"


def test_the_direct_record_and_summary_carry_the_answer_format(insts, tmp_path):
    records, _, stats, *_ = run(insts, tmp_path)
    assert all(
        r["format"] == {"retries": 0, "repairs": [], "ignored_keys": [], "last_tuple_kept": None} for r in records
    )
    assert stats.method["answers_repaired"] == 0.0 and stats.method["invalid_rate"] == 0.0


@pytest.mark.parametrize("method", ["direct", "direct_constrained"])
def test_direct_methods_answer_unavailable_media_without_a_call(tmp_path, method):
    inst = make_instance("a", media=[str(tmp_path / "gone.png")])
    out = BENCH.method(method, SPEC, 5).step(inst, [])
    assert isinstance(out, Final) and out.error.startswith("media: image file not found")
    assert out.fields["media_error"].startswith("image file not found") and out.fields["mechanism"] is None
    assert out.fields["slots"] == slot_maps(inst, 5)


def test_a_bad_answer_setting_stops_the_method_before_its_first_call(image_file):
    with pytest.raises(ConfigError, match="code_fence"):
        BENCH.method("direct", SPEC, 0, {"answer": {"code_fence": "lenient"}}).step(
            make_instance("a", media=[str(image_file)]), []
        )


@pytest.mark.parametrize("retries, bounds", [(0, (1, 1)), (2, (1, 3))])
def test_the_planned_calls_are_one_and_at_most_the_retries_more(image_file, retries, bounds):
    method = BENCH.method("direct", SPEC, 0, {"answer": {"retries": retries}})
    inst = make_instance("a", media=[str(image_file)])
    assert method.call_bounds(inst, method.step(inst, [])) == bounds


def test_params_take_prompt_additions_for_the_direct_methods_and_refuse_other_names():
    from socialbench.core.config import validate_params
    from socialbench.core.errors import ConfigError

    ok = {"direct": {"prompt_additions": ["scenario_question"]}, "codar": {"context_uncertainty": True}}
    validate_params({"models": {"r": {"backend": "random"}}, "moca": {"method_options": ok}})
    bad = {"direct_constrained": {"prompt_additions": ["scenario_hint"]}}
    with pytest.raises(
        ConfigError, match=r"moca\.method_options\.direct_constrained\.prompt_additions\.0: 'scenario_hint'"
    ):
        validate_params({"models": {"r": {"backend": "random"}}, "moca": {"method_options": bad}})


@pytest.mark.parametrize("method", ["direct", "direct_constrained"])
def test_the_direct_methods_send_d1s_text_unless_prompt_additions_ask_for_more(insts, tmp_path, method):
    *_, plain = run(insts[:1], tmp_path / "a", method=method)
    *_, added = run(insts[:1], tmp_path / "b", method=method, settings={"prompt_additions": ["scenario_boundary"]})
    assert "Boundary rule:" not in plain[f"i0/{method}/answer"].messages[0].text()
    assert "Boundary rule:" in added[f"i0/{method}/answer"].messages[0].text()
    assert "The scenario is" not in added[f"i0/{method}/answer"].messages[0].text()
