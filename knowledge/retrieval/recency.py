"""Recency preference: newer documents rank a little higher. Off by default.

After fusion (and reranking), every fused chunk's score is raised by its document's age:

    score' = score * (1 + weight * 0.5 ** (age in days / RETRIEVAL_RECENCY_HALF_LIFE_DAYS))

where the age is now minus the document's own date (Document.published_at: what its
content states, else its Last-Modified or file time). A document dated today gets the whole
`weight` on top of its score, one a half-life old half of it, an old one next to nothing. A
document without a date gets nothing: its age is unknown, and taking its ingestion date
instead would favour whatever was crawled last. The weight is RETRIEVAL_RECENCY_WEIGHT, or a
request's `recency` (0..1). Neighbouring ranks of the fusion differ by 10-20 % of their score
(1 / (k + rank) with k = 5), so a weight of 0.1-0.2 lets a new document pass an older one of
about the same score, never a much better one.

With the weight 0 (the default) the stage does not run at all, so the ranking is exactly
the fusion's (measured on the panel: docs/operations.md, "Recency"). `published_dates`
reads (one statement over the fused chunks); `prefer_recent` is pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection

from knowledge.retrieval.types import ChunkSignals
from workspaces.errors import InvalidInput

Fused = list[tuple[int, float, ChunkSignals]]
MAX_WEIGHT = 1.0
_SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class RecencySettings:
    weight: float
    half_life_days: float

    @classmethod
    def configured(cls, weight: float | None = None) -> RecencySettings:
        """The settings' preference, or a request's `weight` (0..MAX_WEIGHT) instead of
        RETRIEVAL_RECENCY_WEIGHT. Raises InvalidInput for a weight out of range."""
        if weight is None:
            weight = float(settings.RETRIEVAL_RECENCY_WEIGHT)
        elif not 0.0 <= weight <= MAX_WEIGHT:  # NaN fails both comparisons
            raise InvalidInput(f"recency: between 0 and {MAX_WEIGHT:g}.")
        return cls(
            weight=min(max(float(weight), 0.0), MAX_WEIGHT),
            half_life_days=float(settings.RETRIEVAL_RECENCY_HALF_LIFE_DAYS),
        )

    @property
    def active(self) -> bool:
        return self.weight > 0 and self.half_life_days > 0

    def factor(self, published_at: datetime | None, now: datetime) -> float:
        """What a chunk's score is multiplied by for its document's date."""
        if published_at is None or not self.active:
            return 1.0
        age_days = max(0.0, (now - published_at).total_seconds() / _SECONDS_PER_DAY)
        return 1.0 + self.weight * 0.5 ** (age_days / self.half_life_days)


def published_dates(workspace_id: int, chunk_ids: list[int]) -> dict[int, datetime]:
    """The own date of each chunk's document, for the chunks whose document has one."""
    if not chunk_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.id, d.published_at
            FROM ingest_chunk c JOIN ingest_document d ON d.id = c.document_id
            WHERE c.workspace_id = %s AND c.id = ANY(%s) AND d.published_at IS NOT NULL
            """,
            [workspace_id, chunk_ids],
        )
        return {int(pk): published for pk, published in cursor.fetchall()}


def prefer_recent(
    fused: Fused, dates: dict[int, datetime], config: RecencySettings, *, now: datetime
) -> Fused:
    """`fused` rescored by its documents' dates and ordered by the new scores (ties keep
    their fused order)."""
    if not config.active:
        return fused
    rescored = [
        (position, pk, round(score * config.factor(dates.get(pk), now), 6), signals)
        for position, (pk, score, signals) in enumerate(fused)
    ]
    rescored.sort(key=lambda item: (-item[2], item[0]))
    return [(pk, score, signals) for _, pk, score, signals in rescored]
