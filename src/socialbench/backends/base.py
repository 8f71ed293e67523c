"""The backend plug-in kind: one base class, one abstract method, a registry by name.

A backend turns a rendered :class:`Request` into a :class:`Response` holding the model's raw text.
Everything else (prompt rendering, caching, parsing, scoring) lives outside backends, so adding a
backend is one module with one subclass that implements :meth:`Backend.complete`.
"""

from __future__ import annotations

import abc
import concurrent.futures as cf
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Sequence

from socialbench.errors import ConfigError, MissingDependency


@dataclass(frozen=True)
class ImagePart:
    """One image (or one video frame) given to the model, identified by its content hash."""

    path: str
    sha256: str
    timestamp: float | None = None  # seconds into the source video, for sampled frames

    def key(self) -> dict[str, Any]:
        # The path is not part of the key: the same bytes elsewhere are the same input.
        return {"image_sha256": self.sha256, "timestamp": self.timestamp}


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: tuple[str | ImagePart, ...]

    def text(self) -> str:
        return "".join(p for p in self.content if isinstance(p, str))

    def images(self) -> list[ImagePart]:
        return [p for p in self.content if isinstance(p, ImagePart)]

    def blocks(self, image_block: Callable[[ImagePart], dict[str, Any]]) -> list[dict[str, Any]]:
        """The content as a list of wire-format blocks: ``{"type": "text", ...}`` for text (empty
        strings dropped) and ``image_block(part)`` for each image, in order."""
        return [
            {"type": "text", "text": p} if isinstance(p, str) else image_block(p)
            for p in self.content
            if not (isinstance(p, str) and not p)
        ]

    def key(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "content": [p if isinstance(p, str) else p.key() for p in self.content],
        }


@dataclass(frozen=True)
class Request:
    """A fully rendered model call.

    ``task`` carries the structured view of the same call (scenario, option lists with criteria,
    slot ids, instance text) for backends that do not read prose, such as the chance and prior
    baselines and the embedding baseline. It is part of the cache key.
    """

    request_id: str  # "<instance id>/<method>/<stage>", unique within a run
    messages: tuple[Message, ...]
    task: dict[str, Any]
    max_tokens: int = 256
    temperature: float = 0.0
    json_schema: dict[str, Any] | None = None

    def key(self) -> dict[str, Any]:
        return {
            "messages": [m.key() for m in self.messages],
            "task": self.task,
            "decoding": {
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
                "json_schema": self.json_schema,
            },
        }

    def images(self) -> list[ImagePart]:
        return [img for m in self.messages for img in m.images()]


@dataclass
class Response:
    text: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None  # set when the call failed for good; text is then None
    cached: bool = False


@dataclass(frozen=True)
class ModelSpec:
    """One entry of ``models:`` in params.yaml."""

    name: str
    backend: str
    category: str = "baseline"
    model_id: str | None = None
    revision: str | None = None
    max_frames: int = 8
    image_size: int = 448
    concurrency: int = 1
    max_tokens: int = 256
    batch_size: int = 1
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_params(cls, name: str, entry: dict[str, Any]) -> "ModelSpec":
        known = {f for f in cls.__dataclass_fields__ if f != "name"}
        unknown = set(entry) - known
        if unknown:
            raise ConfigError(f"models.{name}: unknown key(s) {sorted(unknown)}")
        return cls(name=name, **{k: v for k, v in entry.items()})


@dataclass
class BackendContext:
    """What a backend may need besides its spec: the run seed and the dev split (for priors)."""

    seed: int = 0
    dev_instances: list[dict[str, Any]] | None = None


class Backend(abc.ABC):
    """Base class of all backends. Subclasses implement :meth:`complete` and nothing else is required."""

    #: Name under which the backend is registered (``backend:`` in params.yaml).
    name: ClassVar[str] = ""

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        self.spec = spec
        self.context = context or BackendContext()

    @abc.abstractmethod
    def complete(self, request: Request) -> Response:
        """Run one request and return the raw response. Raise nothing for model-side failures:
        return a Response with ``error`` set instead, so the run goes on."""

    # ---- optional hooks, with working defaults ------------------------------------------------
    def identity(self) -> dict[str, Any]:
        """What, besides the request, determines the output; part of every cache key."""
        return {
            "backend": self.name,
            "model_id": self.spec.model_id or self.spec.name,
            "revision": self.spec.revision,
        }

    def complete_many(
        self,
        requests: Sequence[Request],
        on_result: Callable[[int, Response], None],
    ) -> None:
        """Run many requests, calling ``on_result(index, response)`` as each finishes, so callers
        can persist results one by one. Default: a thread pool bounded by ``spec.concurrency``.
        Backends that batch (``hf``) or run async clients override this."""
        workers = max(1, int(self.spec.concurrency))
        if workers == 1:
            for i, req in enumerate(requests):
                on_result(i, self.complete(req))
            return
        with cf.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(self.complete, req): i for i, req in enumerate(requests)}
            for fut in cf.as_completed(futures):
                on_result(futures[fut], fut.result())

    def close(self) -> None:
        """Release processes, servers or GPU memory held by the backend."""

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- registry ---------------------------------------------------------------------------------
# name -> (module, class, extra to install). Modules are imported only when the backend is used,
# so the optional dependencies of one backend never burden another.
_BUILTIN: dict[str, tuple[str, str, str | None]] = {
    "random": ("socialbench.backends.baselines", "RandomBackend", None),
    "prior": ("socialbench.backends.baselines", "PriorBackend", None),
    "scripted": ("socialbench.backends.scripted", "ScriptedBackend", None),
    "hf": ("socialbench.backends.hf", "HFBackend", "hf"),
    "vllm": ("socialbench.backends.vllm_backend", "VllmBackend", "vllm"),
    "openai_compat": ("socialbench.backends.openai_compat", "OpenAICompatBackend", "openai"),
    "anthropic": ("socialbench.backends.anthropic_backend", "AnthropicBackend", "anthropic"),
    "minilm": ("socialbench.backends.minilm", "MiniLMBackend", "minilm"),
}
_REGISTERED: dict[str, type[Backend]] = {}


def register(name: str, module: str | None = None, cls_name: str | None = None, extra: str | None = None):
    """Register a backend. As a class decorator: ``@register("mine")``. Lazily, by import path:
    ``register("mine", "pkg.mod", "MineBackend", extra="mine")``."""
    if module is not None:
        if cls_name is None:
            raise ValueError("register(name, module, cls_name): cls_name is required with module")
        _BUILTIN[name] = (module, cls_name, extra)
        return None

    def deco(cls: type[Backend]) -> type[Backend]:
        cls.name = name
        _REGISTERED[name] = cls
        return cls

    return deco


def available_backends() -> list[str]:
    return sorted(set(_BUILTIN) | set(_REGISTERED))


def get_backend_class(name: str) -> type[Backend]:
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in _BUILTIN:
        raise ConfigError(f"unknown backend {name!r}; available: {', '.join(available_backends())}")
    module, cls_name, extra = _BUILTIN[name]
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        hint = f"pip install 'socialbench[{extra}]'" if extra else "reinstall socialbench"
        raise MissingDependency(
            f"backend {name!r} needs a package that is not installed ({exc.name or exc}); install it with: {hint}"
        ) from exc
    cls = getattr(mod, cls_name)
    cls.name = name
    return cls


def create_backend(spec: ModelSpec, context: BackendContext | None = None) -> Backend:
    return get_backend_class(spec.backend)(spec, context)
