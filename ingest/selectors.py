"""Reads of the ingest app, always within one workspace."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, QuerySet

from ingest.models import (
    STOPPED_STATUSES,
    Chunk,
    CrawlPage,
    CrawlPageStatus,
    Document,
    DocumentStatus,
    Source,
    SourceKind,
    SourceStatus,
)
from ingest.vector_tables import VectorTable
from system.loading import import_paths
from workspaces.errors import InvalidInput
from workspaces.models import Workspace
from workspaces.selectors import get_object_for_workspace

# Tags offered by the sources page's filter (the workspace's, alphabetically).
MAX_TAG_CHOICES = 200


@dataclass(frozen=True, slots=True)
class SourceFilters:
    """What a sources list is narrowed to; empty: anything. Built by
    `validate_source_filters`, so every value is one the list knows."""

    tag: str = ""
    kind: str = ""
    status: str = ""


def validate_source_filters(
    *, tag: str | None = None, kind: str | None = None, status: str | None = None
) -> SourceFilters:
    """The filters of a sources list (API query, page filter bar); an unknown kind or
    status is refused naming the choices (a tag nobody uses just matches nothing)."""
    tag, kind, status = (str(v or "").strip() for v in (tag, kind, status))
    if kind and kind not in SourceKind.values:
        raise InvalidInput(f"kind: choose one of {', '.join(SourceKind.values)}.")
    if status and status not in SourceStatus.values:
        raise InvalidInput(f"status: choose one of {', '.join(SourceStatus.values)}.")
    if len(tag) > 50:
        raise InvalidInput("tag: at most 50 characters (tags are cut to 50 when stored).")
    if not tag.isprintable():
        raise InvalidInput("tag: no control characters.")
    return SourceFilters(tag=tag, kind=kind, status=status)


def get_sources(workspace: Workspace, filters: SourceFilters | None = None) -> QuerySet[Source]:
    """The workspace's sources, newest first, narrowed to `filters`: a tag the source
    carries (exactly), its kind, its status."""
    sources = Source.objects.for_workspace(workspace).order_by("-created_at", "-id")
    if filters is None:
        return sources
    if filters.tag:
        sources = sources.filter(tags__contains=[filters.tag])
    if filters.kind:
        sources = sources.filter(kind=filters.kind)
    if filters.status:
        sources = sources.filter(status=filters.status)
    return sources


def get_source_tags(workspace: Workspace, *, limit: int = MAX_TAG_CHOICES) -> list[str]:
    """The tags the workspace's sources carry, alphabetically (at most `limit`)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT t.tag FROM ingest_source s "
            "CROSS JOIN LATERAL jsonb_array_elements_text(s.tags) AS t(tag) "
            "WHERE s.workspace_id = %s AND jsonb_typeof(s.tags) = 'array' "
            "ORDER BY t.tag LIMIT %s",
            [workspace.pk, limit],
        )
        return [row[0] for row in cursor.fetchall()]


@dataclass(frozen=True, slots=True)
class SourceFigures:
    """What a sources list shows of what a source holds: its documents and chunks (from its
    counters), the entities its documents gave (INGEST_SOURCE_FIGURES), and when it last
    changed: the latest of its creation, its run's start and end, and its last slice of work."""

    documents: int
    chunks: int
    entities: int
    updated_at: datetime


def source_updated_at(source: Source) -> datetime:
    moments = [source.created_at, source.started_at, source.finished_at, source.last_slice_at]
    return max(m for m in moments if m is not None)


def with_figures(sources: Iterable[Source]) -> list[Source]:
    """The sources, each with its `figures` (SourceFigures) set: documents, chunks and the
    last change from the rows themselves, and what the apps above ingest count from them
    (INGEST_SOURCE_FIGURES) in one query per provider for all of them: a page of sources
    costs the same few queries whatever its length."""
    rows = list(sources)
    by_workspace: dict[int, list[int]] = {}
    for source in rows:
        by_workspace.setdefault(source.workspace_id, []).append(source.pk)
    found: dict[int, dict[str, int]] = {}
    for provider in import_paths(settings.INGEST_SOURCE_FIGURES):
        for workspace_id, ids in by_workspace.items():
            for source_id, figures in provider(workspace_id=workspace_id, source_ids=ids).items():
                found.setdefault(source_id, {}).update(figures)
    for source in rows:
        counters = source.counters or {}
        source.figures = SourceFigures(  # type: ignore[attr-defined]
            documents=int(counters.get("documents", 0)),
            chunks=int(counters.get("chunks", 0)),
            entities=int(found.get(source.pk, {}).get("entities", 0)),
            updated_at=source_updated_at(source),
        )
    return rows


def figures_of(source: Source) -> SourceFigures:
    """The source's figures: those `with_figures` set, or read now for it alone."""
    figures = getattr(source, "figures", None)
    if isinstance(figures, SourceFigures):
        return figures
    figures = with_figures([source])[0].figures  # type: ignore[attr-defined]
    assert isinstance(figures, SourceFigures)
    return figures


def get_source_for_workspace(workspace: Workspace, source_id: object) -> Source:
    return get_object_for_workspace(Source.objects.all(), workspace, source_id, label="Source")


def get_failed_documents(source: Source, *, limit: int = 100) -> list[dict[str, Any]]:
    failed = Document.objects.filter(source=source, status=DocumentStatus.FAILED).order_by("path")
    return [
        {"id": d.pk, "path": d.path, "error": d.error}
        for d in failed.only("id", "path", "error")[:limit]
    ]


def get_failures(source: Source) -> list[dict[str, str]]:
    """Everything of the source that failed, as commands report it: crawl pages first
    (`url`, `error`), then documents (`path`, `error`)."""
    pages = CrawlPage.objects.filter(source=source, status=CrawlPageStatus.FAILED).order_by("id")
    documents = Document.objects.filter(source=source, status=DocumentStatus.FAILED)
    return [{"url": p.url, "error": p.reason} for p in pages.only("url", "reason")] + [
        {"path": d.path, "error": d.error} for d in documents.order_by("path").only("path", "error")
    ]


def get_duplicate_documents(source: Source, *, limit: int = 100) -> list[dict[str, Any]]:
    """The source's documents whose content another document (of this source or another
    one) was processed for first, each with that original: they share its chunks and graph
    (ingest/actions/duplicates.py)."""
    duplicates = (
        Document.objects.filter(source=source, duplicate_of__isnull=False)
        .select_related("duplicate_of__source")
        .only(
            "id", "path", "duplicate_of__id", "duplicate_of__path", "duplicate_of__title",
            "duplicate_of__source__id", "duplicate_of__source__name",
        )
        .order_by("path")[:limit]
    )  # fmt: skip
    return [
        {
            "id": d.pk,
            "path": d.path,
            "duplicate_of_id": d.duplicate_of.pk,
            "original_path": d.duplicate_of.path,
            "original_title": d.duplicate_of.title,
            "original_source_id": d.duplicate_of.source.pk,
            "original_source_name": d.duplicate_of.source.name,
        }
        for d in duplicates
        if d.duplicate_of is not None
    ]


def get_documents(source: Source) -> QuerySet[Document]:
    """The source's documents with their chunk counts; a duplicate's original (with its
    source) comes along for the link to it."""
    return (
        Document.objects.filter(source=source)
        .select_related("duplicate_of__source")
        .defer("text", "duplicate_of__text", "duplicate_of__metadata")
        .annotate(chunk_count=Count("chunks"))
        .order_by("path")
    )


def get_document_for_workspace(workspace: Workspace, document_id: object) -> Document:
    return get_object_for_workspace(
        Document.objects.select_related("duplicate_of__source")
        .defer("duplicate_of__text", "duplicate_of__metadata")
        .annotate(chunk_count=Count("chunks")),
        workspace,
        document_id,
        label="Document",
    )


def get_chunks(document: Document) -> QuerySet[Chunk]:
    return Chunk.objects.filter(document=document).defer("embedding").order_by("ordinal")


def chunks_opening_in_code(workspace: Workspace, chunk_ids: list[int]) -> set[int]:
    """Those of the chunks that start inside a ``` code block of their document (a long
    example cut across chunks): their own text cannot tell, as its fence is in the chunk
    before. The fence lines of the document's text before the chunk are counted, in the
    database, as a passage's own are (knowledge/answering/readable.py): a line starting
    with ```."""
    if not chunk_ids:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.id FROM ingest_chunk c JOIN ingest_document d ON d.id = c.document_id
            WHERE c.workspace_id = %s AND c.id = ANY(%s)
              AND regexp_count(left(d.text, c.char_start), '^[ \t]*```', 1, 'n') %% 2 = 1
            """,
            [workspace.pk, chunk_ids],
        )
        return {row[0] for row in cursor.fetchall()}


def stored_vectors(*, workspace_id: int, model_id: str, hashes: set[str]) -> QuerySet[Chunk]:
    """The workspace's chunks holding a vector of `model_id` for one of these texts (by
    content hash): the embed stage copies such a vector rather than computing it again."""
    return Chunk.objects.filter(
        workspace_id=workspace_id, embedding_model=model_id, content_hash__in=hashes
    ).exclude(embedding=None)


def get_pages(source: Source, *, status: str | None = None) -> QuerySet[CrawlPage]:
    pages = CrawlPage.objects.filter(source=source).order_by("depth", "id")
    return pages.filter(status=status) if status else pages


def source_is_stopped(source_id: int) -> bool:
    """The source was cancelled, is being deleted (or its workspace is), or is gone: work
    for it must stop (the pipeline, a crawl, extraction and a work slice all ask this). A
    slice that went on writing into a workspace whose rows are being purged in batches
    could leave rows behind the purge."""
    row = (
        Source.objects.filter(pk=source_id)
        .values_list("status", "workspace__deletion_requested_at")
        .first()
    )
    return row is None or row[0] in STOPPED_STATUSES or row[1] is not None


# pgvector's `ef_construction` when an index's definition gives none.
HNSW_DEFAULT_EF_CONSTRUCTION = 64
_EF_CONSTRUCTION = re.compile(r"^ef_construction=(\d+)$")


@dataclass(frozen=True, slots=True)
class WorkspaceVectorIndex:
    name: str
    workspace_id: int
    dimension: int
    valid: bool  # False: a build that was interrupted (CREATE INDEX CONCURRENTLY leaves it)
    ef_construction: int = HNSW_DEFAULT_EF_CONSTRUCTION  # the build's candidate list


def vector_rows_by_workspace(vectors: VectorTable) -> dict[int, int]:
    """Every workspace's rows of the table (under the shared index's condition, of any
    model: an upper bound of what is searched), read from the workspace b-tree."""
    where = f"WHERE {vectors.condition}" if vectors.condition else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT workspace_id, count(*) FROM {vectors.table} {where} GROUP BY workspace_id"  # noqa: S608 (our names)
        )
        return {int(workspace_id): int(n) for workspace_id, n in cursor.fetchall()}


def vector_rows_of_dimension(
    vectors: VectorTable, *, workspace_id: int, dimension: int, at_most: int
) -> int:
    """The workspace's rows holding a vector of `dimension`, counted no further than
    `at_most`."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {vectors.table} "  # noqa: S608 (our names)
            f"WHERE {vectors.where(dimension, workspace_id)} LIMIT %s) AS r",
            [at_most],
        )
        return int(cursor.fetchone()[0])


def vector_indexes(vectors: VectorTable) -> tuple[list[int], list[WorkspaceVectorIndex]]:
    """The dimensions with a shared vector index on the table, and the workspaces' own
    indexes (ingest/actions/vector_indexes.py)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid, c.reloptions FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = %s::regclass AND c.relname LIKE %s",
            [vectors.table, f"{vectors.prefix}_%"],
        )
        rows = cursor.fetchall()
    shared_name = re.compile(rf"^{vectors.prefix}_(\d+)$")
    own_name = re.compile(rf"^{vectors.prefix}_(\d+)_ws(\d+)$")
    shared = sorted(int(m[1]) for name, _, _ in rows if (m := shared_name.match(name)))
    own = [
        WorkspaceVectorIndex(
            name, int(m[2]), int(m[1]), bool(valid), _ef_construction(options or [])
        )
        for name, valid, options in rows
        if (m := own_name.match(name))
    ]
    return shared, sorted(own, key=lambda index: index.name)


def _ef_construction(options: list[str]) -> int:
    for option in options:
        if match := _EF_CONSTRUCTION.match(option):
            return int(match[1])
    return HNSW_DEFAULT_EF_CONSTRUCTION


# The workspaces' own indexes per database and table, as last read from the catalog: a new
# one is known to searches at most this long after it was built.
OWN_INDEXES_TTL_SECONDS = 60.0
_own_indexes: dict[tuple[str, str], tuple[float, set[tuple[int, int]]]] = {}


def has_workspace_vector_index(vectors: VectorTable, *, workspace_id: int, dimension: int) -> bool:
    """Whether the workspace's vectors of `dimension` have a valid index of their own,
    which the planner walks for its searches instead of the shared one (the catalog is
    read at most every OWN_INDEXES_TTL_SECONDS per process)."""
    key = (str(connection.settings_dict.get("NAME")), vectors.table)
    now = time.monotonic()
    cached = _own_indexes.get(key)
    if cached is None or now - cached[0] >= OWN_INDEXES_TTL_SECONDS:
        _, indexes = vector_indexes(vectors)
        cached = (now, {(i.workspace_id, i.dimension) for i in indexes if i.valid})
        _own_indexes[key] = cached
    return (workspace_id, dimension) in cached[1]


def walk_ef_search(vectors: VectorTable, *, workspace_id: int, dimension: int, shared: int) -> int:
    """The candidate list (`hnsw.ef_search`) of a walk for the workspace: its own index's
    (VECTOR_WORKSPACE_INDEX_EF_SEARCH: its rows alone need a longer list for questions far
    from all of them) when it has one, else `shared`, the shared index's."""
    if has_workspace_vector_index(vectors, workspace_id=workspace_id, dimension=dimension):
        return int(settings.VECTOR_WORKSPACE_INDEX_EF_SEARCH)
    return shared
