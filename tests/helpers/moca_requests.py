"""Builders of MoCA-shaped requests and a minimal cached run, for the backend and cache tests.

``run_through_cache`` follows the runner's contract (socialbench.moca.infer.run_requests): look every
request up, send only the misses through ``backend.complete_many``, store each response the moment it
arrives. The tests use it to count the model calls a (re)run makes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from socialbench.backends.base import Backend, ImagePart, Message, Request, Response
from socialbench.cache import RequestCache, cache_key
from socialbench.hashing import sha256_file

MECHANISMS = [
    {"name": "expressive aggression", "criterion": "hostility expressed openly through ridicule or insult"},
    {"name": "affective deception", "criterion": "a displayed feeling hides a different felt one"},
]
LABELS = [
    {"name": "mock", "criterion": "ridiculing someone to make them look foolish"},
    {"name": "mitigate", "criterion": "softening a conflict to keep the peace"},
]


def write_png(path: str | Path, size: tuple[int, int] = (48, 36), colour: tuple[int, int, int] = (200, 30, 30),
              timestamp: float | None = None) -> ImagePart:  # fmt: skip
    from PIL import Image

    Image.new("RGB", size, colour).save(path, format="PNG")
    return ImagePart(path=str(path), sha256=sha256_file(path), timestamp=timestamp)


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


def moca_request(i: int, images: Sequence[ImagePart] = (), text: str | None = None, *, max_tokens: int = 64,
                 instance: str | None = None) -> Request:  # fmt: skip
    text = text if text is not None else f"Instance {i}: the coach about the referee: \"a true genius at work\""
    task = {
        "benchmark": "moca",
        "method": "direct",
        "stage": "answer",
        "scenario": "intent",
        "text": text,
        "transcript": None,
        "mechanisms": MECHANISMS,
        "labels": LABELS,
        "subject_slots": {"subject0": "the coach", "subject1": "the fan"},
        "target_slots": {"target0": "the crowd", "target1": "the referee"},
    }
    return Request(
        request_id=f"{instance or f'inst-{i:04d}'}/direct/answer",
        messages=(
            Message("system", ("Classify the implicit social dynamics. Return only a strict JSON object.",)),
            Message("user", (*images, f"Text: {text}\nsubject0: the coach\nsubject1: the fan")),
        ),
        task=task,
        max_tokens=max_tokens,
        temperature=0.0,
        json_schema=answer_schema(),
    )


def run_through_cache(backend: Backend, requests: Sequence[Request], cache: RequestCache, model: str = "m",
                      on_stored=None) -> tuple[list[Response], int]:  # fmt: skip
    """Responses for all requests and the number sent to the backend (the misses)."""
    identity = backend.identity()
    keys = [cache_key(identity, r) for r in requests]
    out: list[Response | None] = [cache.get(k) for k in keys]
    todo = [i for i, r in enumerate(out) if r is None]

    def on_result(j: int, response: Response) -> None:
        i = todo[j]
        out[i] = response
        cache.put(keys[i], identity, requests[i], response, model)
        if on_stored is not None:
            on_stored(i, response)

    if todo:
        backend.complete_many([requests[i] for i in todo], on_result)
    return [r if r is not None else Response(text=None, error="no response") for r in out], len(todo)
