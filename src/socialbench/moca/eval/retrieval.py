"""CoDAR's retrieval step (MoCA 5.2, D.2 Stage 2): the entities the social query routes to ``web_search``
or ``hybrid`` are looked up, one search per entity and question through the request cache, with the
retriever params ``moca.retrieval`` select; with ``none`` nothing is retrieved (never an invented result)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from socialbench.core.errors import ConfigError
from socialbench.core.retrieval import RetrievalError, Retriever, SearchesStopped, cached_search, create_retriever
from socialbench.moca.schema.methods import WHERE, RetrievalSettings

ROUTES = ("model_prior", "web_search", "hybrid")
#: The routes whose entities are looked up.
LOOKED_UP = ("web_search", "hybrid")
#: What the Context Synthesizer reads when nothing was retrieved (templates/codar/README.md).
NO_EVIDENCE = "none: answer from model prior"


def make_retriever(settings: RetrievalSettings, where: str = WHERE) -> Retriever | None:
    """The retriever params ``moca.retrieval`` select (None for ``none``)."""
    return create_retriever(settings.retriever, settings.options, where)


@dataclass(frozen=True)
class Query:
    entity: str
    route: str
    question: str
    text: str


def queries(social_query: dict[str, Any]) -> list[Query]:
    """The searches of a parsed social query: one per looked-up entity and question, in order (pure)."""
    out = []
    for e in social_query["entities"]:
        if e["route"] not in LOOKED_UP:
            continue
        for q in social_query["questions"]:
            text = q if e["name"].casefold() in q.casefold() else f"{e['name']}: {q}"
            out.append(Query(e["name"], e["route"], q, text))
    return out


@dataclass(frozen=True)
class Evidence:
    """One retrieved passage as the Context Synthesizer sees it."""

    entity: str
    text: str
    source: str
    question: str | None = None


@dataclass
class Retrieval:
    """What the retrieval step did for one social query (kept in the trace)."""

    requested: list[dict[str, str]]  # the query's entities with the route each asked for
    route: str  # what was used: "model_prior" or "retriever:<name>"
    status: str  # all_model_prior | no_retriever | retrieved | nothing_found | unstructured_query
    note: str
    evidence: list[Evidence] = field(default_factory=list)
    retriever: dict[str, Any] | None = None
    #: Per search: {entity, route, question, query, k, passages}; None (no trace key) without a retriever.
    retrieved: list[dict[str, Any]] | None = None

    def rendered(self) -> str:
        """``$retrieved_evidence``: one item per line with its entity and source, or NO_EVIDENCE."""
        if not self.evidence:
            return NO_EVIDENCE
        return "\n".join(f"- [{e.entity}] {e.text} (source: {e.source})" for e in self.evidence)

    def as_trace(self) -> dict[str, Any]:
        d = asdict(self)
        d["evidence"] = [{k: v for k, v in asdict(e).items() if v is not None} for e in self.evidence]
        if self.retrieved is None:
            del d["retrieved"]
        return d


def unread_query(retriever: Retriever | None) -> Retrieval:
    """The retrieval step for a social query that went on as text: nothing looked up."""
    why = "the social query could not be read as entities and routes: nothing looked up, answered from model prior"
    if retriever is None:
        return Retrieval([], "model_prior", "unstructured_query", why)
    return Retrieval([], "model_prior", "unstructured_query", why, retriever=retriever.identity(), retrieved=[])


def retrieve(social_query: dict[str, Any], retriever: Retriever | None, k: int = 3, cache: Any = None) -> Retrieval:
    """The retrieval step for a parsed social query; a failed search is a :class:`RetrievalError`."""
    requested = [{"name": e["name"], "route": e["route"]} for e in social_query["entities"]]
    wanted = [e for e in requested if e["route"] in LOOKED_UP]
    identity = retriever.identity() if retriever is not None else None
    if not wanted:
        why = "every entity was routed to model_prior: nothing to retrieve"
        return Retrieval(
            requested, "model_prior", "all_model_prior", why, [], identity, None if retriever is None else []
        )
    names = ", ".join(f"{e['name']} ({e['route']})" for e in wanted)
    if retriever is None:
        why = f"no retriever configured: {names} answered from model prior, nothing retrieved"
        return Retrieval(requested, "model_prior", "no_retriever", why)
    evidence: list[Evidence] = []
    seen: set[str] = set()
    retrieved: list[dict[str, Any]] = []
    for q in queries(social_query):
        try:
            result = cached_search(retriever, q.text, k, cache)
        except (ConfigError, SearchesStopped):
            raise
        except Exception as exc:  # a failed search, or the provider's own failure: this instance's error
            raise RetrievalError(f"retriever {retriever.name} failed for {q.entity!r}: {exc}") from exc
        search = {"entity": q.entity, "route": q.route, "question": q.question, "query": q.text}
        retrieved.append({**search, "k": k, "passages": [p.as_dict() for p in result.passages]})
        for p in result.passages:
            if p.doc_id not in seen:
                seen.add(p.doc_id)
                evidence.append(Evidence(q.entity, p.text, p.doc_id, q.question))
    status = "retrieved" if evidence else "nothing_found"
    note = (
        f"{len(evidence)} passage(s) retrieved by {retriever.name} for {names}"
        if evidence
        else f"the retriever {retriever.name} found nothing for {names}: answered from model prior"
    )
    return Retrieval(requested, f"retriever:{retriever.name}", status, note, evidence, identity, retrieved)
