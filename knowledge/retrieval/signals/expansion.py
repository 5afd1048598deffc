"""The graph signal: from the recognised (and the closest vector-matched) entities, the
configured graph backend's neighbourhood (`hops`, `relation_types`); chunks mentioning
entities near the query get a proximity score — closer is higher, strong relations count
more. It finds what neither vectors nor words can: a chunk relevant only because of what
the graph knows."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import connection

from knowledge.graph import get_graph_backend
from knowledge.graph.base import GraphResult
from knowledge.retrieval.types import Recognised

# Vector-matched entities also seed the graph when they are this close (cosine similarity)
# and among the closest few: names that merely resemble the query would spread noise.
VECTOR_SEEDS = 3
VECTOR_SEED_MIN_SIMILARITY = 0.55
# Graph expansion: at most this many entities reached, and this many of each one's
# mentions, so a hub costs no more than a leaf.
GRAPH_NODE_LIMIT = 60
GRAPH_MENTIONS_PER_ENTITY = 20
# Proximity: a seed scores 1 (recognised) or its similarity (vector); each hop multiplies
# by HOP_DECAY and by 0.5..1 growing with the relation's weight, so depth d scores at most
# HOP_DECAY**d and any depth-1 entity outranks any depth-2 one.
HOP_DECAY = 0.5


def graph_seeds(
    recognised: list[Recognised], vector_entities: list[tuple[int, float]]
) -> dict[int, float]:
    """Entity -> seed score: 1 for each recognised entity, its similarity for the closest
    few vector-matched ones that are close enough."""
    seeds: dict[int, float] = {r.entity_id: 1.0 for r in recognised}
    for entity_id, similarity in vector_entities[:VECTOR_SEEDS]:
        if similarity >= VECTOR_SEED_MIN_SIMILARITY and entity_id not in seeds:
            seeds[entity_id] = similarity
    return seeds


def graph_proximity(
    workspace_id: int,
    seeds: dict[int, float],
    hops: int,
    relation_names: list[str] | None,
    entity_names: list[str] | None,
) -> dict[int, tuple[float, int]]:
    """Entity -> (proximity, depth) over the seeds' neighbourhood from the configured
    backend (the seeds alone for hops == 0). Raises GraphBackendError when the backend
    cannot answer."""
    if hops == 0:
        return {entity_id: (score, 0) for entity_id, score in seeds.items()}
    graph = get_graph_backend().neighborhood(
        workspace_id=workspace_id,
        seeds=sorted(seeds),
        hops=hops,
        relation_types=relation_names,
        entity_types=entity_names,
        direction="both",
        limit=GRAPH_NODE_LIMIT,
    )
    return _proximity(seeds, graph)


def _edge_factor(weight: float) -> float:
    """0.5 for a weightless relation, approaching 1 as evidence piles up."""
    weight = max(0.0, float(weight or 0.0))
    return 0.5 + 0.5 * weight / (1.0 + weight)


def _proximity(seeds: dict[int, float], graph: GraphResult) -> dict[int, tuple[float, int]]:
    """Entity -> (proximity, depth): the best product of hop factors over the backend's
    edges, walking outward depth by depth from the seeds."""
    depth = {n.id: n.depth for n in graph.nodes if n.depth is not None}
    score: dict[int, float] = {pk: s for pk, s in seeds.items() if pk in depth}
    adjacent: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for edge in graph.edges:
        factor = _edge_factor(edge.weight)
        adjacent[edge.source].append((edge.target, factor))
        adjacent[edge.target].append((edge.source, factor))
    for level in range(1, max(depth.values(), default=0) + 1):
        for node, d in depth.items():
            if d != level:
                continue
            best = 0.0
            for other, factor in adjacent.get(node, []):
                if depth.get(other) == level - 1 and other in score:
                    best = max(best, score[other] * HOP_DECAY * factor)
            if best > 0:
                score[node] = best
    return {pk: (s, depth[pk]) for pk, s in score.items()}


def graph_chunks(
    workspace_id: int,
    proximity: dict[int, tuple[float, int]],
    candidates: int,
    source_ids: list[int] | None,
) -> list[tuple[int, float]]:
    """(chunk id, graph score), best first: each chunk scores the sum of the proximities of
    the (distinct) entities near the query that it mentions. Each entity contributes at
    most GRAPH_MENTIONS_PER_ENTITY of its mentions (the first the mention_entity_time index
    yields; no ORDER BY, which would read all of a hub's mentions to sort them), so a hub
    costs what a leaf costs."""
    params: list[Any] = [sorted(proximity), workspace_id]
    source_filter = ""
    if source_ids:
        source_filter = (
            " AND EXISTS (SELECT 1 FROM ingest_chunk c JOIN ingest_document d "
            "ON d.id = c.document_id WHERE c.id = m.chunk_id AND d.source_id = ANY(%s))"
        )
        params.append(source_ids)
    params.append(GRAPH_MENTIONS_PER_ENTITY)
    sql = f"""
        SELECT DISTINCT x.chunk_id, e.id
        FROM unnest(%s::bigint[]) AS e(id)
        CROSS JOIN LATERAL (
            SELECT m.chunk_id FROM knowledge_mention m
            WHERE m.entity_id = e.id AND m.workspace_id = %s {source_filter}
            LIMIT %s
        ) AS x
    """  # noqa: S608 (fixed SQL; values are parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    scores: dict[int, float] = defaultdict(float)
    for chunk_id, entity_id in rows:
        scores[int(chunk_id)] += proximity[int(entity_id)][0]
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:candidates]
    return [(pk, round(s, 6)) for pk, s in ranked]
