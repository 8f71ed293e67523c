"""A run that the kill -9 test kills mid-way: the real runner (socialbench.core.runner.run_method) drives
toybench's three-round ``chain`` method against the loopback server, through the request cache.

  python -m tests.helpers.chain_worker CACHE BASE_URL N
"""

from __future__ import annotations

import sys

from socialbench.core.backend import ModelSpec
from socialbench.core.benchmarks import register
from socialbench.core.cache import RequestCache
from socialbench.core.runner import run_method
from tests.helpers.toybench.benchmark import ToyBenchmark, make_instances


def run(cache_path: str, base_url: str, n: int):
    register(ToyBenchmark)
    bench = ToyBenchmark()
    spec = ModelSpec(
        name="m",
        backend="openai_compat",
        model_id="served",
        concurrency=n,
        options={"base_url": base_url, "timeout": 30, "api_key_env": None},
    )
    cache = RequestCache(cache_path)
    try:
        return run_method(
            bench, bench.method("chain", spec, 1), make_instances(n), spec=spec, cache=cache, seed=1, progress=False
        )
    finally:
        cache.close()


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    print("done", flush=True)
