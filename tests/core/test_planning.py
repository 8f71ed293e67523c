"""core/planning.py: a run's calls, cached calls, tokens, cost and wall time, from a replay of the
request cache (pure: a lookup and a method; no backend)."""

from collections.abc import Sequence

from socialbench.core.backend import Decoding, ImagePart, Message, ModelSpec, Request, Response
from socialbench.core.benchmarks import Exchange, Final, Method
from socialbench.core.planning import (
    Budget,
    TokenCounter,
    budget_warnings,
    chars_tokens,
    image_tokens,
    plan_instance,
    run_plan,
    to_markdown,
)


def _request(iid: str, stage: int, text: str = "x" * 40, images: int = 0) -> Request:
    parts = (*[ImagePart(path=f"{i}.png", sha256=f"{i:064d}") for i in range(images)], text)
    return Request(f"{iid}/m/s{stage}", (Message("user", parts),), {}, Decoding(max_tokens=100))


class Chain(Method):
    """A test method: ``stages`` rounds of one call each (min) and up to ``most`` calls (revisions)."""

    stages = 3
    most = 6

    def step(self, instance, rounds: Sequence[Sequence[Exchange]]):
        if instance.get("no_media"):
            return Final(error="media")
        if len(rounds) == self.stages:
            return Final(fields={"answer": rounds[-1][0].response.text})
        return [_request(instance["id"], len(rounds))]

    def call_bounds(self, instance, first):
        return self.stages, self.most


class Single(Method):
    def step(self, instance, rounds):
        return Final(fields={}) if rounds else [_request(instance["id"], 0, images=1)]


def _method(cls):
    return cls(None, ModelSpec(name="m", backend="scripted"), 0)


def _lookup(stored: dict[str, Response]):
    return lambda r: (r.request_id, stored[r.request_id]) if r.request_id in stored else None


def test_token_estimates_are_chars_over_four_plus_patches_per_image():
    assert image_tokens(448) == 256 and chars_tokens("abcde") == 2
    assert TokenCounter()(_request("a", 0, "y" * 400, images=2)) == 100 + 2 * 256


def test_single_call_method_plans_exactly_its_first_round():
    p = plan_instance(_method(Single), {"id": "a"}, _lookup({}), TokenCounter())
    assert (p.calls_min, p.calls_max, p.cached, p.new_min, p.new_max) == (1, 1, 0, 1, 1)


def test_instance_answered_without_a_call_plans_none():
    p = plan_instance(_method(Chain), {"id": "a", "no_media": True}, _lookup({}), TokenCounter())
    assert (p.calls_min, p.calls_max) == (0, 0)


def test_multi_call_method_is_bounded_by_its_call_bounds():
    p = plan_instance(_method(Chain), {"id": "a"}, _lookup({}), TokenCounter())
    assert (p.calls_min, p.calls_max, p.new_min, p.new_max) == (3, 6, 3, 6)


def test_cached_rounds_are_replayed_and_a_finished_instance_plans_no_new_call():
    stored = {f"a/m/s{k}": Response(text="ok", input_tokens=7, output_tokens=2) for k in range(3)}
    p = plan_instance(_method(Chain), {"id": "a"}, _lookup(stored), TokenCounter())
    assert (p.calls_min, p.calls_max, p.cached, p.new_max, p.cached_input) == (3, 3, 3, 0, 21)


def test_an_answer_the_backend_gives_without_a_call_is_a_call_of_the_run_but_never_a_new_one():
    local = lambda r: Response(text=None, error="no record", finish_reason="no_record")  # noqa: E731
    p = plan_instance(_method(Single), {"id": "a"}, _lookup({}), TokenCounter(), local)
    assert (p.calls_min, p.calls_max, p.cached, p.local, p.new_min, p.new_max) == (1, 1, 0, 1, 0, 0)


def test_a_partly_cached_chain_bounds_what_is_left():
    stored = {"a/m/s0": Response(text="ok", input_tokens=7, output_tokens=2)}
    p = plan_instance(_method(Chain), {"id": "a"}, _lookup(stored), TokenCounter())
    assert (p.cached, p.new_min, p.new_max, p.calls_min, p.calls_max) == (1, 2, 5, 3, 6)


def test_row_prices_new_calls_and_unknown_price_is_no_cost():
    plans = [plan_instance(_method(Single), {"id": i}, _lookup({}), TokenCounter()) for i in "ab"]
    common = {"counter_label": "chars/4", "cache_match": "key", "latency_s": 2.0, "concurrency": 2}
    priced = run_plan("b", "m", "single", plans, price=(1.0, 10.0), **common)
    assert priced.new_calls_max == 2 and priced.input_tokens == 2 * (10 + 256) and priced.output_tokens == 200
    assert priced.cost_usd == round((532 * 1.0 + 200 * 10.0) / 1e6, 6) and priced.wall_s == 2.0
    assert run_plan("b", "m", "single", plans, price=None, **common).cost_usd is None


def test_row_calibrates_new_calls_by_the_stored_ones():
    stored = {"a/m/s0": Response(text="ok", input_tokens=1000, output_tokens=5)}
    plans = [plan_instance(_method(Single), {"id": i}, _lookup(stored), TokenCounter()) for i in "ab"]
    row = run_plan(
        "b", "m", "single", plans, counter_label="chars/4", cache_match="key", price=None, latency_s=None, concurrency=1
    )
    assert row.cached == 1 and row.new_calls_max == 1 and row.calibrated
    assert row.input_tokens == 2000 and row.output_tokens == 10 and row.wall_s is None


def test_budgets_warn_per_run_and_for_all_runs():
    plans = [plan_instance(_method(Chain), {"id": i}, _lookup({}), TokenCounter()) for i in "abc"]
    row = run_plan(
        "b", "m", "chain", plans, counter_label="chars/4", cache_match="key", price=None, latency_s=None, concurrency=1
    )
    warnings = budget_warnings([row], Budget(usd=1.0, calls=10, run_calls=12))
    assert any("b/m/chain: up to 18 new calls exceed the budget of 12" in w for w in warnings)
    assert any("all runs: up to 18 new calls exceed the budget of 10" in w for w in warnings)
    assert any("cost is unknown" in w for w in warnings)
    assert row.warnings and "## Warnings" in to_markdown([row], warnings)


def test_a_counter_with_image_sides_counts_each_image_at_its_own_side():
    parts = (ImagePart("a.png", "a" * 64), ImagePart("b.png", "b" * 64))
    req = Request("r", (Message("user", (*parts, "")),), {})
    sides = {"a.png": 56, "b.png": 28}
    counter = TokenCounter(count=lambda _t: 0, image_side=lambda p: sides[p.path])
    assert counter(req) == 4 + 1  # ceil(56/28)^2 + ceil(28/28)^2
