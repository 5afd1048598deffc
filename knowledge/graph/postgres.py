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

Neighbourhoods are one recursive CTE whose working row is a whole BFS level (arrays of ids):
each step expands the frontier over the covering indexes, removes what was seen, checks the
entities, ranks them (degree, then id) and keeps only what the remaining budget allows, so a
limit bounds the work of the next level instead of slicing a finished answer. Shortest paths
are a bidirectional BFS driven from Python, one statement per level, always growing the
smaller frontier.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection
from psycopg.pq import TransactionStatus

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

_RELATION_TYPE_FILTER = """ AND r.type_id = ANY(ARRAY(
    SELECT rt.id FROM knowledge_relationtype AS rt
    WHERE rt.workspace_id = %(ws)s AND rt.name = ANY(%(relation_types)s::text[])))"""

# Whether a reached entity may be returned (the entity_types filter). The walk goes through
# entities of every type; only those that match are returned and count against the limit.
_TYPE_MATCH = """e.type_id = ANY(ARRAY(
    SELECT et.id FROM knowledge_entitytype AS et
    WHERE et.workspace_id = %(ws)s AND et.name = ANY(%(entity_types)s::text[])))"""

# One hop from the frontier along active relations (covering indexes, no heap).
_STEP_OUT = """SELECT r.target_id FROM unnest(w.frontier) AS f(id)
               JOIN knowledge_relation AS r ON r.source_id = f.id
               WHERE r.state = 'active'{relation_filter}"""
_STEP_IN = """SELECT r.source_id FROM unnest(w.frontier) AS f(id)
              JOIN knowledge_relation AS r ON r.target_id = f.id
              WHERE r.state = 'active'{relation_filter}"""

# The entities of the next level: one hop away, not seen before, active, in the workspace.
_CANDIDATES = """
SELECT e.id, {match} AS match, e.name::text AS name, e.type_id, e.mention_count, e.community,
       e.degree
FROM ({step} EXCEPT SELECT unnest(w.seen)) AS n(id)
JOIN knowledge_entity AS e ON e.id = n.id
WHERE e.workspace_id = %(ws)s AND e.state = 'active'
"""
_SEEDS = """
SELECT e.id, true AS match, e.name::text AS name, e.type_id, e.mention_count, e.community,
       e.degree
FROM knowledge_entity AS e
WHERE e.id = ANY(%(seeds)s::bigint[]) AND e.workspace_id = %(ws)s AND e.state = 'active'
"""
# Returnable entities ranked as the contract orders them (degree, then id); the degree is
# the one PostgreSQL keeps on the entity row (migration 0013), read with the row.
_RANKED = """
SELECT c.*, CASE WHEN c.match THEN row_number() OVER (
                 PARTITION BY c.match ORDER BY c.degree DESC, c.id) END AS rank
FROM ({source}) AS c
"""
# One level of the answer from ranked entities `c`: the best `budget` returnable ones with
# the fields the answer needs (so nothing is read twice), every entity reached (the next
# frontier), and whether returnable ones were left out.
_LEVEL = """
SELECT coalesce(array_agg(c.id ORDER BY c.rank) FILTER (WHERE c.rank <= {budget}), '{{}}'),
       coalesce(array_agg(c.degree ORDER BY c.rank) FILTER (WHERE c.rank <= {budget}), '{{}}'),
       coalesce(array_agg(c.name ORDER BY c.rank) FILTER (WHERE c.rank <= {budget}), '{{}}'),
       coalesce(array_agg(c.type_id ORDER BY c.rank) FILTER (WHERE c.rank <= {budget}),
                '{{}}'),
       coalesce(array_agg(c.mention_count ORDER BY c.rank) FILTER (WHERE c.rank <= {budget}),
                '{{}}'),
       coalesce(array_agg(c.community ORDER BY c.rank) FILTER (WHERE c.rank <= {budget}),
                '{{}}'),
       coalesce(array_agg(c.id), '{{}}'),
       count(*) FILTER (WHERE c.match) > {budget}
FROM ({ranked}) AS c
"""
# Once the budget is spent, a further level only says whether anything returnable lies
# beyond (for an honest `truncated`): without a type filter the first entity found answers;
# with one, levels of other types are walked through until a match or the last hop.
_EXHAUSTED_ANY = """
SELECT '{{}}', '{{}}', '{{}}', '{{}}', '{{}}', '{{}}', '{{}}', EXISTS ({candidates})
WHERE w.budget <= 0
"""
_EXHAUSTED_TYPED = """
SELECT '{{}}', '{{}}', '{{}}', '{{}}', '{{}}', '{{}}', coalesce(array_agg(c.id), '{{}}'),
       coalesce(bool_or(c.match), false)
FROM ({candidates}) AS c
HAVING w.budget <= 0
"""
# The working row of the recursion is one level (see _LEVEL) plus every id seen so far and
# the node budget left; a level that had to leave returnable entities out ends the walk.
_NEIGHBORHOOD = """
WITH RECURSIVE walk(depth, ids, degrees, names, type_ids, mentions, communities, frontier,
                    more, seen, budget) AS (
    SELECT 0, s.*, s.frontier, %(limit)s - cardinality(s.ids)
    FROM ({seed_level}) AS s(ids, degrees, names, type_ids, mentions, communities, frontier,
                             more)
  UNION ALL
    SELECT w.depth + 1, s.ids, s.degrees, s.names, s.type_ids, s.mentions, s.communities,
           s.frontier, s.more, w.seen || s.frontier, w.budget - cardinality(s.ids)
    FROM walk AS w
    CROSS JOIN LATERAL (
        {step_level}
        HAVING w.budget > 0
      UNION ALL
        {exhausted}
    ) AS s(ids, degrees, names, type_ids, mentions, communities, frontier, more)
    WHERE w.depth < %(hops)s AND cardinality(w.frontier) > 0 AND NOT w.more
)
SELECT n.id, n.name, et.name, n.degree, w.depth, n.mention_count, n.community,
       (SELECT bool_or(more) FROM walk) AS truncated
FROM walk AS w
CROSS JOIN LATERAL unnest(w.ids, w.degrees, w.names, w.type_ids, w.mentions, w.communities)
    AS n(id, degree, name, type_id, mention_count, community)
JOIN knowledge_entitytype AS et ON et.id = n.type_id
ORDER BY w.depth, n.degree DESC, n.id
"""


def _neighborhood_sql(*, direction: Direction, typed: bool, entity_typed: bool) -> str:
    relation_filter = _RELATION_TYPE_FILTER if typed else ""
    branches = []
    if direction in ("out", "both"):
        branches.append(_STEP_OUT.format(relation_filter=relation_filter))
    if direction in ("in", "both"):
        branches.append(_STEP_IN.format(relation_filter=relation_filter))
    candidates = _CANDIDATES.format(
        step=" UNION ALL ".join(branches), match=_TYPE_MATCH if entity_typed else "true"
    )
    exhausted = _EXHAUSTED_TYPED if entity_typed else _EXHAUSTED_ANY
    return _NEIGHBORHOOD.format(
        seed_level=_LEVEL.format(budget="%(limit)s", ranked=_RANKED.format(source=_SEEDS)),
        step_level=_LEVEL.format(budget="w.budget", ranked=_RANKED.format(source=candidates)),
        exhausted=exhausted.format(candidates=candidates),
    )


# Active edges with both ends among `ids`, of the workspace.
_EDGES_AMONG = """
SELECT r.id, r.source_id, r.target_id, rt.name, r.weight
FROM knowledge_relation AS r
JOIN knowledge_relationtype AS rt ON rt.id = r.type_id
WHERE r.workspace_id = %(ws)s AND r.state = 'active'
  AND r.source_id = ANY(%(ids)s::bigint[]) AND r.target_id = ANY(%(ids)s::bigint[]){relation_filter}
ORDER BY r.id
LIMIT %(max_edges)s
"""

# Nodes by id, with their degree (subgraph, paths).
_NODES = """
SELECT e.id, e.name, et.name, e.degree, e.mention_count, e.community
FROM knowledge_entity AS e
JOIN knowledge_entitytype AS et ON et.id = e.type_id
WHERE e.id = ANY(%(ids)s::bigint[]) AND e.workspace_id = %(ws)s AND e.state = 'active'
ORDER BY e.id
"""

# One BFS level of a path search, undirected, from `frontier`. When a neighbour is in the
# other search's frontier the searches meet: those meeting nodes are all that is returned
# (with the smallest frontier node they were reached from; they were checked when the other
# search reached them), and the level is not built. Otherwise the new level: the unseen
# active neighbours of the workspace, each with the smallest frontier node it was reached
# from. Only the previous level and the frontier itself can hold neighbours already seen
# (BFS), and only the other search's frontier can hold a first meeting (anything it saw
# earlier would have met this search before), so those are the only ids sent. Relation ids
# are looked up for the final path alone: the walk stays on the covering indexes.
_PATH_STEP = """
WITH hop AS MATERIALIZED (
    SELECT r.target_id AS id, r.source_id AS parent FROM unnest(%(frontier)s::bigint[]) AS f(id)
    JOIN knowledge_relation AS r ON r.source_id = f.id
    WHERE r.state = 'active'{relation_filter}
  UNION ALL
    SELECT r.source_id, r.target_id FROM unnest(%(frontier)s::bigint[]) AS f(id)
    JOIN knowledge_relation AS r ON r.target_id = f.id
    WHERE r.state = 'active'{relation_filter}
),
meeting AS MATERIALIZED (
    SELECT h.id, min(h.parent) AS parent FROM hop AS h
    WHERE h.id = ANY(%(other)s::bigint[])
    GROUP BY h.id
)
SELECT m.id, m.parent, true FROM meeting AS m
UNION ALL
SELECT * FROM (
    SELECT DISTINCT ON (h.id) h.id, h.parent, false
    FROM hop AS h
    JOIN knowledge_entity AS e ON e.id = h.id
    WHERE NOT EXISTS (SELECT 1 FROM meeting)
      AND e.workspace_id = %(ws)s AND e.state = 'active'
      AND NOT h.id = ANY(%(exclude)s::bigint[])
    ORDER BY h.id, h.parent
) AS level
"""

# The edge used for each hop of a path: the smallest-id active relation between the two
# nodes, either direction.
_PATH_EDGES = """
SELECT DISTINCT ON (p.hop) p.hop, r.id, r.source_id, r.target_id, rt.name, r.weight
FROM unnest(%(a)s::bigint[], %(b)s::bigint[]) WITH ORDINALITY AS p(a, b, hop)
JOIN knowledge_relation AS r
  ON (r.source_id = p.a AND r.target_id = p.b) OR (r.source_id = p.b AND r.target_id = p.a)
JOIN knowledge_relationtype AS rt ON rt.id = r.type_id
WHERE r.workspace_id = %(ws)s AND r.state = 'active'{relation_filter}
ORDER BY p.hop, r.id
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


_PARALLEL = "max_parallel_workers_per_gather"


@contextmanager
def _without_parallel_workers() -> Iterator[None]:
    """Run a path search's statements without parallel workers: each level touches a few
    thousand index entries, and the planner sometimes chose to start workers for one, which
    took longer than the whole query. The session's setting is put back afterwards (two
    statements); when a statement fails inside a transaction, rolling that back undoes it."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT current_setting('{_PARALLEL}'), set_config('{_PARALLEL}', '0', false)"
        )
        row = cursor.fetchone()
        restore = (f"SELECT set_config('{_PARALLEL}', %s, false)", [row[0] if row else "2"])
        try:
            yield
        except BaseException:
            if connection.connection.info.transaction_status != TransactionStatus.INERROR:
                cursor.execute(*restore)
            raise
        cursor.execute(*restore)


def _relation_filter(relation_types: Sequence[str] | None) -> str:
    return "" if relation_types is None else _RELATION_TYPE_FILTER


class PostgresGraphBackend(GraphBackend):
    """Recursive CTEs over knowledge_entity / knowledge_relation; see the module docstring."""

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
        sql = _neighborhood_sql(
            direction=direction,
            typed=relation_types is not None,
            entity_typed=entity_types is not None,
        )
        params: dict[str, Any] = {
            "ws": workspace_id,
            "seeds": seed_ids,
            "hops": hops,
            "limit": limit,
            "relation_types": list(relation_types or ()),
            "entity_types": list(entity_types or ()),
        }
        rows = _fetch(sql, params)
        if not rows:
            return GraphResult()
        nodes = [_node((r[0], r[1], r[2], r[3], r[5], r[6]), depth=r[4]) for r in rows]
        truncated = bool(rows[0][7])
        max_edges = limit * EDGES_PER_NODE
        edge_rows = _fetch(
            _EDGES_AMONG.format(relation_filter=_relation_filter(relation_types)),
            {
                "ws": workspace_id,
                "ids": [n.id for n in nodes],
                "relation_types": params["relation_types"],
                "max_edges": max_edges + 1,
            },
        )
        if len(edge_rows) > max_edges:
            edge_rows, truncated = edge_rows[:max_edges], True
        return GraphResult(nodes=nodes, edges=[_edge(r) for r in edge_rows], truncated=truncated)

    def shortest_path(
        self,
        *,
        workspace_id: int,
        source: int,
        target: int,
        max_hops: int = 4,
        relation_types: Sequence[str] | None = None,
    ) -> PathResult | None:
        with _without_parallel_workers():
            return self._shortest_path(
                workspace_id=workspace_id,
                source=source,
                target=target,
                max_hops=max_hops,
                relation_types=relation_types,
            )

    def _shortest_path(
        self,
        *,
        workspace_id: int,
        source: int,
        target: int,
        max_hops: int,
        relation_types: Sequence[str] | None,
    ) -> PathResult | None:
        ends = {n.id: n for n in self._nodes(workspace_id, [source, target])}
        if source not in ends or target not in ends:
            return None
        if source == target:
            return PathResult(nodes=[self._at(ends[source], 0)], edges=[])
        step_sql = _PATH_STEP.format(relation_filter=_relation_filter(relation_types))
        types = list(relation_types or ())
        # Each side: node -> the neighbour it was reached from (None for the end itself), its
        # frontier, the level before it, and how many hops it has walked.
        parents: tuple[dict[int, int | None], dict[int, int | None]] = (
            {source: None},
            {target: None},
        )
        frontiers: list[list[int]] = [[source], [target]]
        previous: list[list[int]] = [[], []]
        walked = [0, 0]
        meeting: int | None = None
        while meeting is None and walked[0] + walked[1] < max_hops:
            # Grow the smaller frontier (on a tie, the shorter search): the two meet having
            # touched far fewer edges than one search from either end would.
            side = min((0, 1), key=lambda i: (len(frontiers[i]), walked[i]))
            if not frontiers[side]:
                return None  # that end's component is exhausted
            rows = _fetch(
                step_sql,
                {
                    "ws": workspace_id,
                    "frontier": frontiers[side],
                    "exclude": previous[side] + frontiers[side],
                    "other": frontiers[1 - side],
                    "relation_types": types,
                },
            )
            mine = parents[side]
            level: list[int] = []
            met: list[int] = []
            for node_id, parent, meets in rows:
                mine[node_id] = parent
                (met if meets else level).append(node_id)
            previous[side], frontiers[side] = frontiers[side], level
            walked[side] += 1
            # Any meeting node closes a shortest path (no meeting was found at any shorter
            # total); the smallest id makes the answer deterministic.
            meeting = min(met) if met else None
        if meeting is None:
            return None
        path = self._trace(parents[0], meeting)[::-1] + self._trace(parents[1], meeting)[1:]
        return self._path(workspace_id, path, relation_types)

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
        edge_rows = _fetch(
            _EDGES_AMONG.format(relation_filter=""),
            {"ws": workspace_id, "ids": [n.id for n in nodes], "max_edges": None},
        )
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

    @staticmethod
    def _at(node: GraphNode, depth: int) -> GraphNode:
        return GraphNode(
            id=node.id,
            name=node.name,
            type=node.type,
            degree=node.degree,
            depth=depth,
            mention_count=node.mention_count,
            community=node.community,
        )

    @staticmethod
    def _trace(parents: dict[int, int | None], node: int) -> list[int]:
        """From `node` back to the end its search started from."""
        out = [node]
        step = parents[node]
        while step is not None:
            out.append(step)
            step = parents[step]
        return out

    def _path(
        self, workspace_id: int, path: list[int], relation_types: Sequence[str] | None
    ) -> PathResult:
        by_id = {n.id: n for n in self._nodes(workspace_id, path)}
        edge_rows = _fetch(
            _PATH_EDGES.format(relation_filter=_relation_filter(relation_types)),
            {
                "ws": workspace_id,
                "a": path[:-1],
                "b": path[1:],
                "relation_types": list(relation_types or ()),
            },
        )
        return PathResult(
            nodes=[self._at(by_id[n], i) for i, n in enumerate(path)],
            edges=[_edge(r[1:]) for r in edge_rows],
        )
