"""The retriever plug-in kind: a registry of :class:`Retriever` subclasses (``search(query, k) -> [Passage]``),
providers in ``socialbench.retrievers`` imported only when used.

Every search goes through the request cache (:func:`cached_search`), keyed by the retriever's identity (no
secrets), query and ``k``, so a resumed run repeats no lookup. A failed search is the instance's error
(:class:`RetrievalError`); a service that cannot be used stops the run (:class:`SearchesStopped`) after
``Retriever.fail_after`` failures in a row, or when it asks for a longer wait than params allow."""

from __future__ import annotations

import abc
import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from socialbench.core.cache import ReplayMiss
from socialbench.core.errors import ConfigError, SocialbenchError
from socialbench.core.hashing import sha256_json
from socialbench.core.plugins import Registry
from socialbench.core.runner import current_search_counts

if TYPE_CHECKING:
    from socialbench.core.cache import RequestCache


class RetrievalError(SocialbenchError):
    """A failed search (network, the provider's answer): the caller decides what it costs."""


class SearchesStopped(SocialbenchError):
    """The search service cannot be used: the run stops (not a RetrievalError: no method takes it as its own)."""


@dataclass(frozen=True)
class Passage:
    """One passage: an id stable within the corpus, its text, and optional title, source and score."""

    doc_id: str
    text: str
    title: str | None = None
    source: str | None = None
    score: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Passage:
        return cls(**{k: d.get(k) for k in ("doc_id", "text", "title", "source", "score")})


class Retriever(abc.ABC):
    """Base class of all retrievers (:meth:`search`); ``options``: its params settings, never secrets."""

    name: ClassVar[str] = ""
    #: Failed searches in a row that stop the run; a provider may take it from its options.
    fail_after: int = 5
    #: Reset by any answer.
    failures_in_a_row: int = 0

    def __init__(self, options: dict[str, Any] | None = None, where: str = "retrieval"):
        self.options = dict(options or {})
        self.where = where

    @abc.abstractmethod
    def search(self, query: str, k: int) -> list[Passage]:
        """At most ``k`` passages, best first, deterministic for a fixed corpus; a failure is a RetrievalError."""

    def number_option(self, key: str, default: float, *, whole: bool = False, least: float = 0) -> Any:
        """Option ``key`` (or its default), a number >= ``least`` (a whole one when ``whole``)."""
        value = self.options.get(key, default)
        kind = "a whole number" if whole else "a number"
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) or value < least:
            raise ConfigError(f"{self.where}.options.{key}: expected {kind} >= {least:g}, got {value!r}")
        return value

    # ---- optional hooks, with working defaults ------------------------------------------------
    def corpus_sha256(self) -> str | None:
        """A hash of what it searches when that is local (None: a live service)."""
        return None

    def identity(self) -> dict[str, Any]:
        """What besides query and k decides its answers (part of every cache key); settings as a hash."""
        return {
            "retriever": self.name,
            "config_sha256": sha256_json(self.options),
            "corpus_sha256": self.corpus_sha256(),
        }

    def close(self) -> None:
        return None


#: The retriever registry: ``retrieval.retriever`` in params names an entry.
RETRIEVERS: Registry[Retriever] = Registry(
    "retriever",
    Retriever,
    {
        "bm25": ("socialbench.retrievers.bm25", "BM25Retriever", "retrieval"),
        "web": ("socialbench.retrievers.web", "BraveSearchRetriever", None),
    },
)
#: The name that selects no retriever (the model's own knowledge).
NONE = "none"


def register(name: str, module: str, cls_name: str, extra: str | None = None) -> None:
    """Register a retriever lazily by import path."""
    RETRIEVERS.add(name, module, cls_name, extra)


def get_retriever_class(name: str, where: str = "retrieval.retriever") -> type[Retriever]:
    if name not in RETRIEVERS:
        raise ConfigError(f"{where}: unknown retriever {name!r}; available: {', '.join([NONE, *RETRIEVERS.names()])}")
    try:
        return RETRIEVERS.get(name)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def create_retriever(name: str, options: dict[str, Any] | None = None, where: str = "retrieval") -> Retriever | None:
    """The retriever ``name`` with its options (None for ``none``)."""
    return None if name == NONE else get_retriever_class(name, f"{where}.retriever")(options, where)


def search_key_parts(identity: dict[str, Any], query: str, k: int) -> dict[str, Any]:
    return {"identity": identity, "query": query, "k": int(k)}


@dataclass
class SearchResult:
    query: str
    k: int
    passages: list[Passage]
    key: str
    cached: bool


def cached_search(retriever: Retriever, query: str, k: int, cache: RequestCache | None) -> SearchResult:
    """``retriever.search(query, k)`` through the request cache: replayed if stored, else made and stored
    at once (failures are not stored). Each search is counted; ``fail_after`` failures in a row stop the run."""
    counts = current_search_counts()
    identity = retriever.identity()
    parts = search_key_parts(identity, query, k)
    key = sha256_json(parts)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None and hit.text is not None:
            counts.searches += 1
            counts.cached += 1
            return SearchResult(query, k, [Passage.from_dict(d) for d in json.loads(hit.text)], key, True)
        if getattr(cache, "replay_only", False):  # a plan replays stored searches and makes none
            raise ReplayMiss(f"search {key[:12]} is not in the request cache")
    counts.searches += 1
    try:
        passages = list(retriever.search(query, k))[:k]
    except Exception as exc:
        counts.errors += 1
        if len(counts.error_examples) < 5:
            counts.error_examples.append(f"{query[:80]}: {exc}")
        if isinstance(exc, (SearchesStopped, ConfigError)):
            raise
        retriever.failures_in_a_row += 1
        if retriever.failures_in_a_row >= retriever.fail_after:
            raise SearchesStopped(
                f"retriever {retriever.name}: stopped after {retriever.failures_in_a_row} failed searches in a row"
                f" (the last: {exc}); is the search service up and the retriever's options right? Searches"
                " finished before are in the request cache; rerun when it is fixed"
            ) from exc
        raise
    retriever.failures_in_a_row = 0
    if cache is not None:
        text = json.dumps([p.as_dict() for p in passages], ensure_ascii=False, sort_keys=True)
        who = f"retriever:{retriever.name}"
        cache.put_record(key, parts, text, backend=who, model=who, request_id=f"search/{retriever.name}")
    return SearchResult(query, k, passages, key, False)
