"""Compute and store chunk embeddings (pipeline stage and backfill share this)."""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection, transaction
from django.db.models import QuerySet
from django.db.models.functions import Length

from ingest.embeddings import get_embedder, vector_literal
from ingest.models import Chunk
from ingest.selectors import stored_vectors
from system import slices


def do_embed_chunks(
    *,
    chunks: QuerySet[Chunk],
    workspace_id: int,
    batch_size: int = 32,
    on_progress: Callable[[int], object] | None = None,
    sent_ahead: Callable[[list[tuple[int, str]]], dict[int, list[float]]] | None = None,
) -> int:
    """Give every chunk of `chunks` a vector from the current model; returns how many were
    computed. A vector already stored for the same text in this workspace (same model) is
    copied instead of recomputed. Each batch commits on its own, so an interrupted run
    keeps what it finished, and each is a checkpoint of the work slice (system/slices.py):
    a cancel or a worker's stop waits for one batch (a few seconds) at most.

    Chunks go in order of length: the model pads a batch to its longest text, so batches of
    similar lengths cost what one big length-sorted call would, while staying short.

    `sent_ahead` gives the vectors computed ahead for (chunk id, content hash) pairs
    (ingest/embedding_lane.py), waiting for them; whatever it does not give is computed
    here."""
    embedder = get_embedder()
    computed = 0
    pending = list(chunks.only("id", "text", "content_hash").order_by(Length("text"), "id"))
    for start in range(0, len(pending), batch_size):
        if start:
            slices.checkpoint()
        batch = pending[start : start + batch_size]
        known = dict(
            stored_vectors(
                workspace_id=workspace_id,
                model_id=embedder.model_id,
                hashes={c.content_hash for c in batch},
            ).values_list("content_hash", "embedding")
        )
        todo = [c for c in batch if c.content_hash not in known]
        vectors = sent_ahead([(c.pk, c.content_hash) for c in todo]) if sent_ahead else {}
        rest = [c for c in todo if c.pk not in vectors]
        computed_here = embedder.encode([c.text for c in rest])
        vectors.update(zip((c.pk for c in rest), computed_here, strict=True))
        computed += len(todo)
        rows = [
            (
                # `known` holds no NULL vector (excluded above).
                vector_literal(vectors[c.pk] if c.pk in vectors else known[c.content_hash]),  # type: ignore[arg-type]
                embedder.model_id,
                embedder.dimension,
                c.pk,
            )
            for c in batch
        ]
        # One prepared UPDATE per row, pipelined by psycopg: several times faster than
        # bulk_update's CASE expression over 384-float literals.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE ingest_chunk SET embedding = %s::vector, embedding_model = %s, "
                "embedding_dim = %s WHERE id = %s",
                rows,
            )
        if on_progress is not None:
            on_progress(len(batch))
    return computed


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
