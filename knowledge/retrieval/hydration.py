"""Hydration: the fused ids made into the hits a search returns — entities with why they
are here, chunks with their documents, relations among the entities with their best
evidence, and shortest paths between the entities the query named.

Each is one bounded query (paths: one backend call per pair). Every text is bounded here,
where it is read; the context block neutralises it again when it quotes it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from django.db import connection

from knowledge.graph import get_graph_backend
from knowledge.graph.base import GraphBackendError
from knowledge.retrieval.context import bound
from knowledge.retrieval.types import (
    ChunkHit,
    ChunkSignals,
    EntityHit,
    EvidenceHit,
    PathEdge,
    PathHit,
    PathNode,
    Recognised,
    RelationHit,
)

# What a result holds.
RELATION_LIMIT = 30
EVIDENCE_PER_RELATION = 2
MAX_PATH_PAIRS = 3
PATH_MAX_HOPS = 3
CHUNK_TEXT_CHARS = 2000
EVIDENCE_CHARS = 600
DESCRIPTION_CHARS = 500


def _json_list(value: Any) -> list[Any]:
    """A jsonb list read through a raw cursor (Django's psycopg setup returns jsonb as text)."""
    if isinstance(value, str):
        value = json.loads(value)
    return value if isinstance(value, list) else []


def entity_hits(
    workspace_id: int,
    order: list[tuple[int, float]],
    recognised: list[Recognised],
    vector: list[tuple[int, float]],
    proximity: dict[int, tuple[float, int]],
) -> list[EntityHit]:
    """The fused entities that are (still) active, in fused order, with why they are here."""
    if not order:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT e.id, e.name, t.name, left(coalesce(nullif(e.summary, ''), e.description), %s),
                   e.aliases, e.mention_count
            FROM knowledge_entity e JOIN knowledge_entitytype t ON t.id = e.type_id
            WHERE e.workspace_id = %s AND e.id = ANY(%s) AND e.state = 'active'
            """,
            [DESCRIPTION_CHARS + 1, workspace_id, [pk for pk, _ in order]],
        )
        rows = {row[0]: row for row in cursor.fetchall()}
    matched: dict[int, str] = {}
    for r in recognised:
        matched.setdefault(r.entity_id, r.matched)
    similarity = dict(vector)
    hits = []
    for pk, score in order:
        row = rows.get(pk)
        if row is None:
            continue
        _, name, type_name, description, aliases, mention_count = row
        near = proximity.get(pk)
        hits.append(
            EntityHit(
                id=pk,
                name=name,
                type=type_name,
                description=bound(description or "", DESCRIPTION_CHARS)[0],
                aliases=[str(a) for a in _json_list(aliases)][:20],
                mention_count=mention_count,
                score=score,
                why=_why(pk, matched, similarity, near),
                matched=matched.get(pk),
                similarity=similarity.get(pk),
                depth=near[1] if near else None,
                proximity=round(near[0], 6) if near else None,
            )
        )
    return hits


def _why(
    pk: int,
    matched: dict[int, str],
    similarity: dict[int, float],
    near: tuple[float, int] | None,
) -> list[str]:
    """The signals that found the entity; "graph" only when the graph reached it (a
    recognised seed at depth 0 is there for its name)."""
    why = []
    if pk in matched:
        why.append("recognised")
    if pk in similarity:
        why.append("vector")
    if near is not None and (near[1] > 0 or pk not in matched):
        why.append("graph")
    return why


def chunk_hits(
    workspace_id: int, fused: list[tuple[int, float, ChunkSignals]], entity_ids: list[int]
) -> list[ChunkHit]:
    """The fused chunks with their documents and which of `entity_ids` each mentions (the
    context block cites them), in one query."""
    if not fused:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.id, c.ordinal, left(c.text, %s), c.char_start, c.char_end,
                   d.id, d.title, d.path, d.source_id,
                   ARRAY(SELECT DISTINCT m.entity_id FROM knowledge_mention m
                         WHERE m.chunk_id = c.id AND m.entity_id = ANY(%s)),
                   d.published_at
            FROM ingest_chunk c JOIN ingest_document d ON d.id = c.document_id
            WHERE c.workspace_id = %s AND c.id = ANY(%s)
            """,
            [CHUNK_TEXT_CHARS + 1, entity_ids, workspace_id, [pk for pk, _, _ in fused]],
        )
        rows = {row[0]: row for row in cursor.fetchall()}
    position = {pk: i for i, pk in enumerate(entity_ids)}
    hits = []
    for pk, score, signals in fused:
        row = rows.get(pk)
        if row is None:  # deleted since the signal ran
            continue
        _, ordinal, text, start, end, document_id, title, path, source_id, mentioned, dated = row
        text, truncated = bound(text, CHUNK_TEXT_CHARS)
        hits.append(
            ChunkHit(
                id=pk,
                document_id=document_id,
                document_title=title,
                document_path=path,
                url=path if path.startswith(("http://", "https://")) else None,
                source_id=source_id,
                ordinal=ordinal,
                char_start=start,
                char_end=end,
                text=text,
                truncated=truncated,
                score=score,
                signals=signals,
                entity_ids=sorted(mentioned or [], key=position.__getitem__),
                published_at=dated,
            )
        )
    return hits


def relation_hits(
    workspace_id: int,
    entity_ids: list[int],
    relation_names: list[str] | None,
    chunk_ids: list[int],
) -> list[RelationHit]:
    """Active relations among the result's entities (strongest first) with their best
    evidence sentences, preferring evidence in the returned chunks."""
    if len(entity_ids) < 2:
        return []
    params: list[Any] = [DESCRIPTION_CHARS + 1, workspace_id, entity_ids, entity_ids]
    type_clause = ""
    if relation_names is not None:
        type_clause = "AND rt.name = ANY(%s)"
        params.append(relation_names)
    params.append(RELATION_LIMIT)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT r.id, r.source_id, r.target_id, rt.name, r.weight, left(r.description, %s),
                   s.name, t.name
            FROM knowledge_relation r
            JOIN knowledge_relationtype rt ON rt.id = r.type_id
            JOIN knowledge_entity s ON s.id = r.source_id
            JOIN knowledge_entity t ON t.id = r.target_id
            WHERE r.workspace_id = %s AND r.state = 'active'
              AND r.source_id = ANY(%s) AND r.target_id = ANY(%s) {type_clause}
            ORDER BY r.weight DESC, r.id
            LIMIT %s
            """,  # noqa: S608 (fixed SQL; values are parameters)
            params,
        )
        rows = cursor.fetchall()
    if not rows:
        return []
    evidence = _evidence(workspace_id, [row[0] for row in rows], chunk_ids)
    hits = []
    for pk, source_id, target_id, type_name, weight, description, source, target in rows:
        hits.append(
            RelationHit(
                id=pk,
                source_id=source_id,
                target_id=target_id,
                source_name=source,
                target_name=target,
                type=type_name,
                weight=round(float(weight), 4),
                description=bound(description or "", DESCRIPTION_CHARS)[0],
                evidence=evidence.get(pk, []),
            )
        )
    return hits


def _evidence(
    workspace_id: int, relation_ids: list[int], chunk_ids: list[int]
) -> dict[int, list[EvidenceHit]]:
    """Relation -> its best EVIDENCE_PER_RELATION evidence sentences (those in `chunk_ids`
    first, then the strongest), in one query."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT ev.relation_id, ev.chunk_id, c.document_id, ev.char_start, ev.char_end,
                   CASE WHEN ev.char_start IS NOT NULL AND ev.char_start >= c.char_start
                             AND ev.char_end <= c.char_end
                        THEN substr(c.text, ev.char_start - c.char_start + 1,
                                    LEAST(ev.char_end - ev.char_start, %s))
                        ELSE left(ev.description, %s) END
            FROM unnest(%s::bigint[]) AS r(id)
            CROSS JOIN LATERAL (
                SELECT e.* FROM knowledge_relationevidence e
                WHERE e.relation_id = r.id AND e.workspace_id = %s
                ORDER BY e.chunk_id = ANY(%s) DESC, e.strength DESC, e.id
                LIMIT %s
            ) AS ev
            JOIN ingest_chunk c ON c.id = ev.chunk_id
            ORDER BY ev.relation_id, ev.chunk_id = ANY(%s) DESC, ev.strength DESC, ev.id
            """,
            [
                EVIDENCE_CHARS,
                EVIDENCE_CHARS,
                relation_ids,
                workspace_id,
                chunk_ids,
                EVIDENCE_PER_RELATION,
                chunk_ids,
            ],
        )
        evidence: dict[int, list[EvidenceHit]] = defaultdict(list)
        for relation_id, chunk_id, document_id, start, end, text in cursor.fetchall():
            evidence[relation_id].append(
                EvidenceHit(
                    chunk_id=chunk_id,
                    document_id=document_id,
                    char_start=start,
                    char_end=end,
                    text=text or "",
                )
            )
    return evidence


def path_hits(
    workspace_id: int, ends: list[int], relation_names: list[str] | None
) -> tuple[list[PathHit], str]:
    """Shortest paths between pairs of recognised entities (the first MAX_PATH_PAIRS
    pairs, at most PATH_MAX_HOPS edges each), and a warning when the backend failed (the
    paths found until then are kept)."""
    pairs = [(a, b) for i, a in enumerate(ends) for b in ends[i + 1 :]][:MAX_PATH_PAIRS]
    if not pairs:
        return [], ""
    backend = get_graph_backend()
    paths = []
    try:
        for source, target in pairs:
            found = backend.shortest_path(
                workspace_id=workspace_id,
                source=source,
                target=target,
                max_hops=PATH_MAX_HOPS,
                relation_types=relation_names,
            )
            if found is None or not found.edges:
                continue
            paths.append(
                PathHit(
                    source_id=source,
                    target_id=target,
                    length=found.length,
                    nodes=[PathNode(n.id, n.name, n.type) for n in found.nodes],
                    edges=[PathEdge(e.id, e.source, e.target, e.type) for e in found.edges],
                )
            )
    except GraphBackendError as exc:
        return paths, f"paths skipped: {exc}"
    return paths, ""
