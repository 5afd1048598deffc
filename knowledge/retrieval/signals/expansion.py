"""The graph signal: from the recognised (and the closest vector-matched) entities, the
configured graph backend's neighbourhood (`hops`, `relation_types`); chunks mentioning
entities near the query get a proximity score — closer is higher, strong relations count
more. It finds what neither vectors nor words can: a chunk relevant only because of what
the graph knows.

Every entity counts by its specificity, an inverse document frequency over the
workspace's chunks: a name mentioned all over the workspace ("Python" in the Python
manual, "time", "file") says little about which chunk answers, and a hub's neighbourhood
is half the graph. Hubs neither seed the expansion nor propose chunks; the rarer an entity,
the more its mentions and its neighbours count.

A seed must be specific, since expansion spreads whatever it starts from:

- a recognised entity seeds only when the query writes its whole name or alias
  (`Recognised.whole`), not a looser form the canonical key equates;
- it counts by the rarer of two things: its own mentions, and the chunks whose words hold
  the name as the query writes it. A common word of a question ("table", "file") can be
  the name of many small entities (six spellings and types of it, each mentioned a few
  times): by their mentions each looks rare, by the workspace's words it is everywhere;
- a seed below SEED_MIN_SPECIFICITY seeds nothing, and a seed adds at most its
  specificity's share of GRAPH_MENTIONS_PER_ENTITY chunks, so a common one adds few, with
  low scores.

The chunks that mention a named seed (recognised, whole, specific) are the graph's strong
evidence: fusion lets only them move above the first results of the other signals
(knowledge/retrieval/fusion.py).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from knowledge.graph import get_graph_backend
from knowledge.graph.base import GraphResult
from knowledge.retrieval.signals.scope import DocumentScope
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
# Specificity: log(1 + N / m) / log(1 + N) for an entity with m mentions among N chunks
# (1 for a name mentioned once in a small workspace, towards 0 for one mentioned
# everywhere), raised to SPECIFICITY_POWER so that common names fall off quickly. An entity
# mentioned in more than HUB_SHARE of the chunks is a hub: it counts 0.
SPECIFICITY_POWER = 2.0
HUB_SHARE = 0.005
# The workspace's chunk count is a statistic: read at most this often per workspace once
# it is large (a count that costs something); a smaller one, quick to count and quick to
# grow (a workspace being filled), is read every time.
CHUNK_COUNT_TTL_SECONDS = 300.0
CHUNK_COUNT_CACHED_FROM = 10_000
# A chunk whose graph score (specificity-weighted proximities summed) stays below this is
# left out of the graph's ranking: a rank-based fusion would count the weakest evidence
# (one mention of a common name, two hops away) like the strongest. On the Python manual
# (bench/retrieval_quality.py) 0.1 to 0.3 score alike, 0.05 like no floor.
GRAPH_MIN_SCORE = 0.1
# A seed less specific than this seeds nothing: in a workspace of 1,000 chunks or more the
# hub share cuts first (a name in 0.5 % of the chunks has about 0.3 to 0.5); in a small one
# (no hubs) it is a name in about a third of 16 chunks, a tenth of 100.
SEED_MIN_SPECIFICITY = 0.25
_chunk_counts: dict[int, tuple[float, int]] = {}


def graph_seeds(
    recognised: list[Recognised],
    vector_entities: list[tuple[int, float]],
    specificity: Specificity | None = None,
) -> dict[int, float]:
    """Entity -> seed score: 1 for each entity the query names whole, its similarity for
    the closest few vector-matched ones that are close enough; each times its specificity
    when given, and those less specific than SEED_MIN_SPECIFICITY left out (hubs count
    0). A recognised entity the query only matches loosely is no seed."""
    seeds: dict[int, float] = {r.entity_id: 1.0 for r in recognised if r.whole}
    loose = {r.entity_id for r in recognised if not r.whole} - set(seeds)
    for entity_id, similarity in vector_entities[:VECTOR_SEEDS]:
        if similarity >= VECTOR_SEED_MIN_SIMILARITY and entity_id not in loose | set(seeds):
            seeds[entity_id] = similarity
    if specificity is None:
        return seeds
    return {
        pk: s * specificity.get(pk)
        for pk, s in seeds.items()
        if specificity.get(pk) >= SEED_MIN_SPECIFICITY
    }


def named_seeds(recognised: list[Recognised], seeds: dict[int, float]) -> set[int]:
    """The seeds the query names (recognised whole, specific enough to seed): the chunks
    that mention them are the graph's strong evidence."""
    return {r.entity_id for r in recognised if r.whole and r.entity_id in seeds}


def specificity_of(mention_count: int, chunk_count: int) -> float:
    """How much a mention of an entity with `mention_count` mentions says about a chunk
    among `chunk_count`: 0 for a hub, up to 1 for a name mentioned once."""
    chunks = max(1, chunk_count)
    mentions = max(1, mention_count)
    if chunks >= 1 / HUB_SHARE and mentions > HUB_SHARE * chunks:
        return 0.0
    idf = math.log1p(chunks / mentions) / math.log1p(chunks)
    return min(1.0, idf) ** SPECIFICITY_POWER


@dataclass(slots=True)
class Specificity:
    """Entity -> specificity in one workspace of `chunk_count` chunks (0 for an entity
    not known here)."""

    chunk_count: int
    of: dict[int, float] = field(default_factory=dict)

    def get(self, entity_id: int) -> float:
        return self.of.get(entity_id, 0.0)

    def add(self, entity_id: int, mention_count: int) -> None:
        if entity_id not in self.of:
            self.of[entity_id] = specificity_of(mention_count, self.chunk_count)

    def lower(self, entity_id: int, count: int) -> None:
        """The entity counts no more than a name found in `count` chunks."""
        if entity_id in self.of:
            self.of[entity_id] = min(self.of[entity_id], specificity_of(count, self.chunk_count))

    @property
    def common_from(self) -> int:
        """The chunk count from which a name is too common to seed (hub, or below
        SEED_MIN_SPECIFICITY): counting further changes nothing."""
        chunks = max(1, self.chunk_count)
        if chunks >= 1 / HUB_SHARE:
            return int(HUB_SHARE * chunks) + 1
        low, high = 1, chunks  # specificity falls as the count grows
        while low < high:
            middle = (low + high) // 2
            if specificity_of(middle, chunks) < SEED_MIN_SPECIFICITY:
                high = middle
            else:
                low = middle + 1
        return low


def seed_specificity(
    workspace_id: int, entity_ids: list[int], written: dict[int, str] | None = None
) -> Specificity:
    """The specificity of these entities of the workspace: one indexed read of their
    mention counts, with the workspace's chunk count (boilerplate too, so that the index
    alone answers) unless a large one is cached. `written` (entity -> the query's words it
    was recognised by) lowers an entity to the specificity of those words in the chunks'
    text (`name_frequencies`)."""
    cached = _chunk_counts.get(workspace_id)
    now = time.monotonic()
    counting = cached is None or now - cached[0] >= CHUNK_COUNT_TTL_SECONDS
    if cached is not None and not counting:
        count_sql, count_param = "%s::bigint", cached[1]
    else:
        count_sql = "(SELECT count(*) FROM ingest_chunk WHERE workspace_id = %s)"
        count_param = workspace_id
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {count_sql}, e.id, e.mention_count FROM (SELECT 1) AS one "  # noqa: S608
            "LEFT JOIN knowledge_entity e ON e.workspace_id = %s AND e.id = ANY(%s)",
            [count_param, workspace_id, sorted(set(entity_ids))],
        )
        rows = cursor.fetchall()
    chunk_count = int(rows[0][0])
    if counting and chunk_count >= CHUNK_COUNT_CACHED_FROM:
        _chunk_counts[workspace_id] = (now, chunk_count)
    found = Specificity(chunk_count)
    for _, entity_id, mention_count in rows:
        if entity_id is not None:
            found.add(int(entity_id), int(mention_count or 0))
    # Only a name its mentions call specific is counted in the text (a hub stays a hub).
    written = {
        pk: text for pk, text in (written or {}).items() if found.get(pk) >= SEED_MIN_SPECIFICITY
    }
    if written:
        texts = sorted(set(written.values()))
        counts = name_frequencies(workspace_id, texts, found.common_from)
        for entity_id, text in written.items():
            count = counts.get(text)
            if count is not None:
                found.lower(entity_id, count)
    return found


def name_frequencies(workspace_id: int, texts: list[str], cap: int) -> dict[str, int]:
    """Text -> the chunks of the workspace whose words hold it as a phrase (the full-text
    index, as the keyword signal reads it: stemmed, any case), counted up to `cap` (a
    common word stops the count early). A text with nothing indexable (stopwords only) is
    left out: its words say nothing either way."""
    if not texts:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t.text, CASE WHEN numnode(q.query) = 0 THEN NULL ELSE (
                SELECT count(*) FROM (
                    SELECT 1 FROM ingest_chunk c
                    WHERE c.workspace_id = %s AND c.search_vector @@ q.query LIMIT %s
                ) AS hits) END
            FROM unnest(%s::text[]) AS t(text)
            CROSS JOIN LATERAL phraseto_tsquery('english', t.text) AS q(query)
            """,
            [workspace_id, max(1, cap), texts],
        )
        rows = cursor.fetchall()
    return {str(text): int(count) for text, count in rows if count is not None}


def graph_proximity(
    workspace_id: int,
    seeds: dict[int, float],
    hops: int,
    relation_names: list[str] | None,
    entity_names: list[str] | None,
    specificity: Specificity | None = None,
) -> dict[int, tuple[float, int]]:
    """Entity -> (proximity, depth) over the seeds' neighbourhood from the configured
    backend (the seeds alone for hops == 0). `specificity` (the seeds' already) is filled
    in for the entities reached, from the mention counts the backend returns. Raises
    GraphBackendError when the backend cannot answer."""
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
    if specificity is not None:
        for node in graph.nodes:
            specificity.add(node.id, node.mention_count)
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
    scope: DocumentScope | None,
    specificity: Specificity | None = None,
    named: set[int] | None = None,
) -> GraphChunks:
    """(chunk id, graph score), best first: each chunk scores the sum of the proximities of
    the (distinct) entities near the query that it mentions, each times the entity's
    specificity when given (hubs propose nothing); chunks below GRAPH_MIN_SCORE are left
    out. Each entity contributes at most its specificity's share of
    GRAPH_MENTIONS_PER_ENTITY of its mentions, at least one (the first the
    mention_entity_time index yields; no ORDER BY, which would read all of a hub's mentions
    to sort them), so a hub costs what a leaf costs and a common name adds few chunks.
    The chunks ranked that mention one of the `named` seeds are the strong ones."""
    weight = {
        pk: p * (1.0 if specificity is None else specificity.get(pk))
        for pk, (p, _) in proximity.items()
    }
    weight = {pk: w for pk, w in weight.items() if w > 0}
    if not weight:
        return GraphChunks([], frozenset())
    ids = sorted(weight)
    caps = [mention_cap(None if specificity is None else specificity.get(pk)) for pk in ids]
    params: list[Any] = [ids, caps, workspace_id]
    source_filter = ""
    if scope is not None and scope.restricted:
        conditions = scope.conditions("d", params)
        source_filter = (
            " AND EXISTS (SELECT 1 FROM ingest_chunk c JOIN ingest_document d "  # noqa: S608
            f"ON d.id = c.document_id WHERE c.id = m.chunk_id{conditions})"
        )
    sql = f"""
        SELECT DISTINCT x.chunk_id, e.id
        FROM unnest(%s::bigint[], %s::int[]) AS e(id, cap)
        CROSS JOIN LATERAL (
            SELECT m.chunk_id FROM knowledge_mention m
            WHERE m.entity_id = e.id AND m.workspace_id = %s {source_filter}
            LIMIT e.cap
        ) AS x
    """  # noqa: S608 (fixed SQL; values are parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    scores: dict[int, float] = defaultdict(float)
    naming: set[int] = set()
    for chunk_id, entity_id in rows:
        scores[int(chunk_id)] += weight[int(entity_id)]
        if named and int(entity_id) in named:
            naming.add(int(chunk_id))
    ranked = sorted(
        ((pk, s) for pk, s in scores.items() if s >= GRAPH_MIN_SCORE),
        key=lambda kv: (-kv[1], kv[0]),
    )[:candidates]
    return GraphChunks(
        [(pk, round(s, 6)) for pk, s in ranked],
        frozenset(pk for pk, _ in ranked if pk in naming),
    )


def mention_cap(specificity: float | None) -> int:
    """The mentions an entity of this specificity proposes: GRAPH_MENTIONS_PER_ENTITY for a
    name met once, its share of them for a commoner one, at least one."""
    if specificity is None:
        return GRAPH_MENTIONS_PER_ENTITY
    return max(1, math.ceil(GRAPH_MENTIONS_PER_ENTITY * specificity))


@dataclass(frozen=True, slots=True)
class GraphChunks:
    """The graph's ranking of chunks, and those of them that mention a seed the query
    names (its strong evidence)."""

    ranked: list[tuple[int, float]]
    strong: frozenset[int]
