"""A workspace's own HNSW index of its chunk vectors, for workspaces too large to compare
exactly and too small a share of the database for the shared index to serve them.

The shared index (`chunk_embedding_hnsw_<dim>`, one per dimension) knows no workspaces: a
walk for one goes through the nearest vectors of all of them and keeps the workspace's,
and for a tenant holding 2% of a 1M-chunk database it missed a tenth of its true nearest
chunks (bench/vector_recall.py; more for questions other tenants write much about).
Below VECTOR_EXACT_MAX_ROWS the search compares exactly (knowledge/retrieval/signals/
vector.py); above it, an index of the workspace's rows alone (a partial index, `WHERE
embedding_dim = <dim> AND workspace_id = <id>`) is what the planner walks instead, with
no change to the search's SQL: its WHERE names both.

Built CONCURRENTLY (writes go on meanwhile), so never inside a transaction; an interrupted
build leaves an invalid index behind, which the upkeep job drops and builds again. Each
index is one more HNSW insert per new chunk of its workspace.
"""

from __future__ import annotations

from django.db import connection


def workspace_index_name(*, workspace_id: int, dimension: int) -> str:
    return f"chunk_embedding_hnsw_{int(dimension)}_ws{int(workspace_id)}"


def do_create_workspace_vector_index(*, workspace_id: int, dimension: int) -> str:
    """Build the workspace's own index of its `dimension` chunk vectors; returns its name.
    Outside a transaction only (CREATE INDEX CONCURRENTLY)."""
    name = workspace_index_name(workspace_id=workspace_id, dimension=dimension)
    dim, workspace = int(dimension), int(workspace_id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON ingest_chunk "
            f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) "
            f"WHERE embedding_dim = {dim} AND workspace_id = {workspace}"
        )
    return name


def do_drop_vector_index(*, name: str) -> None:
    """Drop a workspace's index (by the name `workspace_index_name` gave it)."""
    if not name.startswith("chunk_embedding_hnsw_") or not name.replace("_", "").isalnum():
        raise ValueError(f"Not a chunk vector index: {name!r}")
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
