"""``hf``: an image-text-to-text model run in-process with transformers.

The model's own processor and chat template render each request (text parts and ``{"type":
"image"}`` parts in message order; the frames of a video are a sequence of images, their timestamps
already stated in the prompt text; an image or video with a ``view`` is preceded by the text
``[view]``). Parts it takes (``accepts``): images, and videos as their sampled frames; no native video
clip and no audio (refused before the model loads).

Decoding is greedy (``do_sample=False``) unless a request asks for a temperature above 0; then it
samples with ``top_p`` when the request sets one, seeded with the request's ``seed`` (else the run's).
``stop`` strings end generation (``stop_strings``); the answer is cut before the stop string, as the
OpenAI-compatible servers do. There is no JSON mode at all: neither ``json_schema`` nor
``json_object`` constrains the output (as in the paper, an unparsable answer is scored incorrect;
recorded per run as the constraint ``none``). Reasoning in ``<think>`` tags is taken out of the answer
by the runner, as for every backend.
``finish_reason``: ``length`` when the answer reached ``max_tokens`` without end-of-sequence or a stop
string, else ``stop``; ``error`` for a request that failed.

Requests with the same decoding parameters are batched, ``batch_size`` at a time, left-padded; results
are handed to the caller batch by batch, so a crash loses at most one batch. The model loads on the
first request that is not cached, so a fully cached rerun loads nothing.

Note on batching: padding changes the floating-point sums slightly, so on a near-tie a batched greedy
output can differ from the unbatched one; ``batch_size: 1`` gives outputs independent of the batch.

Options (``models.<name>.options``):
  device             auto (default: cuda when available, else cpu) | cpu | cuda | cuda:N | mps
  dtype              auto (default: bfloat16 on cuda, float32 elsewhere) | float32 | bfloat16 | float16
  attn_implementation  passed to from_pretrained when set (e.g. sdpa, flash_attention_2)
  trust_remote_code  default false
  local_files_only   default false (true: never touch the network)
"""

from __future__ import annotations

import gc
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import huggingface_hub
import torch
import transformers

from socialbench.backends.images import ImageChanged, content_blocks, images_sent, load_pil
from socialbench.backends.revision import resolve_revision
from socialbench.core.backend import Backend, BackendContext, Decoding, ModelSpec, Request, Response, check_requests
from socialbench.core.errors import ConfigError

log = logging.getLogger("socialbench.backends")

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# from_pretrained took `torch_dtype` before transformers 4.56 and takes `dtype` since.
_DTYPE_KWARG = "dtype" if tuple(int(x) for x in transformers.__version__.split(".")[:2]) >= (4, 56) else "torch_dtype"


_TRUE = {"1", "ON", "YES", "TRUE"}


def _in_hf_cache(repo_id: str, revision: str | None) -> bool:
    """Whether the local Hugging Face cache holds the model's config.json (at ``revision``)."""
    try:
        found = huggingface_hub.try_to_load_from_cache(repo_id, "config.json", revision=revision)
    except Exception:  # an id the hub library refuses (bad characters): not in the cache
        return False
    return isinstance(found, str)


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def resolve_dtype(name: str, device: str) -> str:
    if name == "auto":
        return "bfloat16" if device.startswith("cuda") else "float32"
    if name not in _DTYPES:
        raise ConfigError(f"dtype must be auto or one of {', '.join(_DTYPES)}, got {name!r}")
    return name


def chat_messages(request: Request) -> list[dict[str, Any]]:
    """The request as a transformers chat conversation (text and image content parts, view labels as
    text), its images in the order of :meth:`Request.images`."""
    return [{"role": m.role, "content": content_blocks(m, lambda _img: {"type": "image"})} for m in request.messages]


def _generation_group(decoding: Decoding) -> Decoding:
    """What requests batched into one ``generate`` call must share: the decoding, without the fields
    that do not change generation (the JSON constraints, which hf does not apply, and the sample
    number). A greedy decoding ignores top_p and seed."""
    import dataclasses

    group = dataclasses.replace(
        decoding, json_schema=None, json_object=False, json_keys=None, sample=0, stop=tuple(decoding.stop)
    )
    if group.temperature <= 0:
        group = dataclasses.replace(group, top_p=None, seed=None)
    return group


class HFBackend(Backend):
    # accepts: images, and videos as their sampled frames (no native clip, no audio); declared in
    # hf.declaration.json (core.modalities.backend_declaration).

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        super().__init__(spec, context)
        if not spec.model_id:
            raise ConfigError(f"models.{spec.name}.model_id is required (a Hugging Face id or a local path)")
        options = dict(spec.options or {})
        self.device = resolve_device(str(options.get("device", "auto")))
        self.dtype = resolve_dtype(str(options.get("dtype", "auto")), self.device)
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
        return ident

    def images_sent(self, request: Request) -> list[list[int]] | None:
        """[width, height] of each image handed to the model's processor (which may resize it itself,
        as its configuration says): as the source has it, or scaled to params ``image_size``."""
        sizes = self.__dict__.setdefault("_sent_sizes", {})

        def size(part: Any, _n: int) -> tuple[int, int]:
            if part.sha256 not in sizes:
                sizes[part.sha256] = load_pil(part, self.spec.image_size).size
            return sizes[part.sha256]

        return images_sent(request, size)

    def resolved_revision(self) -> str | None:
        """What an unpinned model (no ``revision`` in params) is, without loading it: for a local
        folder, a fingerprint of its files; for a hub id, the commit its local cache holds or, online,
        the one the hub names now, which the load then uses, so the answers and the key agree. A
        changed model is then a cache miss and MLflow shows which one was used. None when unknown."""
        if self._resolved:
            return self._revision
        self.check_model_available()  # a model that cannot be there is named before anything runs
        self._revision = resolve_revision(str(self.spec.model_id), self.offline())
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
        if self.load_kwargs["local_files_only"] or huggingface_hub.constants.HF_HUB_OFFLINE:
            return True
        return any(os.environ.get(v, "").strip().upper() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))

    def check_model_available(self) -> None:
        """Stop with a ConfigError naming models.<name>.model_id when the model cannot be there:
        a path that is not a folder, or (offline) an id that is not in the local Hugging Face cache.
        Starts no download and reads no weights."""
        model_id = str(self.spec.model_id)
        where = f"models.{self.spec.name}.model_id"
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
        model_kwargs = dict(self.load_kwargs)
        model_kwargs[_DTYPE_KWARG] = _DTYPES[self.dtype]
        if self.attn_implementation:
            model_kwargs["attn_implementation"] = self.attn_implementation
        try:
            self.processor = transformers.AutoProcessor.from_pretrained(self.spec.model_id, **self.load_kwargs)
            self.model = transformers.AutoModelForImageTextToText.from_pretrained(self.spec.model_id, **model_kwargs)
        except OSError as exc:  # not a model folder, a missing file, a revision not in the cache, no network
            self.processor = self.model = None
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(
                f"models.{self.spec.name}.model_id: {self.spec.model_id!r} cannot be loaded: {first}"
            ) from exc
        self.model.to(self.device).eval()
        tokenizer = self.tokenizer
        tokenizer.padding_side = "left"  # decoder-only generation pads on the left
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        log.info(
            "hf: loaded %s on %s (%s) in %.1fs",
            self.spec.model_id,
            self.device,
            self.dtype,
            time.perf_counter() - started,
        )

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
        prepared: dict[tuple[Any, ...], list[tuple[int, str, list[Any]]]] = {}
        for index, request in enumerate(requests):
            try:
                prompt = self.processor.apply_chat_template(
                    chat_messages(request), add_generation_prompt=True, tokenize=False
                )
                images = [load_pil(p, self.spec.image_size) for p in request.images()]
            except (ImageChanged, OSError, ValueError) as exc:
                error = f"could not prepare the request: {exc}"
                on_result(index, Response(text=None, error=error, finish_reason="error"))
                continue
            group = (_generation_group(request.decoding), bool(images))
            prepared.setdefault(group, []).append((index, prompt, images))
        size = max(1, int(self.spec.batch_size))
        for (decoding, _), items in prepared.items():
            for start in range(0, len(items), size):
                self._run_batch(items[start : start + size], decoding, on_result)

    def _run_batch(
        self, items: list[tuple[int, str, list[Any]]], decoding: Decoding, on_result: Callable[[int, Response], None]
    ) -> None:
        try:
            responses = self._generate([p for _, p, _ in items], [im for _, _, im in items], decoding)
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
        for (index, _, _), response in zip(items, responses):
            on_result(index, response)

    def generate_kwargs(self, decoding: Decoding) -> dict[str, Any]:
        """The ``generate`` arguments of one decoding: greedy at temperature 0, else sampling (with
        ``top_p`` when set); ``stop_strings`` when the request has stop strings."""
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
    def _generate(self, prompts: list[str], images: list[list[Any]], decoding: Decoding) -> list[Response]:
        started = time.perf_counter()
        has_images = any(images)
        bos = self.tokenizer.bos_token
        inputs = self.processor(
            text=prompts,
            images=images if has_images else None,
            padding=True,
            return_tensors="pt",
            # a chat template that writes the BOS itself must not get a second one
            add_special_tokens=not (bos and all(p.startswith(bos) for p in prompts)),
        )
        inputs = inputs.to(self.device)
        model_dtype = next(self.model.parameters()).dtype
        for name, value in list(inputs.items()):
            if torch.is_tensor(value) and value.is_floating_point():
                inputs[name] = value.to(model_dtype)
        generate_kwargs = self.generate_kwargs(decoding)
        if decoding.temperature > 0:
            torch.manual_seed(self.context.seed if decoding.seed is None else decoding.seed)
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
        """(text, output tokens, finish reason) of one generated row: cut after the first
        end-of-sequence token, or before the first stop string (tokens counted up to the one that
        completed it); ``length`` when neither came within ``max_tokens``."""
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
