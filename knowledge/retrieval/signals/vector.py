"""The vector signals: the query's embedding against chunk embeddings of the same model
(HNSW, cosine; the partial expression index per dimension, `embedding::vector(384)`), and
against entity name embeddings (`entity_embedding_hnsw_384`).

Without an embedding model there is no query vector, and the search degrades to keyword,
recognition and graph (saying so in its warnings).
"""

from __future__ import annotations

import re
from typing import Any

from django.db import connection, transaction

from ingest.embeddings import EmbeddingUnavailable, get_embedder
from knowledge.retrieval.limits import ENTITY_LIMIT
from knowledge.retrieval.signals.scope import DocumentScope, scope_clause
from knowledge.retrieval.types import QueryVector

# Below this an entity's name is no match for the query at all (the nearest names of a
# workspace come back whatever the query): not returned for its vector alone.
ENTITY_MIN_SIMILARITY = 0.3


def embed_query(text: str, warnings: list[str]) -> QueryVector | None:
    """The query's vector, or None (and a warning) when no embedding model is available."""
    try:
        embedder = get_embedder()
    except EmbeddingUnavailable as exc:
        warnings.append(f"vector search skipped: embedding model unavailable ({exc})")
        return None
    return QueryVector(model=embedder.model_id, values=embedder.encode([text])[0])


_iterative_scan: dict[str, bool] = {}


def _supports_iterative_scan() -> bool:
    """pgvector >= 0.8 can keep walking the HNSW graph until enough rows pass the
    workspace filter (the index is shared by every workspace); older versions cannot."""
    key = str(connection.settings_dict.get("NAME"))
    if key not in _iterative_scan:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
        version = tuple(int(p) for p in re.findall(r"\d+", row[0] if row else "0")[:2])
        _iterative_scan[key] = version >= (0, 8)
    return _iterative_scan[key]


def vector_signals(
    workspace_id: int,
    vector: QueryVector,
    candidates: int,
    scope: DocumentScope | None,
    type_ids: list[int] | None,
) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """(chunk id, cosine similarity) and (entity id, similarity), closest first; at most
    `candidates` chunks and ENTITY_LIMIT entities.

    Both ORDER BY the exact expression of the partial HNSW indexes (the dimension is a
    literal, so the planner can match `embedding_dim = 384` to the index predicate)."""
    dim = vector.dimension
    if not 0 < dim <= 16000:
        return [], []
    literal = "[" + ",".join(repr(float(v)) for v in vector.values) + "]"
    chunk_params: list[Any] = [literal, workspace_id, vector.model]
    chunk_sql = (
        # The dimension is an int, the alias ours; values are parameters.
        f"SELECT c.id, (c.embedding::vector({dim})) <=> %s::vector({dim}) AS distance "  # noqa: S608
        f"FROM ingest_chunk c WHERE c.embedding_dim = {dim} AND c.workspace_id = %s "
        # Boilerplate (menus, footers: ingest/boilerplate.py) is never an answer.
        f"AND c.embedding_model = %s AND NOT c.boilerplate"
    )
    chunk_sql += scope_clause("c", scope, chunk_params)
    chunk_sql += " ORDER BY distance LIMIT %s"
    chunk_params.append(candidates)
    entity_params: list[Any] = [literal, workspace_id, vector.model]
    entity_sql = (
        f"SELECT e.id, (e.embedding::vector({dim})) <=> %s::vector({dim}) AS distance "  # noqa: S608
        f"FROM knowledge_entity e WHERE e.embedding_dim = {dim} AND e.state = 'active' "
        f"AND e.workspace_id = %s AND e.embedding_model = %s"
    )
    if type_ids is not None:
        entity_sql += " AND e.type_id = ANY(%s)"
        entity_params.append(type_ids)
    entity_sql += " ORDER BY distance LIMIT %s"
    entity_params.append(min(candidates, ENTITY_LIMIT))
    with transaction.atomic(), connection.cursor() as cursor:
        # pgvector >= 0.8 walks on (iterative scan) until LIMIT rows passed the filters,
        # with the default ef_search (40): measured at 100k chunks, raising it only costs
        # time. Older versions return at most ef_search rows: raise it to the candidates.
        # Either setting lasts until the end of this transaction.
        if _supports_iterative_scan():
            cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
        else:
            ef_search = str(min(1000, max(40, candidates)))
            cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [ef_search])
        cursor.execute(chunk_sql, chunk_params)
        chunk_rows = cursor.fetchall()
        cursor.execute(entity_sql, entity_params)
        entity_rows = cursor.fetchall()
    return _ranked(chunk_rows), _ranked(entity_rows)


def _ranked(rows: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """(id, similarity) closest first: relaxed_order may return a slightly unsorted list."""
    rows = sorted(rows, key=lambda r: (r[1], r[0]))
    return [(int(pk), round(1.0 - float(d), 6)) for pk, d in rows if d is not None]
