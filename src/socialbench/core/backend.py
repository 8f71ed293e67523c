"""The backend plug-in kind: a registry of :class:`Backend` subclasses, each implementing :meth:`Backend.complete` (a
rendered :class:`Request` in, the raw :class:`Response` out)."""

from __future__ import annotations

import abc
import concurrent.futures as cf
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from socialbench.core.errors import ConfigError
from socialbench.core.hashing import module_sources_sha256
from socialbench.core.plugins import Entry, Registry, sidecar_json


def _keyed(value: dict[str, Any]) -> dict[str, Any]:
    """A key dict without absent-valued entries: a field added later keeps older cache entries valid."""
    return {k: v for k, v in value.items() if v not in (None, (), [], {})}


@dataclass(frozen=True)
class ImagePart:
    """An image (or video frame), identified by content hash; ``view`` labels its camera or panel."""

    path: str
    sha256: str
    timestamp: float | None = None  # seconds into the source video, for sampled frames
    view: str | None = None

    kind: ClassVar[str] = "image"

    def key(self) -> dict[str, Any]:
        # The path is not part of the key: the same bytes elsewhere are the same input.
        key = {"image_sha256": self.sha256, "timestamp": self.timestamp}
        return key if self.view is None else key | {"view": self.view}


@dataclass(frozen=True)
class VideoPart:
    """A video: the clip file (native video) and/or its sampled frames (frame-based models)."""

    path: str | None = None
    sha256: str | None = None
    frames: tuple[ImagePart, ...] = ()
    fps: float | None = None  # the sampling rate the frames were taken at, when uniform in time
    view: str | None = None

    kind: ClassVar[str] = "video"

    def __post_init__(self) -> None:
        if not self.sha256 and not self.frames:
            raise ValueError("a VideoPart needs a file (path and sha256) or sampled frames")

    def key(self) -> dict[str, Any]:
        return _keyed(
            {"video_sha256": self.sha256, "frames": [f.key() for f in self.frames], "fps": self.fps, "view": self.view}
        )


@dataclass(frozen=True)
class AudioPart:
    """An audio track as a WAV file, identified by its content hash."""

    path: str
    sha256: str
    format: str = "wav"

    kind: ClassVar[str] = "audio"

    def key(self) -> dict[str, Any]:
        return {"audio_sha256": self.sha256, "format": self.format}


MediaPart = ImagePart | VideoPart | AudioPart
#: What a message may hold: text and typed media parts, in order.
Part = str | ImagePart | VideoPart | AudioPart


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: tuple[Part, ...]

    def text(self) -> str:
        return "".join(p for p in self.content if isinstance(p, str))

    def media(self) -> list[MediaPart]:
        return [p for p in self.content if not isinstance(p, str)]

    def key(self) -> dict[str, Any]:
        return {"role": self.role, "content": [p if isinstance(p, str) else p.key() for p in self.content]}


@dataclass(frozen=True)
class Decoding:
    """How to decode (``json_schema``: guided; ``json_object``: JSON mode; ``sample``: a repeated sample's number). All
    fields but ``json_keys`` are keyed; ``json_keys`` is sent as a key schema by APIs without JSON-object mode."""

    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    sample: int = 0
    json_schema: dict[str, Any] | None = None
    json_object: bool = False
    json_keys: dict[str, dict[str, Any]] | None = None

    def key(self) -> dict[str, Any]:
        key = {"max_tokens": self.max_tokens, "temperature": self.temperature, "json_schema": self.json_schema}
        return key | _keyed(
            {
                "top_p": self.top_p,
                "stop": list(self.stop),
                "seed": self.seed,
                "sample": self.sample or None,
                "json_object": self.json_object or None,
            }
        )


@dataclass(frozen=True)
class Request:
    """A fully rendered model call. ``task``, in the key, is the structured view for backends that read no prose
    (baselines): ``choices``, ``query`` and ``prior_group``. ``shown`` is what the answer is read against: never sent,
    not in the key."""

    request_id: str  # "<instance id>/<method>/<stage>", unique within a run
    messages: tuple[Message, ...]
    task: dict[str, Any]
    decoding: Decoding = field(default_factory=Decoding)
    shown: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def max_tokens(self) -> int:
        return self.decoding.max_tokens

    @property
    def json_schema(self) -> dict[str, Any] | None:
        return self.decoding.json_schema

    def key(self) -> dict[str, Any]:
        return {"messages": [m.key() for m in self.messages], "task": self.task, "decoding": self.decoding.key()}

    def media(self) -> list[MediaPart]:
        return [p for m in self.messages for p in m.media()]

    def images(self) -> list[ImagePart]:
        """Every image the model sees, video frames included, in order."""
        out: list[ImagePart] = []
        for p in self.media():
            if isinstance(p, ImagePart):
                out.append(p)
            elif isinstance(p, VideoPart):
                out.extend(p.frames)
        return out


#: What a backend sent to constrain an answer's form (``key_schema``: JSON mode, keys fixed, values free).
CONSTRAINTS = ("none", "json_object", "key_schema", "json_schema")

#: What a key schema leaves out: JSON mode fixes keys and value types, not values.
_VALUE_CONSTRAINTS = frozenset(
    {"enum", "const", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "pattern"}
)


def _free(schema: Any) -> Any:
    """``schema`` without :data:`_VALUE_CONSTRAINTS`, at every depth."""
    if isinstance(schema, dict):
        return {k: _free(v) for k, v in schema.items() if k not in _VALUE_CONSTRAINTS}
    return [_free(v) for v in schema] if isinstance(schema, list) else schema


def answer_keys(request: Request) -> dict[str, dict[str, Any]] | None:
    """JSON mode's keys with value types: ``Decoding.json_keys``, else the task's ``keys``/``choices``."""
    if request.decoding.json_keys:
        return {k: _free(v) for k, v in request.decoding.json_keys.items()}
    keys = request.task.get("keys") or [c.get("field") for c in request.task.get("choices") or []]
    if keys and all(isinstance(k, str) and k for k in keys):
        return {k: {"type": "string"} for k in keys}
    return None


def key_schema(request: Request) -> dict[str, Any] | None:
    """JSON mode as a schema for APIs without JSON-object mode: the answer's keys, required, values free."""
    keys = answer_keys(request)
    if not keys:
        return None
    return {"type": "object", "additionalProperties": False, "required": list(keys), "properties": keys}


#: Why generation stopped (``length``: cut at max_tokens; ``no_record``: no recorded answer; None: unsaid).
FINISH_REASONS = ("stop", "length", "error", "refusal", "content_filter", "no_record")


@dataclass
class Response:
    text: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None  # set when the call failed for good; text is then None
    cached: bool = False
    finish_reason: str | None = None
    #: A reasoning model's reasoning, split out of ``text`` (:func:`split_reasoning`); None: none.
    reasoning: str | None = None

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def think_wrapped(reasoning: str | None, text: str) -> str:
    """An answer with its separately returned reasoning put before it in ``<think>`` tags (one text per call)."""
    return f"{THINK_OPEN}{reasoning}{THINK_CLOSE}{text}" if reasoning else text


def split_reasoning(text: str) -> tuple[str, str | None]:
    """(answer, reasoning): ``<think>`` blocks, text before an unopened ``</think>`` and after an unclosed
    ``<think>`` are reasoning, the stripped rest the answer; without tags: (text, None)."""
    if THINK_OPEN not in text and THINK_CLOSE not in text:
        return text, None
    reasoning: list[str] = []
    answer: list[str] = []
    rest = text
    close = rest.find(THINK_CLOSE)
    opened = rest.find(THINK_OPEN)
    if close >= 0 and (opened < 0 or close < opened):
        reasoning.append(rest[:close])
        rest = rest[close + len(THINK_CLOSE) :]
    while True:
        opened = rest.find(THINK_OPEN)
        if opened < 0:
            answer.append(rest)
            break
        answer.append(rest[:opened])
        rest = rest[opened + len(THINK_OPEN) :]
        close = rest.find(THINK_CLOSE)
        if close < 0:
            reasoning.append(rest)
            break
        reasoning.append(rest[:close])
        rest = rest[close + len(THINK_CLOSE) :]
    return "".join(answer).strip(), "\n\n".join(p.strip() for p in reasoning if p.strip())


def without_reasoning(response: Response) -> Response:
    """``response`` with reasoning split out, as every method sees it (JSON inside reasoning is never
    the answer); all reasoning and no answer is truncated (``length``) unless refused or filtered."""
    if response.text is None:
        return response
    answer, reasoning = split_reasoning(response.text)
    if reasoning is None:
        return response
    finish = response.finish_reason
    if not answer and finish not in ("refusal", "content_filter"):
        finish = "length"
    return dataclasses.replace(response, text=answer, reasoning=reasoning, finish_reason=finish)


#: What a model may take besides text (params ``modalities``): images, sampled frames, native video, audio.
MODALITIES = ("image", "frames", "video", "audio")
#: The part kind a backend must carry (``Backend.accepts``) for each modality.
CARRIER = {"image": "image", "frames": "image", "video": "video", "audio": "audio"}


def carried_modalities(accepts: frozenset[str] | set[str]) -> frozenset[str]:
    """Every modality the part kinds ``accepts`` carry (frames wherever images)."""
    return frozenset(m for m in MODALITIES if CARRIER[m] in accepts)


def _taken(takes: frozenset[str]) -> str:
    return "it takes: " + (", ".join(m for m in MODALITIES if m in takes) or "text only")


@dataclass(frozen=True)
class ModelSpec:
    """One entry of ``models:`` in params.yaml."""

    name: str
    backend: str
    category: str = "baseline"
    model_id: str | None = None
    revision: str | None = None
    #: A local model folder to load (``model_id`` then only names it).
    model_path: str | None = None
    #: A GGUF file, converted once into the weights cache (:mod:`socialbench.core.weights`).
    gguf_file: str | None = None
    max_frames: int = 8
    #: Longest image side sent (scaled down, never up); None: as the source (the papers' protocol).
    image_size: int | None = None
    concurrency: int = 1
    max_tokens: int = 4096  # room for a thinking model's reasoning (a cut answer: finish_reason length)
    batch_size: int = 1
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    #: USD per million tokens ``{input, output}``; None: unknown, then the older per-mtok keys count.
    price: dict[str, float] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    #: Media it takes besides text; None: its backend's default.
    modalities: list[str] | None = None
    #: Methods not run, with the reason the tables show; an entry covers the method's variants.
    exclude_methods: dict[str, str] = field(default_factory=dict)
    #: The benchmarks it runs on (None: all).
    benchmarks: list[str] | None = None
    #: Per benchmark, the only runs it makes.
    only_methods: dict[str, list[str]] = field(default_factory=dict)

    def price_per_mtok(self) -> tuple[float, float] | None:
        """(input, output) USD per million tokens, or None when params give no price."""
        if self.price is not None:
            return float(self.price["input"]), float(self.price["output"])
        if self.price_in_per_mtok or self.price_out_per_mtok:
            return float(self.price_in_per_mtok), float(self.price_out_per_mtok)
        return None

    @classmethod
    def from_params(cls, name: str, entry: dict[str, Any]) -> ModelSpec:
        known = {f for f in cls.__dataclass_fields__ if f != "name"}
        unknown = set(entry) - known
        if unknown:
            raise ConfigError(f"models.{name}: unknown key(s) {sorted(unknown)}")
        return cls(name=name, **{k: v for k, v in entry.items()})


@dataclass
class BackendContext:
    """What a backend needs besides its spec: the seed and the dev answers for priors (None: no dev split)."""

    seed: int = 0
    dev_answers: list[dict[str, Any]] | None = None


class Backend(abc.ABC):
    """Base class of all backends; subclasses implement :meth:`complete`."""

    #: The registered name (``backend:`` in params).
    name: ClassVar[str] = ""
    #: Media part kinds carried besides text (a declaration file sets this and the next two).
    accepts: ClassVar[frozenset[str]] = frozenset({"image"})
    #: What a model takes without ``modalities`` in params (None: all it carries).
    default_modalities: ClassVar[frozenset[str] | None] = None
    #: Why it only answers requests listing choices, as tables print it; None: it writes free text.
    choices_only: ClassVar[str | None] = None
    #: True when its own code decides answers: its identity then hashes that code (``behaviour``).
    answers_from_code: ClassVar[bool] = False
    #: With ``answers_from_code``: further modules whose code decides its answers.
    behaviour_modules: ClassVar[tuple[str, ...]] = ()
    #: Whether the sent constraint is enforced in decoding (None: unknown or none sent); recorded per run.
    json_enforced: ClassVar[bool | None] = None
    #: Retries and HTTP attempts so far (the runner records each run's difference).
    retries: int = 0
    attempts: int = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = sidecar_json(cls.__module__, ".declaration.json").get(cls.__name__)
        if declared is not None:  # the declaration file is the one place these are written
            cls.accepts = frozenset(declared["accepts"])
            cls.default_modalities = frozenset(declared["modalities"])
            cls.choices_only = declared.get("choices_only")
            cls.json_enforced = (declared.get("json_mode") or {}).get("enforced")

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        self.spec = spec
        self.context = context or BackendContext()

    @abc.abstractmethod
    def complete(self, request: Request) -> Response:
        """Run one request. Model-side failures return a Response with ``error`` so the run goes on."""

    # ---- optional hooks, with working defaults ------------------------------------------------
    def identity(self) -> dict[str, Any]:
        """What besides the request determines the output; part of every cache key."""
        ident: dict[str, Any] = {
            "backend": self.name,
            "model_id": self.spec.model_id or self.spec.name,
            "revision": self.spec.revision,
        }
        if self.answers_from_code:
            ident["behaviour"] = behaviour_sha256(behaviour_modules(type(self)))
        return ident

    def complete_many(self, requests: Sequence[Request], on_result: Callable[[int, Response], None]) -> None:
        """Run many requests, calling ``on_result(index, response)`` as each finishes (callers persist one by one);
        default: a thread pool of ``spec.concurrency``."""
        workers = max(1, int(self.spec.concurrency))
        if workers == 1:
            for i, req in enumerate(requests):
                on_result(i, self.complete(req))
            return
        with cf.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(self.complete, req): i for i, req in enumerate(requests)}
            for fut in cf.as_completed(futures):
                on_result(futures[fut], fut.result())

    def constraint(self, request: Request) -> str:
        """What is sent to constrain ``request``'s answer form (:data:`CONSTRAINTS`). Default ``none``."""
        return "none"

    def images_sent(self, request: Request) -> list[list[int]] | None:
        """[width, height] of each image sent, after any scaling (recorded in the trace); None: no pixels."""
        return None

    def temperature_sent(self) -> bool | None:
        """Whether the temperature reaches the model (None: no model decodes)."""
        return None

    @property
    def takes(self) -> frozenset[str]:
        """The modalities this model takes: params ``modalities`` or the backend default, within ``accepts``."""
        carried = carried_modalities(self.accepts)
        if self.spec.modalities is not None:
            return frozenset(self.spec.modalities) & carried
        return carried if self.default_modalities is None else self.default_modalities & carried

    def cannot_take(self, part: MediaPart) -> str | None:
        """Why this model cannot take ``part``, or None (a video goes natively where taken, else as frames)."""
        takes = self.takes
        if isinstance(part, VideoPart):
            if "video" in takes and part.sha256:
                return None
            if part.frames and "frames" in takes:
                return None
            if "video" in takes:
                return "a video given only as frames needs a model that takes frames"
            if part.frames:
                return f"video frames are not supported ({_taken(takes)})"
            return f"video as a file (native ingestion) is not supported ({_taken(takes)}); give sampled frames"
        modality = "frames" if isinstance(part, ImagePart) and part.timestamp is not None else part.kind
        if modality not in takes:
            return f"{modality} input is not supported ({_taken(takes)})"
        return None

    def answer_without_call(self, request: Request) -> Response | None:
        """An answer given without a model call (for ``socialbench plan``), or None."""
        return None

    def close(self) -> None:
        """Release processes, servers or GPU memory held."""
        return None

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def behaviour_modules(cls: type[Backend]) -> tuple[str, ...]:
    """Modules whose code decides ``cls``'s answers: its own and its backend bases', then ``behaviour_modules``."""
    names = [c.__module__ for c in cls.__mro__ if isinstance(c, type) and issubclass(c, Backend) and c is not Backend]
    return tuple(dict.fromkeys([*names, *cls.behaviour_modules]))


@functools.cache  # per process: hashing once is enough, the code a process runs does not change under it
def behaviour_sha256(modules: tuple[str, ...]) -> str:
    """One hash over the code of ``modules``, comments and docstrings left out, by content."""
    return module_sources_sha256(modules)


#: The backend registry: name -> (module, class, extra), imported only when used.
BACKENDS: Registry[Backend] = Registry(
    "backend",
    Backend,
    {
        "random": ("socialbench.backends.baselines", "RandomBackend", None),
        "prior": ("socialbench.backends.baselines", "PriorBackend", None),
        "scripted": ("socialbench.backends.scripted", "ScriptedBackend", None),
        "file": ("socialbench.backends.file", "FileBackend", None),
        "hf": ("socialbench.backends.hf", "HFBackend", "hf"),
        "vllm": ("socialbench.backends.vllm_backend", "VllmBackend", "vllm"),
        "transformers_serve": ("socialbench.backends.transformers_serve", "TransformersServeBackend", "serve"),
        "openai_compat": ("socialbench.backends.openai_compat", "OpenAICompatBackend", "openai"),
        "anthropic": ("socialbench.backends.anthropic_backend", "AnthropicBackend", "anthropic"),
        "minilm": ("socialbench.backends.minilm", "MiniLMBackend", "minilm"),
    },
)


def add_source(source: Callable[[], Mapping[str, tuple[str, str]]]) -> None:
    """Ask ``source`` for {name: (module, class)} of unregistered backends (benchmarks contribute theirs)."""
    BACKENDS.add_source(_no_extra(source))


@functools.cache  # one wrapper per source, so adding the same source twice adds it once
def _no_extra(source: Callable[[], Mapping[str, tuple[str, str]]]) -> Callable[[], dict[str, Entry]]:
    return lambda: {name: (module, cls, None) for name, (module, cls) in source().items()}


def register(name: str, module: str, cls_name: str, extra: str | None = None) -> None:
    """Register a backend lazily by import path: ``register("mine", "pkg.mod", "MineBackend", extra="mine")``."""
    BACKENDS.add(name, module, cls_name, extra)


def available_backends() -> list[str]:
    return BACKENDS.names()


def get_backend_class(name: str) -> type[Backend]:
    return BACKENDS.get(name)


def backend_options_schema(name: str) -> dict[str, Any] | None:
    """The JSON schema of backend ``name``'s options (None: unchecked), read without importing it."""
    return BACKENDS.options_schema(name)


def create_backend(spec: ModelSpec, context: BackendContext | None = None) -> Backend:
    return get_backend_class(spec.backend)(spec, context)


def check_requests(backend: Backend, requests: Sequence[Request]) -> None:
    """Refuse, before any call, a part the backend cannot take (a ConfigError naming model, request, part)."""
    for request in requests:
        for i, part in enumerate(request.media()):
            why = backend.cannot_take(part)
            if why:
                view = f" ({part.view})" if getattr(part, "view", None) else ""
                raise ConfigError(
                    f"models.{backend.spec.name} (backend {backend.name}): request {request.request_id}: part {i + 1},"
                    f" {part.kind}{view}: {why}; nothing was called"
                )
