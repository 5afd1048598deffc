"""A workspace's own HNSW index of its vectors (chunks; the knowledge app's entity names use
the same), for workspaces too large to compare exactly and too small a share of the
database for the shared index to serve them.

The shared index (`chunk_embedding_hnsw_<dim>`, one per dimension) knows no workspaces: a
walk for one goes through the nearest vectors of all of them and keeps the workspace's,
and for a tenant holding 8% of a 1M-chunk database it missed a sixth of its true nearest
chunks, two thirds for questions other tenants write much about (bench/vector_recall.py).
Below VECTOR_EXACT_MAX_ROWS the search compares exactly (knowledge/retrieval/signals/
vector.py); above it, an index of the workspace's rows alone (a partial index, `WHERE
embedding_dim = <dim> AND workspace_id = <id>`) is what the planner walks instead, with
no change to the search's SQL: its WHERE names both.

Built CONCURRENTLY (writes go on meanwhile), so never inside a transaction; an interrupted
build leaves an invalid index behind, which the upkeep job drops and builds again. Each
index is one more HNSW insert per new row of its workspace.
"""

from __future__ import annotations

from django.conf import settings
from django.db import connection

from ingest.selectors import vector_indexes
from ingest.vector_tables import CHUNK_VECTORS, VectorTable, workspace_index_name


def do_create_workspace_vector_index(
    *, workspace_id: int, dimension: int, vectors: VectorTable = CHUNK_VECTORS
) -> str:
    """Build the workspace's own index of its `dimension` vectors, linked with
    VECTOR_WORKSPACE_INDEX_EF_CONSTRUCTION candidates; returns its name. Outside a
    transaction only (CREATE INDEX CONCURRENTLY)."""
    name = workspace_index_name(workspace_id=workspace_id, dimension=dimension, vectors=vectors)
    ef_construction = int(settings.VECTOR_WORKSPACE_INDEX_EF_CONSTRUCTION)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {vectors.table} "
            f"USING hnsw ((embedding::vector({int(dimension)})) vector_cosine_ops) "
            f"WITH (ef_construction = {ef_construction}) "
            f"WHERE {vectors.where(dimension, workspace_id)}"
        )
    return name


def do_drop_vector_index(*, name: str) -> None:
    """Drop a workspace's index (by the name `workspace_index_name` gave it): CONCURRENTLY
    (no lock that stops the table's readers and writers), unless called inside a
    transaction, where only a plain DROP is allowed."""
    if not name.replace("_", "").isalnum() or "_embedding_hnsw_" not in name:
        raise ValueError(f"Not a vector index: {name!r}")
    how = "" if connection.in_atomic_block else "CONCURRENTLY "
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {how}IF EXISTS {name}")


def do_drop_workspace_vector_indexes(
    *, workspace_id: int, vectors: VectorTable = CHUNK_VECTORS
) -> list[str]:
    """Drop every index of the workspace's own on the table (a deleted workspace's: its
    rows are gone); returns their names."""
    names = [i.name for i in vector_indexes(vectors)[1] if i.workspace_id == int(workspace_id)]
    for name in names:
        do_drop_vector_index(name=name)
    return names
