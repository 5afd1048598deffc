"""The default graph backend: traversal answered by PostgreSQL itself, over the very tables
the ORM writes (no copy to keep in sync, so writes are no-ops and reads see a transaction's
own uncommitted rows).

Every statement is scoped twice: relations are walked only in state 'active' (the partial
covering indexes `relation_active_out` / `relation_active_in` answer each step from the index
alone), and every entity reached is checked against the workspace and state before it counts,
so neither a merged or deleted row nor another workspace's id can appear, whatever ids a caller
passes. Relations always join two entities of one workspace (the write path guarantees it);
the reached entity's check is what enforces the workspace on a walk, and the statements that
return relation rows filter on the relation's workspace as well.

A neighbourhood and a shortest path are each one statement: a call of a plpgsql function
(migrations 0019, 0022) that walks the levels in the server, where its statements' plans are
cached and no level travels to Python and back. A neighbourhood walks level by level: it expands the
frontier over the covering indexes, removes what was seen, checks the entities and ranks them
(degree, then id) from the covering index `entity_active_walk`, and keeps only what the
remaining budget allows, so a limit bounds the work of the next level instead of slicing a
finished answer; names and the rest are read for the kept nodes only, then the edges among
them. A shortest path is a bidirectional BFS that always grows the smaller frontier and stops
at the first level where the two searches meet; the entities of a level are checked when it
is expanded or met rather than when it is reached, since most of a level reached through a
hub never is (docs/BENCHMARKS.md, "Graph backends", has the figures at 100k entities and 1M
relations).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from knowledge.graph.base import (
    Direction,
    GraphBackend,
    GraphEdge,
    GraphNode,
    GraphResult,
    GraphStats,
    PathResult,
    build_stats,
    check_neighborhood_args,
)

# A neighbourhood returns at most this many edges per node allowed (limit * this): past that
# a picture is unreadable anyway, and `truncated` says edges were left out.
EDGES_PER_NODE = 10

# A neighbourhood, walked and read in the server by one plpgsql function (migrations 0019
# and 0022, whose bodies say how): one row of arrays, the nodes' columns in the contract's
# order, the edges' among them by id (at most `max_edges`), and `truncated`.
_NEIGHBORHOOD_CALL = """
SELECT * FROM knowledge_neighborhood(
    %(ws)s, %(seeds)s::bigint[], %(hops)s, %(limit)s, %(out)s, %(in)s,
    %(relation_types)s::text[], %(entity_types)s::text[], %(max_edges)s)
"""

# Active edges with both ends among `ids`, of the workspace (subgraph).
_EDGES_AMONG = """
SELECT r.id, r.source_id, r.target_id, rt.name, r.weight
FROM knowledge_relation AS r
JOIN knowledge_relationtype AS rt ON rt.id = r.type_id
WHERE r.workspace_id = %(ws)s AND r.state = 'active'
  AND r.source_id = ANY(%(ids)s::bigint[]) AND r.target_id = ANY(%(ids)s::bigint[])
ORDER BY r.id
"""

# Nodes by id, with their degree (subgraph, paths).
_NODES = """
SELECT e.id, e.name, et.name, e.degree, e.mention_count, e.community
FROM knowledge_entity AS e
JOIN knowledge_entitytype AS et ON et.id = e.type_id
WHERE e.id = ANY(%(ids)s::bigint[]) AND e.workspace_id = %(ws)s AND e.state = 'active'
ORDER BY e.id
"""

# A shortest path, found and read in the server by one plpgsql function (migration 0019,
# whose body says how it searches): one row per node in order, with the edge of the hop
# that reaches it (none for the first).
_PATH = """
SELECT * FROM knowledge_shortest_path(
    %(ws)s, %(source)s, %(target)s, %(max_hops)s, %(relation_types)s::text[])
"""

# The best-connected entities (the stored degree, then mentions, then id): an index scan of
# entity_ws_degree, or of entity_type_degree for one type.
_HUBS = """
SELECT e.id, e.name, et.name, e.degree, e.mention_count, e.community
FROM knowledge_entity AS e
JOIN knowledge_entitytype AS et ON et.id = e.type_id
WHERE {scope} AND e.state = 'active'
ORDER BY e.degree DESC, e.mention_count DESC, e.id
LIMIT %(limit)s
"""
_HUBS_SCOPE_WORKSPACE = "e.workspace_id = %(ws)s"
_HUBS_SCOPE_TYPE = """e.type_id = (SELECT t.id FROM knowledge_entitytype AS t
                   WHERE t.workspace_id = %(ws)s AND t.name = %(type)s)"""

_DEGREE_COUNTS = """
SELECT e.degree, count(*) FROM knowledge_entity AS e
WHERE e.workspace_id = %(ws)s AND e.state = 'active'
GROUP BY 1
"""

_ENTITIES_BY_TYPE = """
SELECT et.name, count(*) FROM knowledge_entity AS e
JOIN knowledge_entitytype AS et ON et.id = e.type_id
WHERE e.workspace_id = %(ws)s AND e.state = 'active'
GROUP BY et.name
"""

_RELATIONS_BY_TYPE = """
SELECT rt.name, count(*) FROM knowledge_relation AS r
JOIN knowledge_relationtype AS rt ON rt.id = r.type_id
WHERE r.workspace_id = %(ws)s AND r.state = 'active'
GROUP BY rt.name
"""


def _node(row: Sequence[Any], depth: int | None = None) -> GraphNode:
    node_id, name, type_name, degree, mention_count, community = row[:6]
    return GraphNode(
        id=node_id,
        name=name,
        type=type_name,
        degree=int(degree),
        depth=depth,
        mention_count=mention_count,
        community=community,
    )


def _edge(row: Sequence[Any]) -> GraphEdge:
    edge_id, source, target, type_name, weight = row
    return GraphEdge(id=edge_id, source=source, target=target, type=type_name, weight=weight)


def _fetch(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


class PostgresGraphBackend(GraphBackend):
    """Traversal by plpgsql functions over knowledge_entity / knowledge_relation (migration
    0019), the rest by plain statements; see the module docstring."""

    supports_projection = False
    supports_transactions = True

    # --- reads --------------------------------------------------------------------------

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
        check_neighborhood_args(hops=hops, direction=direction, limit=limit)
        seed_ids = sorted({int(s) for s in seeds})
        if not seed_ids:
            return GraphResult()
        max_edges = limit * EDGES_PER_NODE
        rows = _fetch(
            _NEIGHBORHOOD_CALL,
            {
                "ws": workspace_id,
                "seeds": seed_ids,
                "hops": hops,
                "limit": limit,
                "out": direction in ("out", "both"),
                "in": direction in ("in", "both"),
                "relation_types": None if relation_types is None else list(relation_types),
                "entity_types": None if entity_types is None else list(entity_types),
                "max_edges": max_edges + 1,
            },
        )
        (answer,) = rows
        # The arrays are in the fields' order (a 2-hop answer is a thousand objects), each
        # NULL when it has no element.
        nodes = list(map(GraphNode, *answer[:7])) if answer[0] else []
        edges = list(map(GraphEdge, *answer[7:12])) if answer[7] else []
        truncated = bool(answer[12])
        if len(edges) > max_edges:
            edges, truncated = edges[:max_edges], True
        return GraphResult(nodes=nodes, edges=edges, truncated=truncated)

    def shortest_path(
        self,
        *,
        workspace_id: int,
        source: int,
        target: int,
        max_hops: int = 4,
        relation_types: Sequence[str] | None = None,
    ) -> PathResult | None:
        rows = _fetch(
            _PATH,
            {
                "ws": workspace_id,
                "source": int(source),
                "target": int(target),
                "max_hops": max_hops,
                "relation_types": None if relation_types is None else list(relation_types),
            },
        )
        if not rows:
            return None
        return PathResult(
            nodes=[_node(r[:6], depth=hop) for hop, r in enumerate(rows)],
            edges=[_edge(r[6:]) for r in rows[1:]],
        )

    def hubs(
        self, *, workspace_id: int, entity_type: str | None = None, limit: int = 20
    ) -> list[GraphNode]:
        if limit <= 0:
            return []
        sql = _HUBS.format(scope=_HUBS_SCOPE_WORKSPACE if entity_type is None else _HUBS_SCOPE_TYPE)
        rows = _fetch(sql, {"ws": workspace_id, "type": entity_type, "limit": limit})
        return [_node(r) for r in rows]

    def subgraph(self, *, workspace_id: int, ids: Sequence[int]) -> GraphResult:
        nodes = self._nodes(workspace_id, ids)
        if not nodes:
            return GraphResult()
        edge_rows = _fetch(_EDGES_AMONG, {"ws": workspace_id, "ids": [n.id for n in nodes]})
        return GraphResult(nodes=nodes, edges=[_edge(r) for r in edge_rows])

    def stats(self, *, workspace_id: int) -> GraphStats:
        params = {"ws": workspace_id}
        return build_stats(
            dict(_fetch(_ENTITIES_BY_TYPE, params)),
            dict(_fetch(_RELATIONS_BY_TYPE, params)),
            {int(degree): int(count) for degree, count in _fetch(_DEGREE_COUNTS, params)},
        )

    # --- helpers --------------------------------------------------------------------------

    def _nodes(self, workspace_id: int, ids: Sequence[int]) -> list[GraphNode]:
        wanted = sorted({int(i) for i in ids})
        if not wanted:
            return []
        return [_node(r) for r in _fetch(_NODES, {"ws": workspace_id, "ids": wanted})]
