"""CoDAR's retrieval step (MoCA 5.2, D.2 Stage 2): between the Query Formulator and the Context
Synthesizer, the entities the query routed to ``web_search`` or ``hybrid`` are looked up by a
configured retriever; ``model_prior`` entities are answered from the model's own knowledge.

The paper names no search engine, so none is built in. Without a configured retriever every entity is
answered from the model prior and the trace says which routes were asked for and that nothing was
retrieved; an invented search result is never produced. A retriever is a :class:`Retriever` subclass:

- ``{kind: jsonl, path: FILE}``: a local evidence file (:class:`JsonlRetriever`, pre-fetched evidence,
  deterministic);
- ``{kind: import, class: "package.module:ClassName", options: {...}}``: any subclass, e.g. a web
  search client (it reads its keys from the environment itself).

Pure logic (routing, rendering) is in functions; the only I/O is the retriever's own.
"""

from __future__ import annotations

import abc
import importlib
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.core.hashing import sha256_file

ROUTES = ("model_prior", "web_search", "hybrid")
#: What the Context Synthesizer reads when nothing was retrieved (templates/codar/README.md).
NO_EVIDENCE = "none: answer from model prior"


class RetrievalError(SocialbenchError):
    """A retriever failed for one instance (the instance's error, the run goes on)."""


@dataclass(frozen=True)
class Evidence:
    """One retrieved item: what it is about (the entity), the text found and where it came from."""

    entity: str
    text: str
    source: str
    question: str | None = None


class Retriever(abc.ABC):
    """Looks up background for one entity routed to ``web_search`` or ``hybrid``."""

    kind: ClassVar[str] = ""

    @abc.abstractmethod
    def retrieve(self, entity: str, route: str, questions: list[str]) -> list[Evidence]:
        """Evidence about ``entity`` (possibly none). Raise :class:`RetrievalError` on failure."""

    def identity(self) -> dict[str, Any]:
        """What its answers depend on (recorded in the trace)."""
        return {"kind": self.kind}


def normalize_entity(name: str) -> str:
    return re.sub(r"\s+", " ", name).strip().casefold()


class JsonlRetriever(Retriever):
    """A local evidence file: JSON lines ``{"entity", "text", "source"[, "question"]}``. An entity is
    matched by its name, case-insensitively with whitespace collapsed; items come back in file order."""

    kind = "jsonl"

    def __init__(self, path: str | Path):
        from socialbench.core.io import read_jsonl_lines

        self.path = Path(path)
        self._items: dict[str, list[Evidence]] = {}
        for jl in read_jsonl_lines(self.path):
            if jl.record is None:
                raise DataError(str(self.path), jl.problem or "not a JSON object", record=f"line {jl.line}")
            rec = jl.record
            for key in ("entity", "text", "source"):
                if not isinstance(rec.get(key), str) or not rec[key].strip():
                    raise DataError(str(self.path), "must be a non-empty string", record=f"line {jl.line}", field=key)
            question = rec.get("question")
            if question is not None and not isinstance(question, str):
                raise DataError(
                    str(self.path), "must be a string or absent", record=f"line {jl.line}", field="question"
                )
            unknown = sorted(set(rec) - {"entity", "text", "source", "question"})
            if unknown:
                raise DataError(str(self.path), f"unknown key(s) {unknown}", record=f"line {jl.line}")
            ev = Evidence(entity=rec["entity"], text=rec["text"], source=rec["source"], question=question)
            self._items.setdefault(normalize_entity(rec["entity"]), []).append(ev)
        self._sha256 = sha256_file(self.path)

    def retrieve(self, entity: str, route: str, questions: list[str]) -> list[Evidence]:
        return list(self._items.get(normalize_entity(entity), []))

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": str(self.path), "sha256": self._sha256}


def build_retriever(config: Any, where: str) -> Retriever | None:
    """The retriever a method's ``retriever`` setting names (None: no retriever, model prior only).
    ``where`` is the setting's params path, named in errors."""
    if config is None:
        return None
    if not isinstance(config, dict) or "kind" not in config:
        raise ConfigError(f"{where}: expected null or a mapping with kind (jsonl or import), got {config!r}")
    kind = config["kind"]
    if kind == "jsonl":
        extra = sorted(set(config) - {"kind", "path"})
        if extra or not isinstance(config.get("path"), str):
            raise ConfigError(
                f"{where}: kind jsonl takes exactly one more key, path (a file of JSON lines)"
                + (f"; unknown: {extra}" if extra else "")
            )
        return JsonlRetriever(config["path"])
    if kind == "import":
        extra = sorted(set(config) - {"kind", "class", "options"})
        target = config.get("class")
        if extra or not isinstance(target, str) or ":" not in target:
            raise ConfigError(
                f"{where}: kind import takes class ('package.module:ClassName') and options"
                + (f"; unknown: {extra}" if extra else "")
            )
        module, _, name = target.partition(":")
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"{where}.class: cannot import {target}: {exc}") from exc
        if not (isinstance(cls, type) and issubclass(cls, Retriever)):
            raise ConfigError(f"{where}.class: {target} is not a socialbench.moca.eval.retrieval.Retriever subclass")
        options = config.get("options") or {}
        if not isinstance(options, dict):
            raise ConfigError(f"{where}.options: expected a mapping, got {options!r}")
        return cls(**options)
    raise ConfigError(f"{where}.kind: unknown retriever kind {kind!r}; known: jsonl, import")


@dataclass
class Retrieval:
    """What the retrieval step did for one social query (kept in the trace)."""

    requested: list[dict[str, str]]  # the query's entities with the route each asked for
    route: str  # what was used: "model_prior" or "retriever:<kind>"
    status: str  # all_model_prior | no_retriever | retrieved | nothing_found
    note: str
    evidence: list[Evidence] = field(default_factory=list)
    retriever: dict[str, Any] | None = None

    def rendered(self) -> str:
        """``$retrieved_evidence``: one item per line with its entity and source, or NO_EVIDENCE."""
        if not self.evidence:
            return NO_EVIDENCE
        return "\n".join(f"- [{e.entity}] {e.text} (source: {e.source})" for e in self.evidence)

    def as_trace(self) -> dict[str, Any]:
        d = asdict(self)
        d["evidence"] = [{k: v for k, v in asdict(e).items() if v is not None} for e in self.evidence]
        return d


def retrieve(social_query: dict[str, Any], retriever: Retriever | None) -> Retrieval:
    """Run the retrieval step for a parsed social query (``{"entities": [{name, route}], ...}``)."""
    requested = [{"name": e["name"], "route": e["route"]} for e in social_query["entities"]]
    wanted = [e for e in requested if e["route"] != "model_prior"]
    if not wanted:
        return Retrieval(
            requested, "model_prior", "all_model_prior", "every entity was routed to model_prior: nothing to retrieve"
        )
    names = ", ".join(f"{e['name']} ({e['route']})" for e in wanted)
    if retriever is None:
        return Retrieval(
            requested,
            "model_prior",
            "no_retriever",
            f"no retriever configured: {names} answered from model prior, nothing retrieved",
        )
    evidence: list[Evidence] = []
    for e in wanted:
        try:
            evidence.extend(retriever.retrieve(e["name"], e["route"], list(social_query["questions"])))
        except RetrievalError:
            raise
        except Exception as exc:  # a retriever's own failure (network, parsing) is this instance's error
            raise RetrievalError(f"retriever {retriever.kind} failed for {e['name']!r}: {exc}") from exc
    status = "retrieved" if evidence else "nothing_found"
    note = (
        f"{len(evidence)} item(s) retrieved for {names}"
        if evidence
        else f"the retriever found nothing for {names}: answered from model prior"
    )
    return Retrieval(requested, f"retriever:{retriever.kind}", status, note, evidence, retriever.identity())
