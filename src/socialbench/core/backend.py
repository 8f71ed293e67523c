"""The backend plug-in kind: one base class, one abstract method, a registry by name.

A backend turns a rendered :class:`Request` into a :class:`Response` holding the model's raw text.
Everything else (prompt rendering, caching, parsing, scoring) lives outside backends, so adding a
backend is one module with one subclass that implements :meth:`Backend.complete`.
"""

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
    """A key dict without the entries at their "absent" value (None, empty, 0 sample): a field added
    to a part or to the decoding never changes the key of a request that does not use it, so cache
    entries made before it was added stay valid."""
    return {k: v for k, v in value.items() if v not in (None, (), [], {})}


@dataclass(frozen=True)
class ImagePart:
    """One image (or one video frame) given to the model, identified by its content hash.
    ``view`` labels the camera or panel it shows (``"Closeup A"``, ``"Corner"``)."""

    path: str
    sha256: str
    timestamp: float | None = None  # seconds into the source video, for sampled frames
    view: str | None = None

    kind: ClassVar[str] = "image"

    def key(self) -> dict[str, Any]:
        # The path is not part of the key: the same bytes elsewhere are the same input.
        key = {"image_sha256": self.sha256, "timestamp": self.timestamp}
        if self.view is not None:
            key["view"] = self.view
        return key


@dataclass(frozen=True)
class VideoPart:
    """A video: the clip file itself (``path``/``sha256``, for models that take native video) and/or
    its sampled frames with timestamps (``frames``, for frame-based models). A backend that takes
    video reads the file when there is one; one that takes images only cannot take this part."""

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

    def images(self) -> list[ImagePart]:
        return [p for p in self.content if isinstance(p, ImagePart)]

    def key(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "content": [p if isinstance(p, str) else p.key() for p in self.content],
        }


@dataclass(frozen=True)
class Decoding:
    """How to decode, as one value; every field is part of the cache key (fields at their absent
    value are left out of it, see :func:`_keyed`).

    ``json_schema`` constrains the answer to a schema (guided decoding where the backend has it);
    ``json_object`` asks for a JSON object without constraining its values (JSON mode).
    ``sample`` numbers repeated samples of the same request (0 = the first), so each has its own
    cache entry.

    ``json_keys``: JSON mode's keys, in answer order, each with the type of its value (a JSON schema
    without enums), for the backends whose API has schemas but no JSON-object mode: they send them as
    the key schema (:func:`key_schema`: keys fixed, values free). It is the one field left out of the
    key: it restates the keys the prompt asks for (the messages are in the key), and a backend that
    sends it says so in its identity (part of every key)."""

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
        key.update(
            _keyed(
                {
                    "top_p": self.top_p,
                    "stop": list(self.stop),
                    "seed": self.seed,
                    "sample": self.sample or None,
                    "json_object": self.json_object or None,
                }
            )
        )
        return key


@dataclass(frozen=True)
class Request:
    """A fully rendered model call.

    ``task`` carries the structured view of the same call for backends that do not read prose
    (the chance, prior and embedding baselines). Its generic part is ``choices``: a list of
    ``{"field", "options": [{"value", "text", "key"?}], "distinct_from"?}`` (the answer's fields and
    their allowed values, in answer order; ``key``, the option's class when its value is only a
    position, is what a prior counts) and ``query`` (the text to compare options against);
    a request without ``choices`` asks for free text. ``prior_group`` names the group whose
    dev-split answers a prior uses. The whole task is part of the cache key.

    ``shown`` is what the benchmark reads the answer against, as this request showed it (e.g. ``slots``,
    the slot maps): built once with the request, never sent and not part of the cache key (the messages
    already show it).
    """

    request_id: str  # "<instance id>/<method>/<stage>", unique within a run
    messages: tuple[Message, ...]
    task: dict[str, Any]
    decoding: Decoding = field(default_factory=Decoding)
    shown: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def max_tokens(self) -> int:
        return self.decoding.max_tokens

    @property
    def temperature(self) -> float:
        return self.decoding.temperature

    @property
    def json_schema(self) -> dict[str, Any] | None:
        return self.decoding.json_schema

    def key(self) -> dict[str, Any]:
        return {
            "messages": [m.key() for m in self.messages],
            "task": self.task,
            "decoding": self.decoding.key(),
        }

    def media(self) -> list[MediaPart]:
        return [p for m in self.messages for p in m.media()]

    def images(self) -> list[ImagePart]:
        """Every image the model sees, frames of frame-sampled videos included, in order."""
        out: list[ImagePart] = []
        for p in self.media():
            if isinstance(p, ImagePart):
                out.append(p)
            elif isinstance(p, VideoPart):
                out.extend(p.frames)
        return out


#: What a backend sent to constrain an answer's form, as recorded per run (``RunStats.constraints``):
#: nothing; JSON-object mode; the key schema (JSON mode on an API with schemas but no JSON-object mode:
#: keys fixed, values free); the request's own schema.
CONSTRAINTS = ("none", "json_object", "key_schema", "json_schema")

#: Value constraints a key schema leaves out: JSON mode fixes the keys and the value types, not values.
_VALUE_CONSTRAINTS = frozenset(
    {"enum", "const", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "pattern"}
)


def _free(schema: Any) -> Any:
    """``schema`` without value constraints (:data:`_VALUE_CONSTRAINTS`), at every depth."""
    if isinstance(schema, dict):
        return {k: _free(v) for k, v in schema.items() if k not in _VALUE_CONSTRAINTS}
    if isinstance(schema, list):
        return [_free(v) for v in schema]
    return schema


def answer_keys(request: Request) -> dict[str, dict[str, Any]] | None:
    """The keys JSON mode asks for, each with its value's type: the method's ``Decoding.json_keys``;
    else the task's ``keys`` (the answer's keys in order), else the fields of its ``choices``, with
    string values; None when the request names none."""
    if request.decoding.json_keys:
        return {k: _free(v) for k, v in request.decoding.json_keys.items()}
    keys = request.task.get("keys") or [c.get("field") for c in request.task.get("choices") or []]
    if keys and all(isinstance(k, str) and k for k in keys):
        return {k: {"type": "string"} for k in keys}
    return None


def key_schema(request: Request) -> dict[str, Any] | None:
    """JSON mode as a schema, for an API that has schemas but no JSON-object mode: an object with
    exactly the answer's keys (:func:`answer_keys`), all required, no others, values free (their
    types, no enums: this is not the constrained variant). None when the request names no keys."""
    keys = answer_keys(request)
    if not keys:
        return None
    return {"type": "object", "additionalProperties": False, "required": list(keys), "properties": keys}


#: Why generation stopped. ``length``: cut at max_tokens (the answer is truncated); ``error``: the
#: call failed; ``stop``: the model finished (or hit a stop string); ``no_record``: recorded answers
#: (the file backend) do not cover the instance; None: the backend does not say.
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
    #: A reasoning model's reasoning, taken out of ``text`` by :func:`split_reasoning` before the
    #: answer is parsed (None: the response had none).
    reasoning: str | None = None

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def think_wrapped(reasoning: str | None, text: str) -> str:
    """A backend's answer with the reasoning its API returns apart (OpenAI-compatible
    ``reasoning_content``, Anthropic thinking blocks) put before it in ``<think>`` tags: the cache
    keeps one text per call, and :func:`split_reasoning` takes it out again like inline reasoning."""
    return f"{THINK_OPEN}{reasoning}{THINK_CLOSE}{text}" if reasoning else text


def split_reasoning(text: str) -> tuple[str, str | None]:
    """(answer, reasoning) of a response text: every ``<think>...</think>`` block is reasoning, as is
    the text before a first ``</think>`` with no opening tag (a chat template that opens the block in
    the prompt) and everything after an opening tag never closed (cut while reasoning). The answer is
    the rest, stripped; reasoning None when the text has no reasoning tags (the text is then returned
    unchanged)."""
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
    """``response`` with its reasoning taken out of the text (:func:`split_reasoning`) into
    ``reasoning``, as every method sees it: a JSON object inside the reasoning is never the answer. A
    response that is all reasoning and no answer is a truncated answer (finish reason ``length``) unless
    it was refused or filtered. A response without reasoning tags is returned as it is."""
    if response.text is None:
        return response
    answer, reasoning = split_reasoning(response.text)
    if reasoning is None:
        return response
    finish = response.finish_reason
    if not answer and finish not in ("refusal", "content_filter"):
        finish = "length"
    return dataclasses.replace(response, text=answer, reasoning=reasoning, finish_reason=finish)


#: What a model may take besides text, as a params entry's ``modalities`` lists it: still images, a
#: video's sampled frames, a video natively (the clip file), an audio track.
MODALITIES = ("image", "frames", "video", "audio")
#: The part kind a backend must carry (``Backend.accepts``) for a model to take each modality.
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
    #: A local model folder to load (``model_id`` then only names the model); None: load ``model_id``.
    model_path: str | None = None
    #: A GGUF file to load, converted once into the per-user weights cache (:mod:`socialbench.core.weights`).
    gguf_file: str | None = None
    max_frames: int = 8
    #: Longest image side sent (scaled down, never up); None: as the source has it (the papers' protocol).
    image_size: int | None = None
    concurrency: int = 1
    max_tokens: int = 4096  # room for a thinking model's reasoning (a cut answer: finish_reason length)
    batch_size: int = 1
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    #: USD per million tokens, ``{"input": x, "output": y}``; None: unknown (not free). The older
    #: ``price_in_per_mtok``/``price_out_per_mtok`` (0 unless set) count where it is None.
    price: dict[str, float] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    #: The media it takes besides text (:data:`MODALITIES`); None: its backend's default
    #: (:func:`model_modalities`).
    modalities: list[str] | None = None
    #: Methods this model is not run with, each with its reason (shown in the tables); a method's entry
    #: covers its variant runs (``<method>__<variant>``) too.
    exclude_methods: dict[str, str] = field(default_factory=dict)
    #: The benchmarks it runs on (None: every one); on the others it is excluded.
    benchmarks: list[str] | None = None
    #: Per benchmark, the only runs it makes (recorded answers of one method); the others are excluded.
    only_methods: dict[str, list[str]] = field(default_factory=dict)

    def price_per_mtok(self) -> tuple[float, float] | None:
        """(input, output) USD per million tokens, or None when params give no price: ``price``, else
        the older keys when either is set (non-zero)."""
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
    """What a backend may need besides its spec: the run seed and the dev split's answers (for
    priors: ``[{"group", "answers": {field: value}}]``, from the benchmark's ``dev_answers``; None
    when no dev split was given)."""

    seed: int = 0
    dev_answers: list[dict[str, Any]] | None = None


class Backend(abc.ABC):
    """Base class of all backends. Subclasses implement :meth:`complete` and nothing else is required."""

    #: Name under which the backend is registered (``backend:`` in params.yaml).
    name: ClassVar[str] = ""
    #: The media kinds it can carry besides text (``image``, ``video``: a native clip, ``audio``). A
    #: video given as sampled frames needs only ``image``. Which of them a model takes is the model's
    #: (:attr:`takes`); :func:`check_requests` refuses a request with a part it does not take before any call.
    #: A backend with a declaration file (:func:`backend_declaration`) gets this and the two below from it.
    accepts: ClassVar[frozenset[str]] = frozenset({"image"})
    #: What a model of this backend takes when its params entry declares no ``modalities`` (None:
    #: everything ``accepts`` carries, sampled frames wherever images, :func:`carried_modalities`).
    default_modalities: ClassVar[frozenset[str] | None] = None
    #: Why it answers only requests that list their answer's choices (a baseline, recorded answers), as
    #: the tables print it; None: it writes free text. A run that needs free text is excluded for it.
    choices_only: ClassVar[str | None] = None
    #: True for a backend whose answers its own code decides, with no model (a test double, a baseline,
    #: recorded answers): its identity then holds ``behaviour``, the hash of the source of the modules
    #: that decide them (:func:`behaviour_modules`), so changed code is a cache miss, never old answers
    #: replayed under the same key. False (the default) for a backend that calls a model: the model id,
    #: revision and settings in its identity decide its answers, and its code may change without a miss.
    answers_from_code: ClassVar[bool] = False
    #: With ``answers_from_code``: modules besides those defining the class and its backend bases whose
    #: code decides its answers (helpers it calls), by import name.
    behaviour_modules: ClassVar[tuple[str, ...]] = ()
    #: Whether the constraint it sends (:meth:`constraint`) is enforced where the model decodes: True
    #: (guided decoding), False (sent, but the server ignores it: ``transformers serve``), None (not
    #: known, or nothing sent). From the declaration's ``json_mode.enforced``; recorded per run.
    json_enforced: ClassVar[bool | None] = None
    #: Retries and HTTP attempts made so far (a backend that retries, ``backends.api``, counts them; a
    #: shared backend counts every run it served, and the runner records each run's difference).
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
        """Run one request and return the raw response. Raise nothing for model-side failures:
        return a Response with ``error`` set instead, so the run goes on."""

    # ---- optional hooks, with working defaults ------------------------------------------------
    def identity(self) -> dict[str, Any]:
        """What, besides the request, determines the output; part of every cache key. A backend whose
        code decides its answers (:attr:`answers_from_code`) adds that code's hash as ``behaviour``."""
        ident: dict[str, Any] = {
            "backend": self.name,
            "model_id": self.spec.model_id or self.spec.name,
            "revision": self.spec.revision,
        }
        if self.answers_from_code:
            ident["behaviour"] = behaviour_sha256(behaviour_modules(type(self)))
        return ident

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

    def constraint(self, request: Request) -> str:
        """What this backend sends to constrain the answer's form of ``request``, one of
        :data:`CONSTRAINTS` (recorded per run). Default: ``none`` (nothing is sent: baselines,
        recorded answers, and backends without JSON mode)."""
        return "none"

    def images_sent(self, request: Request) -> list[list[int]] | None:
        """The [width, height] of every image (or frame) the request sends to the model, in order, as
        sent (scaled where a documented limit of the backend or params ``image_size`` requires it):
        recorded in the request's trace. None: the backend sends no pixels (baselines, recorded answers)."""
        return None

    def temperature_sent(self) -> bool | None:
        """Whether the request's temperature reaches the model (False: the API takes none and the model
        decodes with its own setting; None: no model decodes, as for baselines and recorded answers)."""
        return None

    @property
    def takes(self) -> frozenset[str]:
        """The modalities this model takes (:data:`MODALITIES`): its params entry's ``modalities``, else
        its backend's default; never more than the backend carries (``accepts``). A backend sends a part
        only in a modality the model takes."""
        carried = carried_modalities(self.accepts)
        if self.spec.modalities is not None:
            return frozenset(self.spec.modalities) & carried
        return carried if self.default_modalities is None else self.default_modalities & carried

    def cannot_take(self, part: MediaPart) -> str | None:
        """Why this model cannot take ``part`` (None when it can): the part's modality is not one it
        takes (:attr:`takes`). A video with its file and its frames goes natively to a model that takes
        video, as frames to one that takes frames."""
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
        """An answer the backend gives without a model call (nothing to pay or wait for, and not stored
        in the request cache), for ``socialbench plan``: e.g. recorded answers that hold no record for
        the instance. None (the default): answering takes a call."""
        return None

    def close(self) -> None:
        """Release processes, servers or GPU memory held by the backend (a no-op hook unless overridden)."""
        return None

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def behaviour_modules(cls: type[Backend]) -> tuple[str, ...]:
    """The modules whose code decides the answers of backend class ``cls`` (one with
    ``answers_from_code``): those defining it and its backend bases (not this module), most derived
    first, then its ``behaviour_modules``; each once. A subclass in another module (a test's variant of
    a double) so brings its own code in without declaring anything."""
    names = [c.__module__ for c in cls.__mro__ if isinstance(c, type) and issubclass(c, Backend) and c is not Backend]
    return tuple(dict.fromkeys([*names, *cls.behaviour_modules]))


@functools.cache  # per process: hashing once is enough, the code a process runs does not change under it
def behaviour_sha256(modules: tuple[str, ...]) -> str:
    """The ``behaviour`` of an identity: one hash over the code of ``modules`` (comments and docstrings left out)
    (:func:`~socialbench.core.hashing.module_sources_sha256`: by content, never by path)."""
    return module_sources_sha256(modules)


# ---- registry ---------------------------------------------------------------------------------
# name -> (module, class, extra to install). Modules are imported only when the backend is used,
# so the optional dependencies of one backend never burden another.
#: The backend registry (``core.plugins.Registry``): ``backend:`` in params names an entry.
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
    """Ask ``source`` for {name: (module, class)} when a backend name is not registered otherwise. The
    benchmark registry (``core.benchmarks``) adds one for the backends benchmarks contribute (their
    ``Benchmark.backends``), so a test double lives with its benchmark and this module names none."""
    BACKENDS.add_source(_no_extra(source))


@functools.cache  # one wrapper per source, so adding the same source twice adds it once
def _no_extra(source: Callable[[], Mapping[str, tuple[str, str]]]) -> Callable[[], dict[str, Entry]]:
    return lambda: {name: (module, cls, None) for name, (module, cls) in source().items()}


def register(name: str, module: str | None = None, cls_name: str | None = None, extra: str | None = None):
    """Register a backend. As a class decorator: ``@register("mine")``. Lazily, by import path:
    ``register("mine", "pkg.mod", "MineBackend", extra="mine")``."""
    if module is not None:
        if cls_name is None:
            raise ValueError("register(name, module, cls_name): cls_name is required with module")
        BACKENDS.add(name, module, cls_name, extra)
        return None

    def deco(cls: type[Backend]) -> type[Backend]:
        cls.name = name
        return BACKENDS.add_class(name, cls)

    return deco


def available_backends() -> list[str]:
    return BACKENDS.names()


def get_backend_class(name: str) -> type[Backend]:
    return BACKENDS.get(name)


def backend_options_schema(name: str) -> dict[str, Any] | None:
    """The JSON schema of the options (``models.<name>.options``) backend ``name`` takes, or None when
    it declares none (its options are then not checked at load). A backend declares them beside its
    module, in ``<module>.options.json`` (``{class name: schema}``), read without importing the module:
    checking params loads no SDK or weights, and works where a backend's extra is not installed. A
    class registered with :func:`register` as a decorator may carry them as ``options_schema``."""
    return BACKENDS.options_schema(name)


def create_backend(spec: ModelSpec, context: BackendContext | None = None) -> Backend:
    return get_backend_class(spec.backend)(spec, context)


def check_requests(backend: Backend, requests: Sequence[Request]) -> None:
    """Refuse, before any call, a request with a part the backend cannot take: a ConfigError naming
    the model, the request and the part."""
    for request in requests:
        for i, part in enumerate(request.media()):
            why = backend.cannot_take(part)
            if why:
                view = f" ({part.view})" if getattr(part, "view", None) else ""
                raise ConfigError(
                    f"models.{backend.spec.name} (backend {backend.name}): request {request.request_id}: part {i + 1},"
                    f" {part.kind}{view}: {why}; nothing was called"
                )
