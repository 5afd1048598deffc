"""Helpers for the projection tests: pointing GRAPH_BACKENDS somewhere for one test, a port
nothing listens on, and an in-memory projection backend.

The in-memory backend stands in for the Neo4j server this machine cannot run: it is a
complete (if read-less) implementation of the backend write contract, so the code under
test — the write-through hooks, `push_graph_changes`, `do_sync_workspace`, `sync_graph` —
runs unchanged against it and its state can be compared with Postgres row by row.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.local import Local

from knowledge.graph import graph_backends
from knowledge.graph.base import (
    Direction,
    EntityRow,
    GraphBackend,
    GraphNode,
    GraphResult,
    GraphStats,
    PathResult,
    RelationRow,
)

MEMORY_BACKEND = "tests.knowledge.graph.projection.InMemoryProjection"
NEO4J_BACKEND = "knowledge.graph.neo4j.Neo4jGraphBackend"
POSTGRES_BACKEND = "knowledge.graph.postgres.PostgresGraphBackend"
PASSWORD = "correct-horse-battery-staple"


def forget_graph_backends() -> None:
    """Close the backends the handler created and make it read GRAPH_BACKENDS again (the
    handler caches both, like Django's CACHES handler, which Django's own test signals
    reset; nothing resets ours)."""
    handler: Any = graph_backends
    handler.close_all()
    handler._settings = None
    handler.__dict__.pop("settings", None)
    handler._connections = Local(handler.thread_critical)
    STORES.clear()


def closed_port() -> int:
    """A local TCP port with nothing listening (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unreachable_neo4j(**options: Any) -> dict[str, Any]:
    """A GRAPH_BACKENDS entry for a Neo4j server that is not there, with short retries."""
    return {
        "BACKEND": NEO4J_BACKEND,
        "OPTIONS": {
            "URL": f"bolt://127.0.0.1:{closed_port()}",
            "USER": "neo4j",
            "PASSWORD": PASSWORD,
            "RETRY_TIME": 0.1,
            "RETRIES": 1,
            "RETRY_DELAY": 0.01,
            "CONNECTION_TIMEOUT": 2.0,
            **options,
        },
    }


@dataclass
class Store:
    entities: dict[int, EntityRow] = field(default_factory=dict)
    relations: dict[int, RelationRow] = field(default_factory=dict)
    schema_calls: int = 0
    cleared: list[int] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)

    def of(self, workspace_id: int) -> tuple[dict[int, EntityRow], dict[int, RelationRow]]:
        return (
            {k: v for k, v in self.entities.items() if v.workspace_id == workspace_id},
            {k: v for k, v in self.relations.items() if v.workspace_id == workspace_id},
        )


# One store per alias, shared by the instances the handler creates for it.
STORES: dict[str, Store] = {}


def store(alias: str = "default") -> Store:
    return STORES.setdefault(alias, Store())


class InMemoryProjection(GraphBackend):
    supports_projection = True

    @property
    def data(self) -> Store:
        return store(self.alias)

    def upsert_entities(self, rows: Iterable[EntityRow]) -> None:
        batch = list(rows)
        self.data.batches.append(len(batch))
        for row in batch:
            self.data.entities[row.id] = row

    def upsert_relations(self, rows: Iterable[RelationRow]) -> None:
        batch = list(rows)
        self.data.batches.append(len(batch))
        for row in batch:
            for end in (row.source, row.target):
                self.data.entities.setdefault(
                    end, EntityRow(id=end, workspace_id=row.workspace_id, name="", type="")
                )
            self.data.relations[row.id] = row

    def delete_entities(self, *, workspace_id: int, ids: Iterable[int]) -> None:
        gone = {i for i in ids if i in self.data.of(workspace_id)[0]}
        for i in gone:
            del self.data.entities[i]
        for rid, rel in list(self.data.relations.items()):
            if rel.source in gone or rel.target in gone:
                del self.data.relations[rid]

    def delete_relations(self, *, workspace_id: int, ids: Iterable[int]) -> None:
        for i in ids:
            if i in self.data.of(workspace_id)[1]:
                del self.data.relations[i]

    def clear_workspace(self, *, workspace_id: int) -> None:
        self.data.cleared.append(workspace_id)
        entities, relations = self.data.of(workspace_id)
        for i in entities:
            del self.data.entities[i]
        for i in relations:
            del self.data.relations[i]

    def ensure_schema(self) -> None:
        self.data.schema_calls += 1

    # Reads are the conformance suite's business; this stand-in only records writes.
    def neighborhood(
        self,
        *,
        workspace_id: int,
        seeds: Sequence[int],
        hops: int = 1,
        relation_types: Sequence[str] | None = None,
        entity_types: Sequence[str] | None = None,
        direction: Direction = "both",
        limit: int = 500,
    ) -> GraphResult:
        raise NotImplementedError

    def shortest_path(
        self,
        *,
        workspace_id: int,
        source: int,
        target: int,
        max_hops: int = 4,
        relation_types: Sequence[str] | None = None,
    ) -> PathResult | None:
        raise NotImplementedError

    def hubs(
        self, *, workspace_id: int, entity_type: str | None = None, limit: int = 20
    ) -> list[GraphNode]:
        raise NotImplementedError

    def subgraph(self, *, workspace_id: int, ids: Sequence[int]) -> GraphResult:
        raise NotImplementedError

    def stats(self, *, workspace_id: int) -> GraphStats:
        raise NotImplementedError
