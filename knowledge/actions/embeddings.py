"""Entity name vectors: made when a name is made or changed, filled in and rebuilt later.

An entity's `embedding` is the vector of its display name from the configured embedding
model, recorded with that model's id and dimension; consolidation's nearest-name tier and
retrieval's entity signal read only vectors of the current model. They stay true because
- a new entity (resolution), a renamed one and one split off (curation) get the vector of
  their name when the model is available, and none when it is not — never the vector of a
  name they no longer have, and never a failed rename for want of a vector;
- `do_backfill_entity_embeddings` (`manage.py backfill_embeddings`) fills in the missing
  ones and rebuilds those another model made (after EMBEDDING_MODEL changed), one batch
  per transaction, so an interrupted run keeps what it finished;
- the health report counts what is left (`knowledge.selectors.vectors.vector_counts`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet

from ingest.embeddings import EmbeddingUnavailable, get_embedder
from knowledge.models import Entity

logger = logging.getLogger(__name__)

# The fields of an entity without a vector: what `backfill_embeddings` looks for.
NO_VECTOR: dict[str, Any] = {"embedding": None, "embedding_model": "", "embedding_dim": None}
VECTOR_FIELDS = tuple(NO_VECTOR)


def name_vectors(name_list: list[str]) -> dict[str, Any]:
    """Embeddings of names, keyed by name (plus "model" and "dim"); empty when the
    embedding model is unavailable (consolidation's embedding tier is then skipped, as
    search degrades)."""
    try:
        embedder = get_embedder()
    except EmbeddingUnavailable:
        return {}
    unique = sorted(set(name_list))
    vectors: dict[str, Any] = dict(zip(unique, embedder.encode(unique), strict=True))
    vectors["model"] = embedder.model_id
    vectors["dim"] = embedder.dimension
    return vectors


def embedding_fields(vectors: dict[str, Any], name: str) -> dict[str, Any]:
    """The entity fields for `name` from `name_vectors`' answer (none if it has no vector)."""
    if name not in vectors:
        return {}
    return {
        "embedding": vectors[name],
        "embedding_model": vectors["model"],
        "embedding_dim": vectors["dim"],
    }


def vector_fields_for(name: str) -> dict[str, Any]:
    """The embedding fields of an entity called `name`: its vector from the current model,
    or no vector at all (for the backfill to fill in) when the model is unavailable or
    fails. Never raises: curation must not fail for want of a vector."""
    try:
        fields = embedding_fields(name_vectors([name]), name)
    except Exception:  # a model that loaded but cannot encode: the backfill will say why
        logger.warning("Could not embed the name %r; left for backfill_embeddings", name)
        fields = {}
    return fields or dict(NO_VECTOR)


def do_backfill_entity_embeddings(
    *,
    entities: QuerySet[Entity],
    batch_size: int = 256,
    on_progress: Callable[[int], object] | None = None,
) -> int:
    """Give every entity of `entities` the vector of its name from the current model
    (EmbeddingUnavailable when there is none); returns how many were written. Each distinct
    name is encoded once per batch, and each batch commits on its own. An entity renamed
    while the batch was being encoded keeps the vector its rename gave it."""
    embedder = get_embedder()
    pending = list(entities.order_by("pk").values_list("pk", "name"))
    written = 0
    for start in range(0, len(pending), batch_size):
        batch = pending[start : start + batch_size]
        unique = sorted({name for _, name in batch})
        vectors = dict(zip(unique, embedder.encode(unique), strict=True))
        rows = [
            (_vector_literal(vectors[name]), embedder.model_id, embedder.dimension, pk, name)
            for pk, name in batch
        ]
        # One prepared UPDATE per row, pipelined by psycopg (as for chunks); the name in the
        # WHERE clause skips a row renamed meanwhile.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {Entity._meta.db_table} SET embedding = %s::vector, "  # noqa: S608
                "embedding_model = %s, embedding_dim = %s WHERE id = %s AND name = %s",
                rows,
            )
        written += len(batch)
        if on_progress is not None:
            on_progress(len(batch))
    return written


def do_ensure_entity_vector_index(*, dimension: int) -> str:
    """Create the HNSW cosine index over active entities' name vectors of `dimension` if
    missing (migration 0004 made the default model's, 384); returns its name. One partial
    expression index per dimension in use, as for chunks."""
    dim = int(dimension)
    name = f"entity_embedding_hnsw_{dim}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
        if cursor.fetchone():
            return name
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {Entity._meta.db_table} "
            f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) "
            f"WHERE embedding_dim = {dim} AND state = 'active'"
        )
    return name


def _vector_literal(vector: object) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"  # type: ignore[attr-defined]
