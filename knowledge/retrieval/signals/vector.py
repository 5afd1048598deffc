"""The vector signals: the query's embedding against chunk embeddings of the same model
(HNSW, cosine; the partial expression index per dimension, `embedding::vector(384)`), and
against entity name embeddings (`entity_embedding_hnsw_384`).

Without an embedding model there is no query vector, and the search degrades to keyword,
recognition and graph (saying so in its warnings).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from ingest.embeddings import vector_literal
from ingest.selectors import walk_ef_search
from ingest.vector_tables import CHUNK_VECTORS, VectorTable
from knowledge.models import ENTITY_VECTORS
from knowledge.retrieval.limits import ENTITY_LIMIT
from knowledge.retrieval.signals.scope import DocumentScope, scope_clause
from knowledge.retrieval.types import QueryVector

# Below this an entity's name is no match for the query at all (the nearest names of a
# workspace come back whatever the query): not returned for its vector alone.
ENTITY_MIN_SIMILARITY = 0.3


# The candidate list of an HNSW walk (pgvector's default is 40). At 1M chunks / 200k names
# in 50 workspaces (bench/vector_recall.py) 100 found the big tenant's nearest names far
# more often (entity search recall@10 0.94 -> 1.0, consolidation's nearest name 0.88 ->
# 0.99) for ~2 ms more; chunk recall hardly moved.
EF_SEARCH = 100

_iterative_scan: dict[str, bool] = {}

# Whether a workspace's chunks / active entities are too many to compare exactly is
# counted (up to VECTOR_EXACT_MAX_ROWS + 1 rows on its b-trees, ~2-4 ms at 100k chunks,
# on every search) until the answer is "too many"; that answer is then kept this long per
# workspace: a workspace that large rarely shrinks below the bound, and if it does, the
# index's walk still answers, redone exactly when it comes back short. A small workspace
# is counted every time (quick, and it may be being filled).
LARGE_TTL_SECONDS = 300.0
# (database, workspace, bound, "chunks" | "entities") -> when it was counted above the bound
_large: dict[tuple[str, int, int, str], float] = {}
# Each table's rows of a workspace, counted no further than the bound (every row, whatever
# its model: an upper bound of what is compared).
_COUNTS = {
    "chunks": "(SELECT count(*) FROM (SELECT 1 FROM ingest_chunk WHERE workspace_id = %s "
    "LIMIT %s) AS c)",
    "entities": "(SELECT count(*) FROM (SELECT 1 FROM knowledge_entity WHERE "
    "workspace_id = %s AND state = 'active' LIMIT %s) AS e)",
}


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
    `candidates` chunks and ENTITY_LIMIT entities, the same as an exact search finds.

    The HNSW indexes are shared by every workspace and know nothing of them: a walk goes
    through the nearest vectors of the whole database and drops the other workspaces'
    rows. The planner reads a small workspace's rows instead (exact), but from a few
    thousand rows on it walks, and a walk finds the rows it passes, not the nearest: at 1M
    chunks / 200k names in 50 workspaces (bench/vector_recall.py) a workspace of 4,000
    names got 58% of its true nearest for questions other tenants write much about. So a
    workspace with at most VECTOR_EXACT_MAX_ROWS rows is compared exactly (its own rows,
    through the workspace b-tree), a larger one walks the index (iterative scan) and is
    compared exactly after all when the walk comes back short (its rows few or far). A
    larger workspace that is a small share of the database has an index of its own rows
    (ingest/actions/vector_indexes.py): the planner walks that one instead, with the
    longer candidate list VECTOR_WORKSPACE_INDEX_EF_SEARCH, which its own rows need for
    questions far from all of them."""
    dim = vector.dimension
    if not 0 < dim <= 16000:
        return [], []
    literal = vector_literal(vector.values)
    entity_limit = min(candidates, ENTITY_LIMIT)

    def chunk_sql(exact: bool) -> tuple[str, list[Any]]:
        params: list[Any] = [literal, workspace_id, vector.model]
        sql = (
            # The dimension is an int, the alias ours; values are parameters.
            f"SELECT c.id, {_column('c', dim, exact)} <=> %s::vector({dim}) AS distance "  # noqa: S608
            f"FROM ingest_chunk c WHERE c.embedding_dim = {dim} AND c.workspace_id = %s "
            # Boilerplate (menus, footers: ingest/boilerplate.py) is never an answer.
            f"AND c.embedding_model = %s AND NOT c.boilerplate"
        )
        sql += scope_clause("c", scope, params)
        params.append(candidates)
        return sql + " ORDER BY distance LIMIT %s", params

    def entity_sql(exact: bool) -> tuple[str, list[Any]]:
        params: list[Any] = [literal, workspace_id, vector.model]
        sql = (
            f"SELECT e.id, {_column('e', dim, exact)} <=> %s::vector({dim}) AS distance "  # noqa: S608
            f"FROM knowledge_entity e WHERE e.embedding_dim = {dim} AND e.state = 'active' "
            f"AND e.workspace_id = %s AND e.embedding_model = %s"
        )
        if type_ids is not None:
            sql += " AND e.type_id = ANY(%s)"
            params.append(type_ids)
        params.append(entity_limit)
        return sql + " ORDER BY distance LIMIT %s", params

    with transaction.atomic(), connection.cursor() as cursor:
        few_chunks, few_entities = _prepare(cursor, workspace_id, candidates)
        # _prepare set the shared index's ef_search; a walk of a workspace's own index
        # (ingest/actions/vector_indexes.py) takes a longer list. An exact one walks nothing.
        shared = _ef_search(candidates)
        chunk_ef = shared if few_chunks else _own_ef(CHUNK_VECTORS, workspace_id, dim, shared)
        entity_ef = shared if few_entities else _own_ef(ENTITY_VECTORS, workspace_id, dim, shared)
        _set_ef_search(cursor, chunk_ef, was=shared)
        chunk_rows = _nearest(cursor, chunk_sql, candidates, exact=few_chunks)
        _set_ef_search(cursor, entity_ef, was=chunk_ef)
        entity_rows = _nearest(cursor, entity_sql, entity_limit, exact=few_entities)
    return _ranked(chunk_rows), _ranked(entity_rows)


def _own_ef(vectors: VectorTable, workspace_id: int, dimension: int, shared: int) -> int:
    return walk_ef_search(vectors, workspace_id=workspace_id, dimension=dimension, shared=shared)


def _set_ef_search(cursor: Any, value: int, *, was: int) -> None:
    if value != was:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(value)])


def _ef_search(candidates: int) -> int:
    return min(1000, max(EF_SEARCH, candidates))


def _column(alias: str, dim: int, exact: bool) -> str:
    """The vector as the partial HNSW index reads it (the ORDER BY then walks the index),
    or the bare column, which no index serves: the same distances, compared exactly."""
    return f"{alias}.embedding" if exact else f"({alias}.embedding::vector({dim}))"


def _prepare(cursor: Any, workspace_id: int, candidates: int) -> tuple[bool, bool]:
    """Set up this transaction's index walks, and tell whether the workspace's chunks and
    its active entities are few enough (VECTOR_EXACT_MAX_ROWS) to be compared exactly: one
    statement, the rows counted on the workspace's b-trees and no further than the bound
    (every row of the workspace, whatever its model: an upper bound of what is compared),
    and not at all while an earlier count above the bound is recent (LARGE_TTL_SECONDS).

    pgvector >= 0.8 walks on (iterative scan) until LIMIT rows passed the filters or
    VECTOR_MAX_SCAN_TUPLES were read; older versions return at most ef_search rows, so it
    is raised to the candidates. Either way a short answer is redone exactly. ef_search is
    at least EF_SEARCH."""
    bound = settings.VECTOR_EXACT_MAX_ROWS
    ef_search = str(_ef_search(candidates))
    if _supports_iterative_scan():
        walk = (
            "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
            "set_config('hnsw.max_scan_tuples', %s, true), set_config('hnsw.ef_search', %s, true)"
        )
        params: list[Any] = [str(settings.VECTOR_MAX_SCAN_TUPLES), ef_search]
    else:
        walk = "set_config('hnsw.ef_search', %s, true)"
        params = [ef_search]
    database = str(connection.settings_dict.get("NAME"))
    now = time.monotonic()
    counted: list[str] = []
    sql = f"SELECT {walk}"
    for table, count_sql in _COUNTS.items():
        seen = _large.get((database, workspace_id, bound, table))
        if seen is None or now - seen >= LARGE_TTL_SECONDS:
            counted.append(table)
            sql += f", {count_sql}"
            params += [workspace_id, bound + 1]
    cursor.execute(sql, params)  # our SQL; values are parameters
    row = cursor.fetchone()
    few = dict.fromkeys(_COUNTS, False)
    for table, count in zip(counted, row[len(row) - len(counted) :], strict=True):
        few[table] = int(count) <= bound
        if not few[table]:
            _large[(database, workspace_id, bound, table)] = now
    return few["chunks"], few["entities"]


def _nearest(
    cursor: Any, sql: Callable[[bool], tuple[str, list[Any]]], limit: int, *, exact: bool
) -> list[tuple[int, float]]:
    """The rows of `sql(exact)`: exactly when asked, else from the index, and exactly
    after all when the index's walk found fewer than `limit` (it stops at
    VECTOR_MAX_SCAN_TUPLES: the workspace's rows are then few, filtered out or far)."""
    if not exact:
        cursor.execute(*sql(False))
        rows: list[tuple[int, float]] = cursor.fetchall()
        if len(rows) >= limit:
            return rows
    cursor.execute(*sql(True))
    return cursor.fetchall()


def _ranked(rows: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """(id, similarity) closest first: relaxed_order may return a slightly unsorted list."""
    rows = sorted(rows, key=lambda r: (r[1], r[0]))
    return [(int(pk), round(1.0 - float(d), 6)) for pk, d in rows if d is not None]
