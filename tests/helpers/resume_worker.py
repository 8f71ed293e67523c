"""A run that the kill -9 test kills mid-way: all requests go out at once to the loopback server;
each response is stored in the cache on arrival and reported on stdout as "stored <index>".

  python -m tests.helpers.resume_worker CACHE BASE_URL N
"""

from __future__ import annotations

import sys

from socialbench.core.backend import ModelSpec, create_backend
from socialbench.core.cache import RequestCache
from tests.helpers.moca_requests import moca_request, run_through_cache


def backend_and_requests(base_url: str, n: int):
    spec = ModelSpec(
        name="m",
        backend="openai_compat",
        model_id="served",
        concurrency=n,
        options={"base_url": base_url, "timeout": 30},
    )
    return create_backend(spec), [moca_request(i) for i in range(n)]


def main(cache_path: str, base_url: str, n: int) -> None:
    backend, requests = backend_and_requests(base_url, n)
    cache = RequestCache(cache_path)
    run_through_cache(backend, requests, cache, on_stored=lambda i, r: print(f"stored {i}", flush=True))
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
