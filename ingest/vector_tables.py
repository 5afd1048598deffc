"""The tables whose vectors have HNSW indexes per dimension, and how those are named: a
shared one per dimension (`<prefix>_<dim>`, made by a migration or when a model of a new
dimension is first used) and a workspace's own (`<prefix>_<dim>_ws<workspace id>`,
ingest/actions/vector_indexes.py). The knowledge app describes its entity names the same
way."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class VectorTable:
    """A table whose `embedding` column has HNSW indexes per dimension named
    `<prefix>_<dim>` (shared) and `<prefix>_<dim>_ws<workspace id>` (a workspace's own)."""

    table: str
    prefix: str
    condition: str = ""  # the shared index's own predicate besides the dimension

    def where(self, dimension: int, workspace_id: int | None = None) -> str:
        parts = [f"embedding_dim = {int(dimension)}"]
        if self.condition:
            parts.append(self.condition)
        if workspace_id is not None:
            parts.append(f"workspace_id = {int(workspace_id)}")
        return " AND ".join(parts)


CHUNK_VECTORS = VectorTable("ingest_chunk", "chunk_embedding_hnsw")


def workspace_index_name(
    *, workspace_id: int, dimension: int, vectors: VectorTable = CHUNK_VECTORS
) -> str:
    return f"{vectors.prefix}_{int(dimension)}_ws{int(workspace_id)}"
