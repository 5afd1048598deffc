"""The hybrid search itself: the arguments checked, the signals run, their rankings fused
(and, with the graph and RETRIEVAL_RERANK_DEPTH set, the first ones reranked by the
query's entities they cover; with a recency preference, newer documents raised a little),
the hits hydrated and the context block built, each stage timed.

The order of work is part of the design: once the query is embedded, the keyword signal
starts on the retrieval pool, this thread runs the vector signals, recognition and graph
expansion meanwhile, and only then waits for it (knowledge/retrieval/pool.py). Everything
is scoped to one workspace. Without an embedding model or without vectors the search
degrades to keyword + recognition + graph and says so (`signals_used`, `warnings`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date

from django.conf import settings
from django.utils import timezone

from knowledge.canonical import type_name as normalise_type_name
from knowledge.graph.base import MAX_HOPS, GraphBackendError
from knowledge.models import EntityType
from knowledge.retrieval.access import record_access_counts
from knowledge.retrieval.context import build_context
from knowledge.retrieval.fusion import fuse_chunks, fuse_entities, unique
from knowledge.retrieval.hydration import chunk_hits, entity_hits, path_hits, relation_hits
from knowledge.retrieval.limits import ENTITY_LIMIT, MAX_FILTER_ITEMS, MAX_LIMIT, MAX_QUERY_CHARS
from knowledge.retrieval.pool import log_access_failure, start
from knowledge.retrieval.query_embedding import embed_query
from knowledge.retrieval.recency import RecencySettings, prefer_recent, published_dates
from knowledge.retrieval.rerank import RerankSettings, coverage_of, rerank
from knowledge.retrieval.signals.expansion import (
    SEED_MIN_SPECIFICITY,
    GraphChunks,
    Specificity,
    graph_chunks,
    graph_proximity,
    graph_seeds,
    named_seeds,
    seed_specificity,
)
from knowledge.retrieval.signals.keyword import keyword_signal
from knowledge.retrieval.signals.recognition import recognise
from knowledge.retrieval.signals.scope import DocumentScope
from knowledge.retrieval.signals.vector import ENTITY_MIN_SIMILARITY, vector_signals
from knowledge.retrieval.types import (
    CHUNK_SIGNALS,
    ChunkHit,
    ChunkSignals,
    EntityHit,
    PathHit,
    QueryVector,
    Recognised,
    SearchResult,
)
from system.llm.quoted_text import strip_invisible
from workspaces.errors import InvalidInput
from workspaces.models import MAX_ID, Workspace


def hybrid_search(
    *,
    workspace: Workspace,
    query: str,
    limit: int = 10,
    hops: int | None = None,
    relation_types: Sequence[str] | None = None,
    entity_types: Sequence[str] | None = None,
    sources: Sequence[int] | None = None,
    record_access: bool = True,
    ingested_from: date | None = None,
    ingested_to: date | None = None,
    query_vector: QueryVector | None = None,
    signals: Sequence[str] | None = None,
    published_from: date | None = None,
    published_to: date | None = None,
    recency: float | None = None,
) -> SearchResult:
    """The best `limit` chunks of the workspace for `query`, with the entities, relations
    and paths behind them and a Markdown context block (see the package docstring).

    `hops` (0..3, default RETRIEVAL_GRAPH_HOPS) bounds graph expansion; `relation_types`
    restricts the relations it walks (and those returned); `entity_types` the entities
    recognised, matched and reached; `sources` the chunks (by source id), `ingested_from`
    / `ingested_to` to documents ingested within those days (UTC, inclusive),
    `published_from` / `published_to` to documents whose own date (Document.published_at)
    falls within them. `recency` (0..1, default RETRIEVAL_RECENCY_WEIGHT, 0: off) raises
    newer documents a little (knowledge/retrieval/recency.py). `query_vector`
    replaces embedding the query (benchmarks time the search without the model).
    `signals` names the chunk rankings fused (a subset of CHUNK_SIGNALS; default all): the
    quality harness (knowledge/retrieval/comparison.py) ranks by one signal, or without the
    graph, through this same code. Raises InvalidInput for a blank or too long query or
    out-of-range arguments.
    """
    started = time.perf_counter()
    request = _request(
        workspace,
        query,
        limit,
        hops,
        relation_types,
        entity_types,
        signals,
        DocumentScope(
            _source_ids(sources),
            *_days(ingested_from, ingested_to, "ingested"),
            *_days(published_from, published_to, "published"),
        ),
        RecencySettings.configured(recency),
    )
    report = _Report()
    vector = query_vector
    if vector is None and request.uses({"vector", "graph"}):
        with report.timer("embed"):
            vector = embed_query(request.text, report.warnings)
    type_ids = _entity_type_ids(request)
    keyword_job = None
    if request.uses({"keyword"}):
        keyword_job = start(
            lambda: keyword_signal(workspace.pk, request.text, request.candidates, request.scope)
        )
    vector_chunks, vector_entities = _vector_stage(request, vector, type_ids, report)
    if keyword_job is not None:
        report.used.append("keyword")  # running on the pool (or done): listed where it was
    with report.timer("recognition"):
        recognised = recognise(workspace.pk, request.text, type_ids)
    report.used.append("recognition")
    proximity: dict[int, tuple[float, int]] = {}
    by_graph = GraphChunks([], frozenset())
    graph_ok = False
    specificity = None
    if request.uses({"graph"}):
        proximity, by_graph, graph_ok, specificity = _graph_stage(
            request, recognised, vector_entities, report
        )
    keyword_chunks = _keyword_wait(keyword_job, report) if keyword_job is not None else []

    with report.timer("fusion"):
        fused = fuse_chunks(vector_chunks, keyword_chunks, by_graph.ranked, strong=by_graph.strong)
        entity_order = fuse_entities(recognised, vector_entities, proximity)[:ENTITY_LIMIT]
    if specificity is not None:
        fused = _rerank_stage(request, fused, recognised, specificity, report)
    if request.recency.active and fused:
        fused = _recency_stage(request, fused, report)
    fused = fused[: request.limit]
    with report.timer("hydrate"):
        entities = entity_hits(workspace.pk, entity_order, recognised, vector_entities, proximity)
        named = _named(recognised, specificity)
        for entity in entities:
            entity.named = entity.id in named
        entity_ids = [e.id for e in entities]
        chunks = chunk_hits(workspace.pk, fused, entity_ids)
        relations = relation_hits(
            workspace.pk, entity_ids, request.relation_names, [c.id for c in chunks]
        )
    paths = _path_stage(request, recognised, entities, report) if graph_ok else []
    if record_access:
        _record_access_stage(workspace, chunks, entity_ids, report)
    with report.timer("context"):
        context = build_context(
            query=request.text, chunks=chunks, entities=entities, relations=relations, paths=paths
        )
    return SearchResult(
        query=request.text,
        chunks=chunks,
        entities=entities,
        relations=relations,
        paths=paths,
        context=context,
        signals_used=report.used,
        warnings=report.warnings,
        took_ms=round((time.perf_counter() - started) * 1000, 2),
        timings_ms=report.timer.timings,
    )


# --- the search's state -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Request:
    """The checked arguments of one search."""

    workspace: Workspace
    text: str
    limit: int
    hops: int
    relation_names: list[str] | None
    entity_names: list[str] | None
    scope: DocumentScope
    candidates: int
    signals: frozenset[str]
    recency: RecencySettings

    def uses(self, names: set[str]) -> bool:
        """Whether any of these chunk signals is part of this search."""
        return not self.signals.isdisjoint(names)


@dataclass(slots=True)
class _Timer:
    """Milliseconds per stage, summed when a stage runs more than once."""

    timings: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            spent = (time.perf_counter() - started) * 1000
            self.timings[stage] = round(self.timings.get(stage, 0.0) + spent, 3)


@dataclass(slots=True)
class _Report:
    """What the search says about itself: stage timings, warnings, the signals it used."""

    timer: _Timer = field(default_factory=_Timer)
    warnings: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)


# --- input -------------------------------------------------------------------------------


def clean_query(query: str) -> str:
    """The query without control characters and with collapsed whitespace; InvalidInput
    when nothing is left or it is longer than MAX_QUERY_CHARS."""
    text = " ".join(strip_invisible(query or "", to_space=True).split())
    if not text:
        raise InvalidInput("query: must not be blank.")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query: at most {MAX_QUERY_CHARS} characters.")
    return text


def _request(
    workspace: Workspace,
    query: str,
    limit: int,
    hops: int | None,
    relation_types: Sequence[str] | None,
    entity_types: Sequence[str] | None,
    signals: Sequence[str] | None,
    scope: DocumentScope,
    recency: RecencySettings,
) -> _Request:
    """The arguments checked and normalised, in the order they are reported."""
    text = clean_query(query)
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit: between 1 and {MAX_LIMIT}.")
    hops = settings.RETRIEVAL_GRAPH_HOPS if hops is None else hops
    if not 0 <= hops <= MAX_HOPS:
        raise InvalidInput(f"hops: between 0 and {MAX_HOPS}.")
    return _Request(
        workspace=workspace,
        text=text,
        limit=limit,
        hops=hops,
        relation_names=_type_names(relation_types, "relation_types"),
        entity_names=_type_names(entity_types, "entity_types"),
        scope=scope,
        candidates=max(1, settings.RETRIEVAL_CANDIDATES),
        signals=_chunk_signals(signals),
        recency=recency,
    )


def _chunk_signals(values: Sequence[str] | None) -> frozenset[str]:
    """The chunk signals a search fuses: all of CHUNK_SIGNALS unless some are named."""
    if values is None:
        return frozenset(CHUNK_SIGNALS)
    names = frozenset(str(v) for v in values)
    if not names or not names <= frozenset(CHUNK_SIGNALS):
        raise InvalidInput(f"signals: one or more of {', '.join(CHUNK_SIGNALS)}.")
    return names


def _type_names(values: Sequence[str] | None, label: str) -> list[str] | None:
    if not values:
        return None
    if len(values) > MAX_FILTER_ITEMS:
        raise InvalidInput(f"{label}: at most {MAX_FILTER_ITEMS}.")
    names = [normalise_type_name(str(v)) for v in values]
    return sorted({n for n in names if n}) or None


def _days(start: date | None, end: date | None, what: str) -> tuple[date | None, date | None]:
    if start is not None and end is not None and start > end:
        raise InvalidInput(f"{what}_from: must not be after {what}_to.")
    return start, end


def _source_ids(values: Sequence[int] | None) -> list[int] | None:
    if not values:
        return None
    if len(values) > MAX_FILTER_ITEMS:
        raise InvalidInput(f"sources: at most {MAX_FILTER_ITEMS}.")
    ids = {int(v) for v in values}
    if any(not 1 <= v <= MAX_ID for v in ids):
        raise InvalidInput("sources: source ids are positive integers.")
    return sorted(ids)


def _entity_type_ids(request: _Request) -> list[int] | None:
    """The ids of the requested entity types in this workspace (None: any type)."""
    if request.entity_names is None:
        return None
    return list(
        EntityType.objects.for_workspace(request.workspace)
        .filter(name__in=request.entity_names)
        .values_list("pk", flat=True)
    )


# --- stages ------------------------------------------------------------------------------


def _vector_stage(
    request: _Request, vector: QueryVector | None, type_ids: list[int] | None, report: _Report
) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """The vector-matched chunks and entities (entities only when close enough to count).
    A search without the vector signal still reads the entities when it has the graph
    (the closest names seed it), and drops the chunks."""
    if vector is None or not request.uses({"vector", "graph"}):
        return [], []
    with report.timer("vector"):
        vector_chunks, vector_entities = vector_signals(
            request.workspace.pk, vector, request.candidates, request.scope, type_ids
        )
    if not request.uses({"vector"}):
        vector_chunks = []
    elif vector_chunks:
        report.used.append("vector")
    else:
        report.warnings.append(
            f"vector search found no chunk vectors of {vector.model} here "
            "(run manage.py backfill_embeddings): keyword search only"
        )
    if vector_entities:
        report.used.append("entity_vector")
    return vector_chunks, [e for e in vector_entities if e[1] >= ENTITY_MIN_SIMILARITY]


def _named(recognised: list[Recognised], specificity: Specificity | None) -> set[int]:
    """The entities the query names: recognised by a whole name or alias, and specific
    enough to seed the graph (when the search weighed them)."""
    return {
        r.entity_id
        for r in recognised
        if r.whole and (specificity is None or specificity.get(r.entity_id) >= SEED_MIN_SPECIFICITY)
    }


def _graph_stage(
    request: _Request,
    recognised: list[Recognised],
    vector_entities: list[tuple[int, float]],
    report: _Report,
) -> tuple[dict[int, tuple[float, int]], GraphChunks, bool, Specificity]:
    """Graph proximity of entities near the seeds, then of the chunks that mention them
    (and which of those mention a seed the query names); whether the graph backend
    answered (no seeds: nothing to ask, not a failure); and the specificity of the
    entities met (the reranking weighs recognised entities by it). Recognised entities
    count by their mentions and by how common the query's words for them are."""
    proximity: dict[int, tuple[float, int]] = {}  # entity -> (score, depth)
    chunks = GraphChunks([], frozenset())
    graph_ok = True
    with report.timer("graph"):
        candidates = graph_seeds(recognised, vector_entities)
        written = {r.entity_id: r.matched for r in recognised if r.whole}
        specificity = seed_specificity(request.workspace.pk, list(candidates), written)
        seeds = graph_seeds(recognised, vector_entities, specificity)
        if not seeds:
            return {}, chunks, True, specificity
        try:
            proximity = graph_proximity(
                request.workspace.pk,
                seeds,
                request.hops,
                request.relation_names,
                request.entity_names,
                specificity,
            )
        except GraphBackendError as exc:
            graph_ok = False
            report.warnings.append(f"graph expansion skipped: {exc}")
        if proximity:
            chunks = graph_chunks(
                request.workspace.pk,
                proximity,
                request.candidates,
                request.scope,
                specificity,
                named_seeds(recognised, seeds),
            )
    if graph_ok:
        report.used.append("graph")
    return proximity, chunks, graph_ok, specificity


def _rerank_stage(
    request: _Request,
    fused: list[tuple[int, float, ChunkSignals]],
    recognised: list[Recognised],
    specificity: Specificity,
    report: _Report,
) -> list[tuple[int, float, ChunkSignals]]:
    """The first chunks reordered by the recognised entities they cover (a search with the
    graph only: the entities' weights are the graph's). Nothing to read without recognised
    entities or with reranking off."""
    config = RerankSettings.configured()
    if not config.active or not recognised or not fused:
        return fused
    with report.timer("rerank"):
        head = [pk for pk, _, _ in fused[: config.depth]]
        coverage = coverage_of(request.workspace.pk, head, recognised, specificity.of)
        return rerank(fused, coverage, config)


def _recency_stage(
    request: _Request, fused: list[tuple[int, float, ChunkSignals]], report: _Report
) -> list[tuple[int, float, ChunkSignals]]:
    """The fused chunks rescored by their documents' dates (a recency preference only)."""
    with report.timer("recency"):
        dates = published_dates(request.workspace.pk, [pk for pk, _, _ in fused])
        return prefer_recent(fused, dates, request.recency, now=timezone.now())


def _keyword_wait(
    job: Future[tuple[list[tuple[int, float]], float]], report: _Report
) -> list[tuple[int, float]]:
    """The keyword signal's chunks. It ran alongside the stages before: "keyword" is its own
    duration, "keyword_wait" what this thread still waited for it."""
    with report.timer("keyword_wait"):
        keyword_chunks, keyword_ms = job.result()
    report.timer.timings["keyword"] = round(keyword_ms, 3)
    return keyword_chunks


def _path_stage(
    request: _Request, recognised: list[Recognised], entities: list[EntityHit], report: _Report
) -> list[PathHit]:
    """Paths between the recognised entities the result kept."""
    with report.timer("paths"):
        present = {e.id for e in entities}
        ends = [r.entity_id for r in recognised if r.entity_id in present]
        paths, path_warning = path_hits(request.workspace.pk, unique(ends), request.relation_names)
        if path_warning:
            report.warnings.append(path_warning)
    return paths


def _record_access_stage(
    workspace: Workspace, chunks: list[ChunkHit], entity_ids: list[int], report: _Report
) -> None:
    """Access counts handed to the pool (written after the answer when there is one)."""
    with report.timer("access"):
        chunk_ids = [c.id for c in chunks]
        access = start(lambda: record_access_counts(workspace, chunk_ids, entity_ids))
        access.add_done_callback(log_access_failure)
