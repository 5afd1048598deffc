"""Compute and store chunk embeddings and what the chunks are indexed under (pipeline stage
and backfill share this).

What the model and the full-text index read for a chunk is its indexed text
(ingest/indexed_text.py): its document's title and heading path, then its own text. Every
vector is written with the `context` it was computed from and the recipe's number
(`Chunk.embedding_recipe`), so a chunk's vector is current exactly when its model and
recipe are: a query, for the stage, the lane and `backfill_embeddings` alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import batched

from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Left

from ingest.embeddings import Embedder, TokenCounter, get_embedder, vector_literal
from ingest.indexed_text import OPENING_CHARS, RECIPE, IndexedText, chunk_context, indexed_text
from ingest.models import Chunk
from ingest.selectors import stored_vectors
from system import slices

# Chunks read from the database at a time (each page sorted by length, then embedded in
# batches): a whole workspace's text is never held at once.
PAGE_CHUNKS = 1024


@dataclass(frozen=True, slots=True)
class ChunkToEmbed:
    """A chunk and the text its vector is computed from."""

    id: int
    content_hash: str
    indexed: IndexedText


def needs_vector(model_id: str) -> Q:
    """Chunks whose vector is missing, of another model, or not computed from their
    current indexed text (another recipe, or a context changed since)."""
    return ~Q(embedding_model=model_id, embedding_recipe=RECIPE)


def chunks_to_embed(
    chunks: QuerySet[Chunk], *, counter: TokenCounter, budget: int
) -> list[ChunkToEmbed]:
    """`chunks` with their indexed text, each under its own document's title (a
    duplicate document shares its original's chunks, and so its title)."""
    rows = chunks.values_list(
        "pk", "content_hash", "text", "heading_path", "boilerplate", "document__title"
    )
    return [
        ChunkToEmbed(
            id=pk,
            content_hash=digest,
            indexed=indexed_text(
                title=title,
                heading_path=path or [],
                text=text,
                counter=counter,
                budget=budget,
                boilerplate=boilerplate,
            ),
        )
        for pk, digest, text, path, boilerplate, title in rows
    ]


def _pages(chunks: QuerySet[Chunk]) -> Iterator[QuerySet[Chunk]]:
    """`chunks` PAGE_CHUNKS at a time, in order of id (from where the last page ended)."""
    last = 0
    while ids := list(
        chunks.filter(pk__gt=last).order_by("pk").values_list("pk", flat=True)[:PAGE_CHUNKS]
    ):
        last = ids[-1]
        yield Chunk.objects.filter(pk__in=ids)


def do_embed_chunks(
    *,
    chunks: QuerySet[Chunk],
    workspace_id: int,
    batch_size: int = 32,
    on_progress: Callable[[int], object] | None = None,
    sent_ahead: Callable[[list[tuple[int, str]]], dict[int, list[float]]] | None = None,
) -> int:
    """Give every chunk of `chunks` a vector of its indexed text from the current model,
    with the context it was computed from; returns how many were computed. A vector already
    stored for the same indexed text in this workspace (same model, same recipe: the same
    text under the same context) is copied instead of recomputed, and one text is encoded
    once per batch. Each batch commits on its own, so an interrupted run keeps what it
    finished, and each is a checkpoint of the work slice (system/slices.py): a cancel or a
    worker's stop waits for one batch (a few seconds) at most.

    Chunks go in order of length, a page of PAGE_CHUNKS at a time: the model pads a batch
    to its longest text, so batches of similar lengths cost what one big length-sorted call
    would, while staying short.

    `sent_ahead` gives the vectors computed ahead for (chunk id, indexed text key) pairs
    (ingest/embedding_lane.py), waiting for them; whatever it does not give is computed
    here."""
    embedder = get_embedder()
    computed = 0
    first = True
    for page in _pages(chunks):
        pending = sorted(
            chunks_to_embed(page, counter=embedder.counter, budget=embedder.chunk_token_budget),
            key=lambda c: (len(c.indexed.text), c.id),
        )
        for batch in batched(pending, batch_size):
            if not first:
                slices.checkpoint()
            first = False
            computed += _embed_batch(
                list(batch), embedder=embedder, workspace_id=workspace_id, sent_ahead=sent_ahead
            )
            if on_progress is not None:
                on_progress(len(batch))
    return computed


def _embed_batch(
    batch: list[ChunkToEmbed],
    *,
    embedder: Embedder,
    workspace_id: int,
    sent_ahead: Callable[[list[tuple[int, str]]], dict[int, list[float]]] | None,
) -> int:
    known: dict[tuple[str, str], list[float]] = {
        (digest, context): vector
        for digest, context, vector in stored_vectors(
            workspace_id=workspace_id,
            model_id=embedder.model_id,
            hashes={c.content_hash for c in batch},
        )
        .filter(embedding_recipe=RECIPE)
        .values_list("content_hash", "context", "embedding")
        if vector is not None
    }
    todo = [c for c in batch if (c.content_hash, c.indexed.context) not in known]
    vectors = sent_ahead([(c.id, c.indexed.key) for c in todo]) if sent_ahead else {}
    texts = list(dict.fromkeys(c.indexed.text for c in todo if c.id not in vectors))
    by_text = dict(zip(texts, embedder.encode(texts), strict=True))
    for c in todo:
        if c.id not in vectors:
            vectors[c.id] = by_text[c.indexed.text]
    rows = [
        (
            vector_literal(
                vectors[c.id] if c.id in vectors else known[(c.content_hash, c.indexed.context)]
            ),
            embedder.model_id,
            embedder.dimension,
            c.indexed.context,
            RECIPE,
            c.id,
        )
        for c in batch
    ]
    # One prepared UPDATE per row, pipelined by psycopg: several times faster than
    # bulk_update's CASE expression over 384-float literals.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE ingest_chunk SET embedding = %s::vector, embedding_model = %s, "
            "embedding_dim = %s, context = %s, embedding_recipe = %s WHERE id = %s",
            rows,
        )
    return len(todo)


def do_index_chunk_contexts(*, chunks: QuerySet[Chunk]) -> int:
    """Write the context (title and heading path) each chunk of `chunks` is indexed under
    where it changed, so the full-text index reads it with or without an embedding model;
    a chunk whose context changed no longer has a vector of its indexed text (its recipe
    is reset, and the embed stage or `backfill_embeddings` computes it again). Returns how
    many changed. One transaction."""
    rows = chunks.values_list(
        "pk", "context", Left("text", OPENING_CHARS), "heading_path", "boilerplate",
        "document__title",
    )  # fmt: skip
    changed = []
    for pk, stored, opening, path, boilerplate, title in rows:
        context = chunk_context(
            title=title, heading_path=path or [], text=opening, boilerplate=boilerplate
        )
        if context != stored:
            changed.append((context, pk))
    if changed:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE ingest_chunk SET context = %s, embedding_recipe = 0 WHERE id = %s",
                changed,
            )
    return len(changed)


def do_ensure_vector_index(*, dimension: int) -> str:
    """Create the HNSW cosine index for vectors of `dimension` if missing; returns its name.

    Chunks may hold vectors of any dimension (the model is a setting); pgvector indexes one
    dimension, so each dimension in use gets a partial expression index of its own.
    """
    name = f"chunk_embedding_hnsw_{int(dimension)}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
        if cursor.fetchone():
            return name
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON ingest_chunk "
            f"USING hnsw ((embedding::vector({int(dimension)})) vector_cosine_ops) "
            f"WHERE embedding_dim = {int(dimension)}"
        )
    return name
