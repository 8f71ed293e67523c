"""``hf``: an image-text-to-text model or a text-only causal LM, run in-process with transformers (docs/backends.md;
options: hf.options.json). JSON mode uses xgrammar with no free whitespace; a non-default ``prefill_chunk`` sums in
another order, so it is part of the identity."""

from __future__ import annotations

import dataclasses
import gc
import inspect
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import huggingface_hub
import torch
import transformers

from socialbench.backends.images import ImageChanged, content_blocks, images_sent, load_pil
from socialbench.backends.revision import hub_offline, resolve_revision
from socialbench.core import weights
from socialbench.core.backend import (
    Backend,
    BackendContext,
    Decoding,
    ModelSpec,
    Request,
    Response,
    check_requests,
    key_schema,
)
from socialbench.core.errors import ConfigError

log = logging.getLogger("socialbench.backends")

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# from_pretrained took `torch_dtype` before transformers 4.56 and takes `dtype` since.
_DTYPE_KWARG = "dtype" if tuple(int(x) for x in transformers.__version__.split(".")[:2]) >= (4, 56) else "torch_dtype"


JSON_MODES = ("json_schema", "key_schema", "none")
#: The kinds of model hf loads, in the order tried: kind -> (its transformers auto class, the processor's).
KINDS = {
    "image-text-to-text": ("AutoModelForImageTextToText", "AutoProcessor"),
    "causal-lm": ("AutoModelForCausalLM", "AutoTokenizer"),
}
#: The defaults of ``prefill_chunk`` and ``prefix_cache_mb``.
PREFILL_CHUNK = 256
PREFIX_CACHE_MB = 512


def shared_chunks(a: Sequence[int], b: Sequence[int], chunk: int) -> int:
    """The length of the longest common prefix of ``a`` and ``b``, rounded down to whole ``chunk`` tokens."""
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return n // chunk * chunk


class PrefixStore:
    """Key-value states of prompt prefixes at chunk boundaries, most recently used kept within ``limit_bytes``."""

    def __init__(self, chunk: int, limit_bytes: int):
        self.chunk = chunk
        self.limit = limit_bytes
        self.entries: OrderedDict[tuple[int, ...], list[tuple[Any, Any]]] = OrderedDict()
        self.used = 0
        self.calls = self.hits = self.tokens_reused = 0

    @staticmethod
    def size(states: list[tuple[Any, Any]]) -> int:
        return sum(k.numel() * k.element_size() + v.numel() * v.element_size() for k, v in states)

    def longest(self, ids: Sequence[int], at_most: int) -> tuple[list[tuple[Any, Any]] | None, int]:
        """(the states of the longest kept prefix of ``ids``, how many of its tokens to use), or (None, 0)."""
        self.calls += 1
        best, length = None, 0
        for key in self.entries:
            n = min(shared_chunks(key, ids, self.chunk), at_most)
            if n > length:
                best, length = key, n
        if best is None:
            return None, 0
        self.entries.move_to_end(best)
        self.hits += 1
        self.tokens_reused += length
        return self.entries[best], length

    def add(self, ids: Sequence[int], states: list[tuple[Any, Any]]) -> None:
        """Keep ``states`` as those of prefix ``ids``, dropping the least recently used beyond the limit."""
        size = self.size(states)
        if size > self.limit or tuple(ids) in self.entries:
            return
        while self.entries and self.used + size > self.limit:
            self.used -= self.size(self.entries.popitem(last=False)[1])
        self.entries[tuple(ids)] = states
        self.used += size


def model_kind(config: Any) -> str | None:
    """The first of :data:`KINDS` whose auto class maps ``config``'s class, or None."""
    from transformers.models.auto import modeling_auto

    mappings = {
        "image-text-to-text": modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING,
        "causal-lm": modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING,
    }
    return next((kind for kind in KINDS if type(config) in mappings[kind]), None)


def answer_grammar(request: Request, json_mode: str) -> tuple[dict[str, Any] | None, str]:
    """(the JSON schema xgrammar compiles for ``request``, its ``core.backend.CONSTRAINTS`` name): the
    request's schema, else any object (or the key schema under ``json_mode: key_schema``), else none."""
    decoding = request.decoding
    if json_mode == "none" or (decoding.json_schema is None and not decoding.json_object):
        return None, "none"
    if decoding.json_schema is not None:
        return decoding.json_schema, "json_schema"
    if json_mode == "key_schema":
        schema = key_schema(request)
        if schema is not None:
            return schema, "key_schema"
    return {"type": "object"}, "json_object"


def _in_hf_cache(repo_id: str, revision: str | None) -> bool:
    """Whether the local Hugging Face cache holds the model's config.json (at ``revision``)."""
    try:
        found = huggingface_hub.try_to_load_from_cache(repo_id, "config.json", revision=revision)
    except Exception:  # an id the hub library refuses (bad characters): not in the cache
        return False
    return isinstance(found, str)


def chat_messages(request: Request, text_only: bool = False) -> list[dict[str, Any]]:
    """The request as a transformers chat conversation (a text-only model's messages as plain strings)."""
    if text_only:
        return [{"role": m.role, "content": m.text()} for m in request.messages]
    return [{"role": m.role, "content": content_blocks(m, lambda _img: {"type": "image"})} for m in request.messages]


def _generation_group(decoding: Decoding) -> Decoding:
    """What requests batched into one ``generate`` call share: the decoding without per-row constraints."""
    group = dataclasses.replace(
        decoding, json_schema=None, json_object=False, json_keys=None, sample=0, stop=tuple(decoding.stop)
    )
    if group.temperature <= 0:
        group = dataclasses.replace(group, top_p=None, seed=None)
    return group


class HFBackend(Backend):
    # accepts: images (a video as its frames), declared in hf.declaration.json.

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        super().__init__(spec, context)
        if not (spec.model_id or spec.model_path or spec.gguf_file):
            raise ConfigError(
                f"models.{spec.name}: give model_id (a Hugging Face id or a local folder), model_path or gguf_file"
            )
        options = dict(spec.options or {})
        self.json_mode = str(options.get("json_mode", "json_schema"))
        if self.json_mode not in JSON_MODES:
            raise ConfigError(f"models.{spec.name}.options.json_mode must be one of {', '.join(JSON_MODES)}")
        self.threads = options.get("threads")
        self.prefill_chunk = int(options.get("prefill_chunk", PREFILL_CHUNK))
        self.prefixes = PrefixStore(
            max(1, self.prefill_chunk), int(float(options.get("prefix_cache_mb", PREFIX_CACHE_MB)) * 2**20)
        )
        self._chunked = False  # whether prompts are prefilled in chunks (decided at load)
        self._cache_arg = "past_key_values"  # the name forward and generate take a cache by
        self.kind: str | None = None  # image-text-to-text or causal-lm, from the model's config at load
        self._grammars: dict[str, Any] = {}
        self._compiler: Any = None
        self._gguf_folder: str | None = None
        self.device = str(options.get("device", "auto"))
        if self.device == "auto":
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.dtype = str(options.get("dtype", "auto"))
        if self.dtype == "auto":
            self.dtype = "bfloat16" if self.device.startswith("cuda") else "float32"
        elif self.dtype not in _DTYPES:
            raise ConfigError(f"dtype must be auto or one of {', '.join(_DTYPES)}, got {self.dtype!r}")
        self.load_kwargs: dict[str, Any] = {
            "revision": spec.revision,
            "trust_remote_code": bool(options.get("trust_remote_code", False)),
            "local_files_only": bool(options.get("local_files_only", False)),
        }
        self.attn_implementation = options.get("attn_implementation")
        self.processor: Any = None
        self.model: Any = None
        self._revision: str | None = None
        self._resolved = False

    def temperature_sent(self) -> bool:
        return True  # greedy at 0, sampling above it

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["revision"] = self.spec.revision or self.resolved_revision()
        ident["dtype"] = self.dtype  # bf16 and fp32 greedy outputs differ
        ident["image_size"] = self.spec.image_size  # None: as the source has it (the processor resizes)
        if self.json_mode != "json_schema":
            ident["json_mode"] = self.json_mode
        if self.prefill_chunk != PREFILL_CHUNK:  # the prefill's sums, hence near-tie answers, differ
            ident["prefill_chunk"] = self.prefill_chunk
        return ident

    def images_sent(self, request: Request) -> list[list[int]] | None:
        """[width, height] of each image handed to the model's processor (which may resize it itself)."""
        sizes = self.__dict__.setdefault("_sent_sizes", {})

        def size(part: Any, _n: int) -> tuple[int, int]:
            if part.sha256 not in sizes:
                sizes[part.sha256] = load_pil(part, self.spec.image_size).size
            return sizes[part.sha256]

        return images_sent(request, size)

    @property
    def source(self) -> str:
        """What is loaded: ``model_path``, else the converted folder of ``gguf_file``, else ``model_id``."""
        if self.spec.model_path:
            return str(self.spec.model_path)
        if self.spec.gguf_file:
            if self._gguf_folder is None:  # converted (or found in the per-user cache) once per backend
                self._gguf_folder = str(weights.cached_folder(Path(self.spec.gguf_file), log=log.info))
            return self._gguf_folder
        return str(self.spec.model_id)

    def where(self) -> str:
        key = "model_path" if self.spec.model_path else "gguf_file" if self.spec.gguf_file else "model_id"
        return f"models.{self.spec.name}.{key}"

    def constraint(self, request: Request) -> str:
        return answer_grammar(request, self.json_mode)[1]

    def resolved_revision(self) -> str | None:
        """What an unpinned model is, without loading it (``backends.revision``; the load uses it); None: unknown."""
        if self._resolved:
            return self._revision
        if self.spec.gguf_file and not self.spec.model_path:
            gguf = Path(self.spec.gguf_file)
            if not gguf.is_file():
                raise ConfigError(f"models.{self.spec.name}.gguf_file: {gguf} is not a file")
            self._revision = f"gguf:{weights.sha256_file(gguf)}"  # the folder is converted from these bytes
            self._resolved = True
            return self._revision
        self.check_model_available()  # a model that cannot be there is named before anything runs
        self._revision = resolve_revision(self.source, self.offline())
        self._resolved = True
        if self._revision is not None and not self._revision.startswith("files:"):
            self.load_kwargs["revision"] = self._revision  # load exactly the commit in the key
        if self._revision is None:
            log.warning(
                "models.%s: %s has no revision pinned and none could be resolved;"
                " pin models.%s.revision to make the run reproducible",
                self.spec.name,
                self.spec.model_id,
                self.spec.name,
            )
        return self._revision

    # ---- model ----------------------------------------------------------------------------------
    def offline(self) -> bool:
        """Whether loading may not download: ``local_files_only`` or HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE."""
        return self.load_kwargs["local_files_only"] or hub_offline()

    def check_model_available(self) -> None:
        """A ConfigError naming models.<name>.model_id when the model cannot be there: a path that is not a
        folder, or (offline) an id not in the local Hugging Face cache. Downloads and reads nothing."""
        model_id = self.source
        where = self.where()
        local = Path(model_id).expanduser()
        if local.is_dir():
            if not (local / "config.json").is_file():
                raise ConfigError(
                    f"{where}: {model_id!r} is a folder without config.json, not a transformers model folder"
                )
            return
        if local.exists():
            raise ConfigError(
                f"{where}: {model_id!r} is a file; give the model's"
                " folder (with config.json) or a Hugging Face model id"
            )
        offline = self.offline()
        looks_like_path = model_id.startswith(("/", ".", "~")) or "\\" in model_id or model_id.count("/") > 1
        if not looks_like_path and offline and _in_hf_cache(model_id, self.spec.revision):
            return
        if looks_like_path or offline:
            at = f" at revision {self.spec.revision!r}" if self.spec.revision and not looks_like_path else ""
            why = " (the run is offline)" if offline else ""
            raise ConfigError(
                f"{where}: {model_id!r} is neither a local folder nor a model in the local Hugging Face cache{at}{why}"
            )

    def load(self) -> None:
        if self.model is not None:
            return
        started = time.perf_counter()
        self.check_model_available()
        source = self.source
        if self.threads:
            torch.set_num_threads(int(self.threads))
        model_kwargs = dict(self.load_kwargs)
        model_kwargs[_DTYPE_KWARG] = _DTYPES[self.dtype]
        if self.attn_implementation:
            model_kwargs["attn_implementation"] = self.attn_implementation
        try:
            config = transformers.AutoConfig.from_pretrained(source, **self.load_kwargs)
            self.kind = model_kind(config)
            if self.kind is None:
                tried = " or ".join(f"{kind} ({auto})" for kind, (auto, _) in KINDS.items())
                raise ConfigError(
                    f"{self.where()}: {source!r} cannot be loaded: transformers maps its config"
                    f" ({type(config).__name__}) to neither {tried}"
                )
            if self.kind == "causal-lm" and self.takes:
                raise ConfigError(
                    f"models.{self.spec.name}: {self.source!r} is a text-only causal LM ({type(config).__name__}),"
                    f" but its entry takes {', '.join(sorted(self.takes))};"
                    f" declare `modalities: []` in models.{self.spec.name}"
                )
            auto_model, auto_processor = KINDS[self.kind]
            self.processor = getattr(transformers, auto_processor).from_pretrained(source, **self.load_kwargs)
            self.model = getattr(transformers, auto_model).from_pretrained(source, **model_kwargs)
        except (OSError, ValueError) as exc:  # not a model folder, a missing file, no network, an unknown config
            self.processor = self.model = None
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(f"{self.where()}: {source!r} cannot be loaded: {first}") from exc
        self.model.to(self.device).eval()
        self._chunked = self.kind == "causal-lm" and self.prefill_chunk > 0 and self._chunkable()
        tokenizer = self.tokenizer
        tokenizer.padding_side = "left"  # decoder-only generation pads on the left
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        log.info(
            "hf: loaded %s (%s) from %s on %s (%s) in %.1fs",
            self.spec.model_id or self.spec.name,
            self.kind,
            source,
            self.device,
            self.dtype,
            time.perf_counter() - started,
        )

    def _chunkable(self) -> bool:
        """Whether the loaded model's cache can be filled chunk by chunk and cut to a prefix: every layer
        keeps all past tokens (no sliding window or recurrent state), and forward takes ``logits_to_keep``."""
        cache = transformers.DynamicCache(config=self.model.config)
        plain = all(type(layer) is transformers.cache_utils.DynamicLayer for layer in cache.layers)
        takes = inspect.signature(self.model.forward).parameters
        # transformers 5.24 renamed the argument (``past_key_values`` still works, with a warning)
        self._cache_arg = "cache" if "cache" in takes else "past_key_values"
        return plain and "logits_to_keep" in takes

    def prefilled(self, ids: list[int]) -> Any:
        """A dynamic cache of ``ids`` up to their last chunk boundary before the end (one token at least is
        left for ``generate``): the longest kept prefix, then chunk by chunk; kept for later prompts."""
        chunk = self.prefill_chunk
        whole = (len(ids) - 1) // chunk * chunk
        cache = transformers.DynamicCache(config=self.model.config)
        states, start = self.prefixes.longest(ids, whole)
        for layer, (keys, values) in enumerate(states or []):
            cache.update(keys[:, :, :start].clone(), values[:, :, :start].clone(), layer)
        for at in range(start, whole, chunk):
            piece = torch.tensor([ids[at : at + chunk]], device=self.device)
            self.model(input_ids=piece, use_cache=True, logits_to_keep=1, **{self._cache_arg: cache})
        if whole > start:
            self.prefixes.add(ids[:whole], [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers])
        return cache

    def grammar(self, schema: dict[str, Any]) -> Any:
        """The compiled xgrammar grammar of ``schema`` for this model's tokenizer (compiled once per schema)."""
        text = json.dumps(schema, sort_keys=True)
        if text not in self._grammars:
            try:
                import xgrammar
            except ImportError as exc:
                raise ConfigError(
                    f"models.{self.spec.name}: JSON mode on hf needs xgrammar: pip install 'socialbench[real]'"
                    f" (or set models.{self.spec.name}.options.json_mode: none)"
                ) from exc
            if self._compiler is None:
                vocab = getattr(self.model.config, "vocab_size", None)
                if vocab is None:  # an image-text-to-text model keeps it in its text config
                    vocab = self.model.get_output_embeddings().weight.shape[0]
                info = xgrammar.TokenizerInfo.from_huggingface(
                    self.tokenizer, vocab_size=int(vocab), stop_token_ids=sorted(self._eos_ids())
                )
                self._compiler = xgrammar.GrammarCompiler(info, max_threads=1)
            self._grammars[text] = self._compiler.compile_json_schema(text, any_whitespace=False)
        return self._grammars[text]

    @property
    def tokenizer(self) -> Any:
        return getattr(self.processor, "tokenizer", self.processor)

    def _eos_ids(self) -> set[int]:
        ids: set[int] = set()
        for value in (getattr(self.model.generation_config, "eos_token_id", None), self.tokenizer.eos_token_id):
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, (list, tuple)):
                ids.update(int(v) for v in value)
        return ids

    def close(self) -> None:
        if self.prefixes.calls:
            log.info(
                "hf: prefix cache: %d of %d prompts started from kept states (%d tokens not computed again)",
                self.prefixes.hits,
                self.prefixes.calls,
                self.prefixes.tokens_reused,
            )
        self.prefixes.entries.clear()
        self.prefixes.used = 0
        self.model = None
        self.processor = None
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    # ---- inference ------------------------------------------------------------------------------
    def complete(self, request: Request) -> Response:
        out: list[Response] = []
        self.complete_many([request], lambda _i, resp: out.append(resp))
        return out[0]

    def complete_many(self, requests: Sequence[Request], on_result: Callable[[int, Response], None]) -> None:
        if not requests:
            return
        check_requests(self, requests)  # a part it cannot take stops the batch before the model loads
        self.load()
        prepared: dict[tuple[Any, ...], list[tuple[int, str, list[Any], dict[str, Any] | None]]] = {}
        for index, request in enumerate(requests):
            try:
                prompt = self.processor.apply_chat_template(  # a tokenizer's, for a text-only model
                    chat_messages(request, text_only=self.kind == "causal-lm"),
                    add_generation_prompt=True,
                    tokenize=False,
                )
                images = [load_pil(p, self.spec.image_size) for p in request.images()]
            except (ImageChanged, OSError, ValueError) as exc:
                error = f"could not prepare the request: {exc}"
                on_result(index, Response(text=None, error=error, finish_reason="error"))
                continue
            schema = answer_grammar(request, self.json_mode)[0]
            group = (_generation_group(request.decoding), bool(images), schema is not None)
            prepared.setdefault(group, []).append((index, prompt, images, schema))
        size = max(1, int(self.spec.batch_size))
        for (decoding, *_), items in prepared.items():
            for start in range(0, len(items), size):
                self._run_batch(items[start : start + size], decoding, on_result)

    def _run_batch(
        self,
        items: list[tuple[int, str, list[Any], dict[str, Any] | None]],
        decoding: Decoding,
        on_result: Callable[[int, Response], None],
    ) -> None:
        try:
            responses = self._generate(
                [p for _, p, _, _ in items], [im for _, _, im, _ in items], decoding, [s for *_, s in items]
            )
        except Exception as exc:  # e.g. out of memory: try one by one, then record the error
            if len(items) > 1:
                log.warning("hf: batch of %d failed (%s); retrying one by one", len(items), exc)
                if self.device.startswith("cuda"):
                    torch.cuda.empty_cache()
                for item in items:
                    self._run_batch([item], decoding, on_result)
                return
            error = f"generation failed: {type(exc).__name__}: {exc}"
            responses = [Response(text=None, error=error, finish_reason="error")]
        for (index, *_), response in zip(items, responses):
            on_result(index, response)

    def generate_kwargs(self, decoding: Decoding) -> dict[str, Any]:
        """The ``generate`` arguments of one decoding: greedy at temperature 0, else sampling."""
        kwargs: dict[str, Any] = {"max_new_tokens": decoding.max_tokens, "pad_token_id": self.tokenizer.pad_token_id}
        if decoding.temperature > 0:
            kwargs.update(do_sample=True, temperature=decoding.temperature)
            if decoding.top_p is not None:
                kwargs["top_p"] = decoding.top_p
        else:  # greedy: top_p has no use; the model's generation_config sampling settings are cleared
            kwargs.update(do_sample=False, num_beams=1, temperature=None, top_p=None, top_k=None)
        if decoding.stop:
            kwargs.update(stop_strings=list(decoding.stop), tokenizer=self.tokenizer)
        return kwargs

    @torch.inference_mode()
    def _generate(
        self,
        prompts: list[str],
        images: list[list[Any]],
        decoding: Decoding,
        schemas: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[Response]:
        started = time.perf_counter()
        has_images = any(images)
        bos = self.tokenizer.bos_token
        # a chat template that writes the BOS itself must not get a second one
        special = not (bos and all(p.startswith(bos) for p in prompts))
        if self.kind == "causal-lm":
            inputs = self.tokenizer(prompts, padding=True, return_tensors="pt", add_special_tokens=special)
        else:
            inputs = self.processor(
                text=prompts,
                images=images if has_images else None,
                padding=True,
                return_tensors="pt",
                add_special_tokens=special,
            )
        inputs = inputs.to(self.device)
        model_dtype = next(self.model.parameters()).dtype
        for name, value in list(inputs.items()):
            if torch.is_tensor(value) and value.is_floating_point():
                inputs[name] = value.to(model_dtype)
        generate_kwargs = self.generate_kwargs(decoding)
        if schemas and any(s is not None for s in schemas):  # a new processor per call (it keeps state)
            from xgrammar.contrib.hf import LogitsProcessor

            grammars = [self.grammar(schema) for schema in schemas if schema is not None]
            generate_kwargs["logits_processor"] = [LogitsProcessor(grammars)]
        if decoding.temperature > 0:
            torch.manual_seed(self.context.seed if decoding.seed is None else decoding.seed)
        if self._chunked and len(prompts) == 1:  # one prompt at a time: prefill in chunks, reuse a prefix
            generate_kwargs[self._cache_arg] = self.prefilled(inputs["input_ids"][0].tolist())
        output = self.model.generate(**inputs, **generate_kwargs)
        prompt_len = inputs["input_ids"].shape[1]
        new_tokens = output[:, prompt_len:].tolist()
        eos = self._eos_ids()
        elapsed = time.perf_counter() - started
        attention = inputs["attention_mask"]
        out = []
        for row, ids in enumerate(new_tokens):
            text, n, finish = self._answer(ids, eos, decoding)
            out.append(
                Response(
                    text=text,
                    input_tokens=int(attention[row].sum().item()),
                    output_tokens=n,
                    latency_s=elapsed / len(prompts),  # the batch's time, shared out
                    finish_reason=finish,
                )
            )
        return out

    def _answer(self, ids: list[int], eos: set[int], decoding: Decoding) -> tuple[str, int, str]:
        """(text, output tokens, finish reason) of one generated row: cut after the first end-of-sequence
        token, or before the first stop string; ``length`` when neither came within ``max_tokens``."""
        n_eos = next((pos + 1 for pos, tok in enumerate(ids) if tok in eos), None)
        n = len(ids) if n_eos is None else n_eos
        text = self.tokenizer.decode(ids[:n], skip_special_tokens=True)
        if decoding.stop and any(s in text for s in decoding.stop):
            for k in range(1, n + 1):  # the first token count whose text holds a stop string
                text = self.tokenizer.decode(ids[:k], skip_special_tokens=True)
                cut = min((i for i in (text.find(s) for s in decoding.stop) if i >= 0), default=-1)
                if cut >= 0:
                    return text[:cut], k, "stop"
        if n_eos is None and n >= decoding.max_tokens:
            return text, n, "length"
        return text, n, "stop"
