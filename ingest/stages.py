"""The ingestion stages a document passes through: parse, chunk, embed.

Each stage is idempotent and resumable: it looks at the document's status and hashes,
does only what is missing, and records what it did before returning, so a worker killed at
any point leaves a document that the next run finishes without duplicates. Each writes in
its own transaction.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from ingest import blobs, boilerplate
from ingest.actions.activity import ActivityCounter, PagesRead, do_report_activity
from ingest.actions.boilerplate import do_record_blocks
from ingest.actions.document_state import do_transition
from ingest.actions.duplicates import content_claim, do_hand_on_duplicates, do_mark_duplicate
from ingest.actions.embeddings import (
    chunks_to_embed,
    do_embed_chunks,
    do_index_chunk_contexts,
    needs_vector,
)
from ingest.actions.pipeline import StageReport
from ingest.actions.sources import run_deletion_hooks
from ingest.chunking import ChunkSpan, chunk_text
from ingest.embedding_lane import AheadChunk, get_lane, lane_of
from ingest.embeddings import EmbeddingUnavailable, get_embedder, get_token_counter
from ingest.indexed_text import RECIPE
from ingest.models import Chunk, Document, DocumentStatus, Source
from ingest.parsers import parse_isolated
from ingest.parsers.base import ParsedDocument, ParserLimits
from ingest.parsers.dates import CONTENT_SOURCES, own_date
from ingest.selectors import stored_vectors
from system import slices

logger = logging.getLogger(__name__)

_PARSED_OR_LATER = {
    DocumentStatus.PARSED,
    DocumentStatus.CHUNKED,
    DocumentStatus.EMBEDDED,
    DocumentStatus.EXTRACTED,
}


def parse(*, document: Document) -> None:
    """Raw bytes → text and metadata. Skipped when these exact bytes were parsed already.

    Content the workspace has parsed already (another upload, an overlapping crawl, a
    mirror page) is not parsed again: the document becomes that original's duplicate and
    shares its chunks, vectors and graph, so the content counts once
    (ingest/actions/duplicates.py). An original whose content changed first hands the
    chunks of its old content on to a duplicate of it.
    """
    if document.processed_hash == document.content_hash and document.status in _PARSED_OR_LATER:
        return
    do_hand_on_duplicates(document=document)
    if _became_duplicate(document):
        return
    # Parsed outside any transaction: a long PDF parses for minutes, and its progress
    # (ingest/actions/activity.py) must be visible meanwhile; nor may a transaction stay
    # open that long. An identical document parsed at the same moment is parsed twice,
    # and the second to save becomes the first's duplicate under the content's lock.
    parsed = _parse_file(document)
    _became_duplicate(document, otherwise=lambda: _save_parse(document, parsed))


def _became_duplicate(document: Document, otherwise: Callable[[], None] | None = None) -> bool:
    """Under the content's lock: make the document a duplicate if the workspace has parsed
    its bytes already, else run `otherwise` (save this document's parse)."""
    with content_claim(document) as original:
        if original is not None:
            do_mark_duplicate(document=document, original=original)
        elif otherwise is not None:
            otherwise()
    return original is not None


def _parse_file(document: Document) -> ParsedDocument:
    do_report_activity(
        source_id=document.source_id,
        stage="parsing",
        document=document.title or document.path,
        force=True,
    )
    return parse_isolated(
        blobs.read_blob(document.blob),
        filename=document.path.rsplit("/", 1)[-1],
        limits=ParserLimits.from_settings(),
        on_page=PagesRead(source_id=document.source_id, document=document.title or document.path),
    )


def _save_parse(document: Document, parsed: ParsedDocument) -> None:
    document.text = parsed.text
    document.title = parsed.title[:1000]
    document.format = parsed.format
    document.mime = parsed.mime
    document.metadata = {
        **parsed.metadata,
        "pages": [[p.number, p.start, p.end] for p in parsed.pages],
    }
    document.warnings = list(parsed.warnings)
    document.processed_hash = document.content_hash
    document.duplicate_of = None
    stated = own_date(parsed.metadata) if parsed.format in CONTENT_SOURCES else None
    if stated is not None:
        # The content's own date wins over the Last-Modified or file time it came with.
        document.published_at, document.published_source = stated, parsed.format
    do_transition(
        document=document,
        to=DocumentStatus.PARSED,
        error="",
        fields=(
            "text", "title", "format", "mime", "metadata", "warnings",
            "processed_hash", "duplicate_of", "published_at", "published_source",
        ),
    )  # fmt: skip


def _boilerplate_ranges(document: Document) -> list[tuple[int, int]]:
    """Record the document's lines for its source and return the spans of its text that
    the source repeats (ingest/boilerplate.py, ingest/actions/boilerplate.py)."""
    lines = boilerplate.lines(document.text)
    repeated = do_record_blocks(document=document, fingerprints=boilerplate.fingerprints(lines))
    if not repeated:
        return []
    return boilerplate.boilerplate_spans(lines, repeated, min_chars=settings.BOILERPLATE_MIN_CHARS)


def chunk(*, document: Document) -> None:
    """Text → chunks, reusing every existing chunk whose text is unchanged.

    Kept chunks keep their id, embedding and (later) everything derived from them; chunks
    whose text disappeared are deleted with what was derived from them. Text the source
    repeats across its documents (menus, footers) becomes chunks of its own flagged
    `boilerplate`, never mixed with content; a chunk whose flag changed is not kept (what
    was derived from it goes with it) but its vector is copied back by the embed stage.
    The document's lines are recorded for its source first, in a short transaction of
    their own (ingest/actions/boilerplate.py).
    """
    if document.status != DocumentStatus.PARSED:
        return
    # Written at once (one row update per document): a long PDF chunks for seconds, and the
    # parse's last page report, possibly halfway, must not stand for that time.
    do_report_activity(
        source_id=document.source_id,
        stage="chunking",
        document=document.title or document.path,
        force=True,
    )
    ranges = _boilerplate_ranges(document)
    counter, budget = get_token_counter()
    spans = chunk_text(
        document.text,
        counter=counter,
        max_tokens=settings.CHUNK_MAX_TOKENS or budget,
        overlap_tokens=settings.CHUNK_OVERLAP_TOKENS,
        boilerplate=ranges,
    )
    with transaction.atomic():
        _write_chunks(document, spans)


# What a kept chunk may change when its document is chunked again.
_CHUNK_PLACE = ("ordinal", "char_start", "char_end", "heading_path", "token_count")


def _write_chunks(document: Document, spans: list[ChunkSpan]) -> None:
    existing: dict[tuple[str, bool], list[Chunk]] = {}
    # Not the text, vector or search vector: a document chunked again (the boilerplate pass
    # sends documents round again, mostly to find their chunks unchanged) reads only these.
    for old in (
        Chunk.objects.filter(document=document)
        .only(*_CHUNK_PLACE, "content_hash", "boilerplate")
        .order_by("ordinal")
    ):
        existing.setdefault((old.content_hash, old.boilerplate), []).append(old)
    kept: list[Chunk] = []
    created: list[Chunk] = []
    for ordinal, span in enumerate(spans):
        same = existing.get((span.content_hash, span.boilerplate))
        if same:
            row = same.pop(0)
            place = (ordinal, span.start, span.end, list(span.heading_path), span.token_count)
            if place != tuple(getattr(row, name) for name in _CHUNK_PLACE):
                row.ordinal, row.char_start, row.char_end, row.heading_path, row.token_count = place
                kept.append(row)  # only rows that moved are written
        else:
            created.append(
                Chunk(
                    workspace_id=document.workspace_id,
                    document=document,
                    ordinal=ordinal,
                    text=span.text,
                    char_start=span.start,
                    char_end=span.end,
                    token_count=span.token_count,
                    heading_path=list(span.heading_path),
                    content_hash=span.content_hash,
                    boilerplate=span.boilerplate,
                )
            )
    stale = [row.pk for rows in existing.values() for row in rows]
    if stale:
        run_deletion_hooks(stale)
        Chunk.objects.filter(pk__in=stale).delete()
    Chunk.objects.bulk_update(kept, list(_CHUNK_PLACE), batch_size=500)
    Chunk.objects.bulk_create(created, batch_size=500)
    do_transition(document=document, to=DocumentStatus.CHUNKED)


def group_prepared[F: Callable[..., StageReport | None]](
    prepare: Callable[..., StageReport | None],
    *,
    each: Callable[..., None] | None = None,
    wanted: Callable[[], bool] | None = None,
) -> Callable[[F], F]:
    """Mark a stage as having a group step (taken only while `wanted()`, when given), and
    optionally a step for each document as it reaches the stage (see
    ingest/actions/pipeline.py)."""

    def mark(stage: F) -> F:
        stage.prepare_group = prepare  # type: ignore[attr-defined]
        if each is not None:
            stage.prepare_each = each  # type: ignore[attr-defined]
        if wanted is not None:
            stage.group_wanted = wanted  # type: ignore[attr-defined]
        return stage

    return mark


def _send_ahead(*, document_id: int) -> None:
    """A chunked document's chunks that need vectors, sent to the embedding lane at once:
    the model works on them while the group's next documents are parsed and chunked and
    its earlier ones extracted (ingest/embedding_lane.py). Each goes as its indexed text
    (ingest/indexed_text.py), keyed by that text's hash; chunks whose indexed text has a
    vector in the workspace already are left for the stage to copy."""
    lane = get_lane()
    if lane is None or lane.holds(document_id):
        return  # off, or sent by an earlier slice of the same task's work
    document = (
        Document.objects.filter(pk=document_id, status=DocumentStatus.CHUNKED)
        .only("pk", "workspace_id")
        .first()
    )
    if document is None:
        return
    chunks = chunks_to_embed(
        Chunk.objects.filter(document=document).filter(needs_vector(lane.model_id)),
        counter=lane.counter,
        budget=lane.chunk_token_budget,
    )
    known = set(
        stored_vectors(
            workspace_id=document.workspace_id,
            model_id=lane.model_id,
            hashes={c.content_hash for c in chunks},
        )
        .filter(embedding_recipe=RECIPE)
        .values_list("content_hash", "context")
    )
    todo = [
        AheadChunk(c.id, c.indexed.key, c.indexed.text)
        for c in chunks
        if (c.content_hash, c.indexed.context) not in known
    ]
    if todo:
        lane.send(document_id, todo)


def _embed_group(*, document_ids: list[int]) -> None:
    """Embed the chunks of a whole group in one call: sorting a few hundred chunks by
    length before batching costs measurably less than a document's twenty at a time.
    With the embedding lane on, each document was sent ahead instead."""
    try:
        embedder = get_embedder()
    except EmbeddingUnavailable:
        return  # the embed stage of each document records why
    if get_lane() is not None:
        return
    ready = Document.objects.filter(pk__in=document_ids, status=DocumentStatus.CHUNKED)
    # A current vector whose context changed is current no more; the other chunks get
    # their context with their vector.
    do_index_chunk_contexts(
        chunks=Chunk.objects.filter(document__in=ready).exclude(needs_vector(embedder.model_id))
    )
    for source_id, workspace_id in set(ready.values_list("source_id", "workspace_id")):
        _embed_reporting(
            Chunk.objects.filter(document__in=ready.filter(source_id=source_id)).filter(
                needs_vector(embedder.model_id)
            ),
            source_id=source_id,
            workspace_id=workspace_id,
        )


def _embed_reporting(
    chunks: QuerySet[Chunk],
    *,
    source_id: int,
    workspace_id: int,
    document: str = "",
    sent_ahead: Callable[[list[tuple[int, str]]], dict[int, list[float]]] | None = None,
) -> None:
    """Embed `chunks`, reporting live how many of how many are done (ingest/actions/
    activity.py)."""
    total = chunks.count()
    if not total:
        return
    do_embed_chunks(
        chunks=chunks,
        workspace_id=workspace_id,
        on_progress=ActivityCounter(
            source_id=source_id, stage="embedding", unit="chunks", total=total, document=document
        ),
        sent_ahead=sent_ahead,
    )


@group_prepared(_embed_group, each=_send_ahead)
def embed(*, document: Document) -> None:
    """Vectors for this document's chunks that lack one of their indexed text (its title
    and heading path, then the chunk's text: ingest/indexed_text.py) from the current model.

    Each chunk's context (what the full-text index reads before its text) is written with
    its vector, or alone without a model; a chunk whose context changed (its heading path
    or its document's title did) is embedded again. A vector already computed for the same
    indexed text in this workspace is copied, not recomputed. Without a usable model the
    document goes on without vectors and the source says why.
    """
    if document.status not in {DocumentStatus.CHUNKED, DocumentStatus.EMBEDDED}:
        return
    chunks = Chunk.objects.filter(document=document)
    try:
        embedder = get_embedder()
    except EmbeddingUnavailable as exc:
        do_index_chunk_contexts(chunks=chunks)
        warning = (
            f"No embeddings: {exc}. Keyword search works; "
            "run `manage.py backfill_embeddings` once the model is available."
        )
        Source.objects.filter(pk=document.source_id).exclude(warning=warning).update(
            warning=warning
        )
    else:
        # A current vector whose context changed is current no more; the other chunks get
        # their context with their vector.
        do_index_chunk_contexts(chunks=chunks.exclude(needs_vector(embedder.model_id)))
        lane = lane_of(embedder)
        _embed_reporting(
            chunks.filter(needs_vector(embedder.model_id)),
            source_id=document.source_id,
            workspace_id=document.workspace_id,
            document=document.title or document.path,
            sent_ahead=None
            if lane is None
            else functools.partial(lane.vectors, document.pk, wait=slices.checkpoint),
        )
        if lane is not None:
            lane.forget([document.pk])
    do_transition(document=document, to=DocumentStatus.EMBEDDED)
