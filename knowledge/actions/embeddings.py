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
import threading
from collections.abc import Callable
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet

from ingest.embeddings import EmbeddingUnavailable, get_embedder, vector_literal
from knowledge.models import Entity

logger = logging.getLogger(__name__)

# The fields of an entity without a vector: what `backfill_embeddings` looks for.
NO_VECTOR: dict[str, Any] = {"embedding": None, "embedding_model": "", "embedding_dim": None}
VECTOR_FIELDS = tuple(NO_VECTOR)


# Name vectors this process made, by (model id, name): the vector of a name depends on
# nothing else. Why: resolution embeds each window's new names as it writes the window, and
# the model's cost is per call far more than per short name (every call runs all layers, and
# a name is a few tokens), so a batch of documents has its new names embedded in one call
# first (`prefetch_name_vectors`) and each window then finds its names here. Bounded: it is
# emptied when full, which only costs a name being embedded again.
NAME_VECTOR_CACHE_SIZE = 50_000
# Names per forward pass: a name is a few tokens, so a pass costs what its layers cost, not
# its length; 128 a pass embedded 429 names 3.3x faster than the chunks' 16 (bench/
# doc_quality.py speed).
NAME_BATCH_SIZE = 128
_name_cache: dict[tuple[str, str], list[float]] = {}
_name_cache_lock = threading.Lock()


def name_vectors(name_list: list[str]) -> dict[str, Any]:
    """Embeddings of names, keyed by name (plus "model" and "dim"); empty when the
    embedding model is unavailable (consolidation's embedding tier is then skipped, as
    search degrades). Names embedded before in this process are not embedded again."""
    try:
        embedder = get_embedder()
    except EmbeddingUnavailable:
        return {}
    model = embedder.model_id
    unique = sorted(set(name_list))
    with _name_cache_lock:
        vectors: dict[str, Any] = {
            name: _name_cache[(model, name)] for name in unique if (model, name) in _name_cache
        }
    missing = [name for name in unique if name not in vectors]
    if missing:
        made = dict(zip(missing, embedder.encode(missing, batch_size=NAME_BATCH_SIZE), strict=True))
        with _name_cache_lock:
            if len(_name_cache) + len(made) > NAME_VECTOR_CACHE_SIZE:
                _name_cache.clear()
            _name_cache.update(((model, name), vector) for name, vector in made.items())
        vectors.update(made)
    vectors["model"] = model
    vectors["dim"] = embedder.dimension
    return vectors


def prefetch_name_vectors(name_list: list[str]) -> None:
    """Embed these names in one call now, so that `name_vectors` finds them later (the
    names a batch of documents is about to create, before its windows are resolved one
    by one). Nothing happens without the model."""
    name_vectors(name_list)


def forget_name_vectors() -> None:
    """Empty the cache of name vectors (tests; after the model's files changed in a live
    process)."""
    with _name_cache_lock:
        _name_cache.clear()


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
            (vector_literal(vectors[name]), embedder.model_id, embedder.dimension, pk, name)
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
