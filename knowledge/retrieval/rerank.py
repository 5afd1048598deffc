"""Entity-coverage reranking: after fusion, the first RETRIEVAL_RERANK_DEPTH chunks are
ordered again by their fused score blended with how much of the question's recognised
entities they cover.

Why: rank fusion only sees ranks. A chunk that names the question's specific entity and
one that merely resembles the question in its words can sit at neighbouring ranks; the
graph knows which of them is about what was asked. Two shares, each between 0 and 1:

- mentions: the recognised entities the chunk mentions (Mention rows), each weighted by
  its specificity as the graph signal weighs it (knowledge/retrieval/signals/expansion.py:
  a hub counts 0, a rare name close to 1), over the weight of all of them;
- title: whether the chunk's document is about one of them — its title names it (the
  offline extractor makes a page's title its subject: "json — JSON encoder and decoder"
  is about `json`). A hub counts here: the page titled by a common name is the one about
  it.

score' = score / best score + RETRIEVAL_RERANK_MENTION_WEIGHT * mentions
         + RETRIEVAL_RERANK_TITLE_WEIGHT * title,
reported on the fused scale (times the best score), so scores stay in order. With no
recognised entity, or depth 0, nothing moves. `coverage_of` reads (one statement over the
chunks reranked); `rerank` is pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

from knowledge.consolidation.keys import entity_key
from knowledge.extraction.structural import topic_name
from knowledge.retrieval.types import ChunkSignals, Recognised

Fused = list[tuple[int, float, ChunkSignals]]


@dataclass(frozen=True, slots=True)
class RerankSettings:
    depth: int
    mention_weight: float
    title_weight: float

    @classmethod
    def configured(cls) -> RerankSettings:
        return cls(
            depth=max(0, int(settings.RETRIEVAL_RERANK_DEPTH)),
            mention_weight=float(settings.RETRIEVAL_RERANK_MENTION_WEIGHT),
            title_weight=float(settings.RETRIEVAL_RERANK_TITLE_WEIGHT),
        )

    @property
    def active(self) -> bool:
        return self.depth > 0 and (self.mention_weight > 0 or self.title_weight > 0)


@dataclass(slots=True)
class Coverage:
    """What the question's entities are to each chunk reranked."""

    # Recognised entity -> weight in the mentions share (its specificity).
    weights: dict[int, float]
    # Chunk -> the recognised entities it mentions.
    mentions: dict[int, set[int]] = field(default_factory=dict)
    # Chunks whose document's title names a recognised entity.
    titled: set[int] = field(default_factory=set)

    def mention_share(self, chunk_id: int) -> float:
        total = sum(self.weights.values())
        if total <= 0:
            return 0.0
        return sum(self.weights.get(e, 0.0) for e in self.mentions.get(chunk_id, ())) / total


def title_key(title: str) -> str | None:
    """The canonical key of what a document's title names ("json — JSON encoder and
    decoder" → "json"), or None when the title names no topic."""
    topic = topic_name(title) if title else None
    return entity_key(topic[0], "") if topic else None


def coverage_of(
    workspace_id: int,
    chunk_ids: list[int],
    recognised: list[Recognised],
    specificity: dict[int, float],
) -> Coverage:
    """The recognised entities' mentions in these chunks and the chunks whose document's
    title names one of them: one statement (chunks, their documents' titles, the matching
    mentions)."""
    entity_ids = sorted({r.entity_id for r in recognised})
    coverage = Coverage(weights={e: specificity.get(e, 0.0) for e in entity_ids})
    if not chunk_ids or not entity_ids:
        return coverage
    keys = {k for k in (entity_key(r.matched, "") for r in recognised) if k}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.id, d.title,
                   array_remove(array_agg(DISTINCT m.entity_id), NULL)
            FROM ingest_chunk c
            JOIN ingest_document d ON d.id = c.document_id
            LEFT JOIN knowledge_mention m
              ON m.chunk_id = c.id AND m.workspace_id = c.workspace_id
             AND m.entity_id = ANY(%s)
            WHERE c.workspace_id = %s AND c.id = ANY(%s)
            GROUP BY c.id, d.title
            """,
            [entity_ids, workspace_id, chunk_ids],
        )
        rows = cursor.fetchall()
    titles: dict[str, str | None] = {}
    for chunk_id, title, mentioned in rows:
        if mentioned:
            coverage.mentions[int(chunk_id)] = {int(e) for e in mentioned}
        if title not in titles:
            titles[title] = title_key(title or "")
        if titles[title] in keys:
            coverage.titled.add(int(chunk_id))
    return coverage


def rerank(fused: Fused, coverage: Coverage, config: RerankSettings) -> Fused:
    """The first `config.depth` of `fused` ordered by the blended score (ties keep their
    fused order), the rest after them unchanged."""
    if not config.active or not fused or not (coverage.mentions or coverage.titled):
        return fused
    head, tail = fused[: config.depth], fused[config.depth :]
    best = max(score for _, score, _ in head) or 1.0
    blended = [
        (
            pk,
            best
            * (
                score / best
                + config.mention_weight * coverage.mention_share(pk)
                + config.title_weight * (pk in coverage.titled)
            ),
            signals,
            position,
        )
        for position, (pk, score, signals) in enumerate(head)
    ]
    blended.sort(key=lambda row: (-row[1], row[3]))
    return [(pk, round(score, 6), signals) for pk, score, signals, _ in blended] + tail
