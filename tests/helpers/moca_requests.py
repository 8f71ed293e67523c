"""Builders of MoCA-shaped requests and a minimal cached run, for the backend and cache tests.

``run_through_cache`` runs requests through the real runner's call loop (socialbench.core.runner.run_requests):
every request looked up, only the misses sent through ``backend.complete_many``, each response stored
the moment it arrives. The tests use it to count the model calls a (re)run makes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialbench.core.backend import (
    AudioPart,
    Backend,
    Decoding,
    ImagePart,
    Message,
    Part,
    Request,
    Response,
    VideoPart,
)
from socialbench.core.cache import RequestCache, cache_key
from socialbench.core.hashing import sha256_file

MECHANISMS = [
    {"name": "expressive aggression", "criterion": "hostility expressed openly through ridicule or insult"},
    {"name": "affective deception", "criterion": "a displayed feeling hides a different felt one"},
]
LABELS = [
    {"name": "mock", "criterion": "ridiculing someone to make them look foolish"},
    {"name": "mitigate", "criterion": "softening a conflict to keep the peace"},
]


def write_png(
    path: str | Path,
    size: tuple[int, int] = (48, 36),
    colour: tuple[int, int, int] = (200, 30, 30),
    timestamp: float | None = None,
    view: str | None = None,
) -> ImagePart:
    from PIL import Image

    Image.new("RGB", size, colour).save(path, format="PNG")
    return ImagePart(path=str(path), sha256=sha256_file(path), timestamp=timestamp, view=view)


def write_wav(path: str | Path, seconds: float = 0.1, rate: int = 16000) -> AudioPart:
    """A short mono 16-bit WAV (a rising tone) and its part."""
    import math
    import struct
    import wave

    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(
            b"".join(
                struct.pack("<h", int(8000 * math.sin(i * 0.05 * (1 + i / rate)))) for i in range(int(seconds * rate))
            )
        )
    return AudioPart(path=str(path), sha256=sha256_file(path))


def write_clip(path: str | Path, frames: Sequence[ImagePart] = (), view: str | None = None) -> VideoPart:
    """A stand-in clip file (MP4-like bytes, not decodable: backends send clips as they are) and its
    part, with optional sampled frames."""
    Path(path).write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 4)
    return VideoPart(path=str(path), sha256=sha256_file(path), frames=tuple(frames), view=view)


def answer_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["mechanism", "label", "subject", "target"],
        "properties": {
            "mechanism": {"type": "string", "enum": [m["name"] for m in MECHANISMS]},
            "label": {"type": "string", "enum": [m["name"] for m in LABELS]},
            "subject": {"type": "string", "enum": ["subject0", "subject1"]},
            "target": {"type": "string", "enum": ["target0", "target1"]},
        },
    }


def moca_request(
    i: int,
    images: Sequence[Part] = (),
    text: str | None = None,
    *,
    max_tokens: int = 64,
    instance: str | None = None,
    **decoding: Any,
) -> Request:
    """A MoCA direct-answer request with ``images`` (any media parts) before the text; greedy, with
    the answer schema. ``decoding`` sets further :class:`Decoding` fields (top_p, stop, seed, ...)."""
    text = text if text is not None else f'Instance {i}: the coach about the referee: "a true genius at work"'
    task = {
        "benchmark": "moca",
        "method": "direct",
        "stage": "answer",
        "scenario": "intent",
        "prior_group": "intent",
        "query": text,
        "choices": [
            {
                "field": "mechanism",
                "options": [{"value": m["name"], "text": f"{m['name']}: {m['criterion']}"} for m in MECHANISMS],
            },
            {
                "field": "label",
                "options": [{"value": lab["name"], "text": f"{lab['name']}: {lab['criterion']}"} for lab in LABELS],
            },
            {
                "field": "subject",
                "options": [{"value": "subject0", "text": "the coach"}, {"value": "subject1", "text": "the fan"}],
            },
            {
                "field": "target",
                "options": [{"value": "target0", "text": "the crowd"}, {"value": "target1", "text": "the referee"}],
                "distinct_from": "subject",
            },
        ],
    }
    return Request(
        request_id=f"{instance or f'inst-{i:04d}'}/direct/answer",
        messages=(
            Message("system", ("Classify the implicit social dynamics. Return only a strict JSON object.",)),
            Message("user", (*images, f"Text: {text}\nsubject0: the coach\nsubject1: the fan")),
        ),
        task=task,
        decoding=Decoding(**{"max_tokens": max_tokens, "temperature": 0.0, "json_schema": answer_schema(), **decoding}),
    )


def run_through_cache(
    backend: Backend, requests: Sequence[Request], cache: RequestCache, model: str = "m", on_stored=None
) -> tuple[list[Response], int]:
    """Responses for all requests and the number sent to the backend (the misses), through the
    real runner's call loop (``socialbench.core.runner.run_requests``); ``on_stored(index, response)``
    is told of each response the moment the cache has stored it."""
    from socialbench.core.runner import RunStats, run_requests

    if on_stored is not None:
        keys = {cache_key(backend.identity(), r): i for i, r in enumerate(requests)}
        put = cache.put

        def announcing_put(key, identity, request, response, model_name):
            put(key, identity, request, response, model_name)
            on_stored(keys[key], response)

        cache.put = announcing_put
    stats = RunStats()
    responses, _ = run_requests(backend, list(requests), cache, backend.identity(), model, stats, progress=False)
    return responses, stats.cache_misses
