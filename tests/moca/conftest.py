"""What MoCA's tests share: CoDAR's ablations as params.yaml declares them, an image file for instances'
media, and a run on the real runner with the codar_script test double that records every request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from socialbench.core.backend import ModelSpec, create_backend
from socialbench.core.benchmarks import get_benchmark
from socialbench.core.cache import RequestCache
from socialbench.core.runner import run_method

#: Table 5's ablations as params.yaml declares them (moca.ablations: the chain's stages, the table's rows
#: and labels).
ABLATIONS = {
    "wo_step2": {"table": "table5", "label": "w/o Step 2", "stages": ["observer", "conflict", "decoder", "checker"]},
    "wo_steps34": {
        "table": "table5",
        "label": "w/o Step 3&4",
        "stages": ["observer", "query", "context", "decoder", "checker"],
    },
    "wo_step5": {
        "table": "table5",
        "label": "w/o Step 5",
        "stages": ["observer", "query", "context", "conflict", "decoder"],
    },
}
#: Its bytes: the double reads no pixel; the cache keys hash them.
IMAGE_BYTES = b"\x89PNG image bytes"


@pytest.fixture
def image_file(tmp_path) -> Path:
    """An image file for instances' ``media``."""
    img = tmp_path / "img.png"
    img.write_bytes(IMAGE_BYTES)
    return img


def run_with_double(
    insts: list[dict[str, Any]],
    method: str,
    cache: RequestCache,
    settings: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[list[dict], list[dict], dict, list[str], dict[str, Any]]:
    """(records, traces, stats, backend calls, requests by id) of one run of ``method`` with the
    codar_script double (``options``: its options) on the real runner, seed 7."""
    spec = ModelSpec(name="script", backend="codar_script", options=dict(options or {}))
    backend = create_backend(spec)
    seen: dict[str, Any] = {}
    complete = backend.complete

    def recording(request):
        seen[request.request_id] = request
        return complete(request)

    backend.complete = recording
    bench = get_benchmark("moca")
    records, traces, stats = run_method(
        bench,
        bench.method(method, spec, 7, settings),
        insts,
        spec=spec,
        cache=cache,
        seed=7,
        backend=backend,
        progress=False,
    )
    return records, traces, stats, backend.calls, seen
