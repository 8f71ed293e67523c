"""What a run will cost before it is made (``socialbench plan``): calls, cached calls, tokens, USD and wall
time per (benchmark, model, run); docs/plan.md says how each is estimated. Each instance is replayed from
the request cache as a resumed run would be (a finished run plans 0 new calls); :meth:`Method.call_bounds`
bounds the rest. Pure: the stage passes a lookup (request -> stored (key, response) or None) and a token
counter (a tokenizer or chars/4, plus :func:`image_tokens`; scaled by the run's stored calls)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from socialbench.core.backend import ImagePart, Request, Response, VideoPart
from socialbench.core.benchmarks import Exchange, Final, Method
from socialbench.core.cache import ReplayMiss

#: A method still asking after this many replayed rounds is left there (the runner stops it too).
MAX_REPLAY_ROUNDS = 64
#: Side of the square patch one image token stands for (Qwen2-VL-style; others within a few %).
IMAGE_PATCH = 28

Lookup = Callable[[Request], "tuple[str, Response] | None"]


def image_tokens(side: int) -> int:
    """Estimated tokens of one image sent at ``side`` pixels (its longest side)."""
    return math.ceil(side / IMAGE_PATCH) ** 2


def chars_tokens(text: str) -> int:
    """The estimate without a tokenizer: one token per four characters."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class TokenCounter:
    """A request's input tokens: text by ``count``, ``per_image`` per image, ``video_frames`` per native video."""

    count: Callable[[str], int] = chars_tokens
    per_image: int = image_tokens(448)
    video_frames: int = 8
    label: str = "chars/4"
    #: Each image's longest side as sent, counted by :func:`image_tokens`; None: ``per_image`` each.
    image_side: Callable[[ImagePart], int] | None = None

    def __call__(self, request: Request) -> int:
        text = "\n".join(m.text() for m in request.messages)
        native = sum(1 for p in request.media() if isinstance(p, VideoPart) and not p.frames)
        images = request.images()
        if self.image_side is None:
            pixels = len(images) * self.per_image
        else:
            pixels = sum(image_tokens(self.image_side(p)) for p in images)
        return self.count(text) + pixels + native * self.video_frames * self.per_image

    def describe(self) -> str:
        if self.image_side is not None:
            return f"{self.label} + ceil(side / {IMAGE_PATCH})^2 per image at its size as sent"
        return f"{self.label} + {self.per_image} per image"


class ReplayCache:
    """A method's cache while a plan replays it: read-only; a search not stored stops the replay (ReplayMiss)."""

    replay_only = True

    def __init__(self, get: Callable[[str], Response | None]):
        self.get = get

    def put(self, *args: Any, **kwargs: Any) -> None:
        raise ReplayMiss("a plan stores nothing")

    def put_record(self, *args: Any, **kwargs: Any) -> None:
        raise ReplayMiss("a plan stores nothing")


@dataclass
class InstancePlan:
    """One instance: calls (fewest, most), stored ones with their tokens (reported and estimated), built but
    unstored ones (``known``) with estimates, and how many more beyond them."""

    calls_min: int = 0
    calls_max: int = 0
    cached: int = 0
    #: Requests answered without a model call (``Backend.answer_without_call``; not stored).
    local: int = 0
    cached_input: int = 0
    cached_output: int = 0
    cached_estimate: int = 0
    known: int = 0
    known_input: int = 0
    known_output: int = 0
    more_min: int = 0
    more_max: int = 0
    more_input_each: float = 0.0
    more_output_each: int = 0

    @property
    def new_min(self) -> int:
        return self.known + self.more_min

    @property
    def new_max(self) -> int:
        return self.known + self.more_max


def plan_instance(
    method: Method,
    instance: dict[str, Any],
    lookup: Lookup,
    counter: TokenCounter,
    local: Callable[[Request], Response | None] | None = None,
) -> InstancePlan:
    """Replay ``instance`` from the cache as far as stored, then bound the rest; ``local`` answers count as calls."""
    out = method.step(instance, [])
    plan = InstancePlan()
    if isinstance(out, Final):
        return plan
    lo, hi = method.call_bounds(instance, out)
    estimates: list[int] = []  # of every request built so far (the mean prices calls not yet built)
    budgets: list[int] = []  # their max_tokens
    rounds: list[list[Exchange]] = []
    while True:
        exchanges = []
        missing: list[Request] = []
        for request in out:
            est = counter(request)
            estimates.append(est)
            budgets.append(request.max_tokens)
            hit = lookup(request)
            if hit is None and local is not None and (answer := local(request)) is not None:
                plan.local += 1
                exchanges.append(Exchange(request, answer, ""))
                continue
            if hit is None:
                missing.append(request)
                plan.known_input += est
                plan.known_output += request.max_tokens
                continue
            key, response = hit
            plan.cached += 1
            plan.cached_input += response.input_tokens
            plan.cached_output += response.output_tokens
            plan.cached_estimate += est
            exchanges.append(Exchange(request, response, key))
        if missing or len(rounds) >= MAX_REPLAY_ROUNDS:
            break
        rounds.append(exchanges)
        try:
            out = method.step(instance, rounds)
        except ReplayMiss:  # the next round needs a search the cache does not hold: its requests unknown
            break
        if isinstance(out, Final):  # every call stored: the run makes no new one
            plan.calls_min = plan.calls_max = plan.cached + plan.local
            return plan
    plan.known = len(missing)
    new_min = max(lo - plan.cached, plan.known, 1)
    new_max = max(hi - plan.cached, new_min)
    plan.more_min, plan.more_max = new_min - plan.known, new_max - plan.known
    plan.more_input_each = sum(estimates) / len(estimates)
    plan.more_output_each = max(budgets)
    plan.calls_min = plan.cached + plan.local + new_min
    plan.calls_max = plan.cached + plan.local + new_max
    return plan


@dataclass
class RunPlan:
    """One (benchmark, model, run); ``new_*``, cost and wall time count the calls still to make."""

    benchmark: str
    model: str
    run: str
    instances: int
    calls_min: int
    calls_max: int
    cached: int
    local: int
    new_calls_min: int
    new_calls_max: int
    input_tokens_min: int
    input_tokens: int
    output_tokens: int
    new_input_tokens: int
    new_output_tokens: int
    cost_usd: float | None
    wall_s: float | None
    token_estimate: str
    calibrated: bool
    cache_match: str
    latency_s: float | None
    concurrency: int
    price: dict[str, float] | None
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_plan(
    benchmark: str,
    model: str,
    run: str,
    plans: Sequence[InstancePlan],
    *,
    counter_label: str,
    cache_match: str,
    price: tuple[float, float] | None,
    latency_s: float | None,
    concurrency: int,
) -> RunPlan:
    """The instances' plans summed into the run's row."""
    summed = ("cached", "cached_input", "cached_output", "cached_estimate", "new_min", "new_max", "known_input")
    cached, cached_in, cached_out, cached_est, new_min, new_max, known_in = (
        sum(getattr(p, f) for p in plans) for f in summed
    )
    if cached:
        # calibrated by the run's stored calls: built requests scaled by stored / estimated tokens,
        # calls not yet built and every output at the stored mean per call
        scale = cached_in / cached_est if cached_est else 1.0
        known = known_in * scale
        more_each = [cached_in / cached] * len(plans)
        out_each = cached_out / cached
        new_out = out_each * new_max
    else:
        known = float(known_in)
        more_each = [p.more_input_each for p in plans]
        new_out = sum(p.known_output + p.more_max * p.more_output_each for p in plans)
    new_in_max = round(known + sum(p.more_max * e for p, e in zip(plans, more_each)))
    new_in_min = round(known + sum(p.more_min * e for p, e in zip(plans, more_each)))
    new_out = round(new_out)
    cost: float | None = 0.0  # nothing to pay, priced or not
    wall: float | None = 0.0
    if new_max:
        cost = None if price is None else round((new_in_max * price[0] + new_out * price[1]) / 1e6, 6)
        wall = None if latency_s is None else round(new_max * latency_s / max(1, concurrency), 1)
    label = "cache" if new_max == 0 else counter_label + (f", scaled by {cached} stored calls" if cached else "")
    return RunPlan(
        benchmark=benchmark,
        model=model,
        run=run,
        instances=len(plans),
        calls_min=sum(p.calls_min for p in plans),
        calls_max=sum(p.calls_max for p in plans),
        cached=cached,
        local=sum(p.local for p in plans),
        new_calls_min=new_min,
        new_calls_max=new_max,
        input_tokens_min=cached_in + new_in_min,
        input_tokens=cached_in + new_in_max,
        output_tokens=cached_out + new_out,
        new_input_tokens=new_in_max,
        new_output_tokens=new_out,
        cost_usd=cost,
        wall_s=wall,
        token_estimate=label,
        calibrated=bool(cached),
        cache_match=cache_match,
        latency_s=None if latency_s is None else round(latency_s, 3),
        concurrency=concurrency,
        price=None if price is None else {"input": price[0], "output": price[1]},
    )


@dataclass
class Budget:
    """params ``plan``: limits on all new calls together and on one run's (None: no limit)."""

    usd: float | None = None
    calls: int | None = None
    run_usd: float | None = None
    run_calls: int | None = None

    @classmethod
    def from_params(cls, section: dict[str, Any] | None) -> Budget:
        s = section or {}
        return cls(s.get("budget_usd"), s.get("budget_calls"), s.get("run_budget_usd"), s.get("run_budget_calls"))


def _over(what: str, calls: int, cost: float | None, max_calls: int | None, max_usd: float | None) -> list[str]:
    out = []
    if max_calls is not None and calls > max_calls:
        out.append(f"{what}: up to {calls} new calls exceed the budget of {max_calls} calls")
    if max_usd is not None:
        if cost is None:
            out.append(f"{what}: the cost is unknown (no price in params), so the budget of ${max_usd:g} is unchecked")
        elif cost > max_usd:
            out.append(f"{what}: up to ${cost:.2f} exceeds the budget of ${max_usd:g}")
    return out


@dataclass(frozen=True)
class Totals:
    calls_min: int
    calls_max: int
    cached: int
    new_calls_min: int
    new_calls_max: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cost_unknown_runs: int
    wall_s: float | None
    wall_unknown_runs: int


def totals(rows: Sequence[RunPlan]) -> Totals:
    """Every row summed; cost and wall time over the rows that know theirs (wall time adds up: an upper bound)."""
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    walls = [r.wall_s for r in rows if r.wall_s is not None]
    summed = ("calls_min", "calls_max", "cached", "new_calls_min", "new_calls_max", "input_tokens", "output_tokens")
    return Totals(
        **{f: sum(getattr(r, f) for r in rows) for f in summed},
        cost_usd=round(sum(costs), 6) if costs else None,
        cost_unknown_runs=len(rows) - len(costs),
        wall_s=round(sum(walls), 1) if walls else None,
        wall_unknown_runs=len(rows) - len(walls),
    )


def budget_warnings(rows: Sequence[RunPlan], budget: Budget) -> list[str]:
    """What exceeds a budget: each run against the run budget (kept on its row), all against the plan's."""
    out = []
    for r in rows:
        if r.new_calls_max == 0:
            continue
        mine = _over(f"{r.benchmark}/{r.model}/{r.run}", r.new_calls_max, r.cost_usd, budget.run_calls, budget.run_usd)
        r.warnings.extend(mine)
        out += mine
    t = totals(rows)
    cost = None if t.cost_unknown_runs else (t.cost_usd or 0.0)
    out += _over("all runs", t.new_calls_max, cost, budget.calls, budget.usd)
    return out


def _num(value: float | int | None, digits: int = 0) -> str:
    return "unknown" if value is None else f"{value:,.{digits}f}"


def _range(lo: int, hi: int) -> str:
    return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"


def to_markdown(rows: Sequence[RunPlan], warnings: Sequence[str], notes: Sequence[str] = ()) -> str:
    """The plan as a Markdown table, its totals, notes and warnings."""
    lines = [
        "# Plan",
        "",
        "| benchmark | model | run | instances | calls | cached | new calls | input tokens | output tokens"
        " | cost USD | wall s | tokens from |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.benchmark} | {r.model} | {r.run} | {r.instances:,} | {_range(r.calls_min, r.calls_max)}"
            f" | {r.cached:,} | {_range(r.new_calls_min, r.new_calls_max)} | {r.input_tokens:,}"
            f" | {r.output_tokens:,} | {_num(r.cost_usd, 2)} | {_num(r.wall_s)} | {r.token_estimate} |"
        )
    t = totals(rows)
    cost = _num(t.cost_usd, 2) + (f" (+ {t.cost_unknown_runs} runs unknown)" if t.cost_unknown_runs else "")
    wall = _num(t.wall_s) + (f" (+ {t.wall_unknown_runs} runs unknown)" if t.wall_unknown_runs else "")
    lines.append(
        f"| **all** | | | | {_range(t.calls_min, t.calls_max)} | {t.cached:,}"
        f" | {_range(t.new_calls_min, t.new_calls_max)} | {t.input_tokens:,} | {t.output_tokens:,}"
        f" | {cost} | {wall} | |"
    )
    lines += [
        "",
        "Calls: exact for a single-call method, fewest-most for a multi-call one; tokens and cost at the most"
        " calls (cost and wall time: new calls only). docs/plan.md says how each is estimated.",
    ]
    lines += [f"\n{n}" for n in notes]
    if warnings:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in warnings]
    return "\n".join(lines) + "\n"
