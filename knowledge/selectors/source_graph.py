"""What a source gave the graph: the active entities and relations with evidence in its
documents, most mentioned first, and how many entities each of a page of sources gave (the
sources list's column, one aggregate query for the page).

A mention or an evidence row belongs to a source through its chunk's document, as the
extraction summary counts them (selectors/extraction.py); a duplicate document has no chunks
of its own, so what it repeats counts for the source of its original.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection
from django.db.models import Count, QuerySet

from ingest.models import Source
from knowledge.models import Entity, EntityState, Relation
from workspaces.models import Workspace


def get_source_entities(workspace: Workspace, source: Source) -> QuerySet[Entity]:
    """The workspace's active entities mentioned in the source's documents, each with
    `source_mentions` (its mentions there), most mentioned first, then the most mentioned
    overall, then by name."""
    return (
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE, mentions__chunk__document__source_id=source.pk)
        .annotate(source_mentions=Count("mentions"))
        .select_related("type")
        .only("id", "name", "type__name", "mention_count", "degree")
        .order_by("-source_mentions", "-mention_count", "name", "id")
    )


def get_source_relations(workspace: Workspace, source: Source) -> QuerySet[Relation]:
    """The workspace's active relations with evidence in the source's documents, each with
    `source_evidence` (its evidence rows there), most evidenced first."""
    return (
        Relation.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE, evidence__chunk__document__source_id=source.pk)
        .annotate(source_evidence=Count("evidence"))
        .select_related("source", "target", "type")
        .only(
            "id", "source__id", "source__name", "target__id", "target__name", "type__name",
            "evidence_count", "weight",
        )
        .order_by("-source_evidence", "-evidence_count", "id")
    )  # fmt: skip


def entity_counts_by_source(*, workspace_id: int, source_ids: Iterable[int]) -> dict[int, int]:
    """Source id -> how many active entities its documents mention, for all the given
    sources in one query (the GIN index on `Entity.source_ids` finds the rows); a source
    that gave none is left out."""
    ids = sorted({int(i) for i in source_ids})
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT s.id, count(*) FROM knowledge_entity e
            CROSS JOIN LATERAL unnest(e.source_ids) AS s(id)
            WHERE e.workspace_id = %s AND e.state = %s AND e.source_ids && %s::bigint[]
              AND s.id = ANY(%s::bigint[])
            GROUP BY s.id
            """,
            [workspace_id, EntityState.ACTIVE, ids, ids],
        )
        return {int(source_id): int(count) for source_id, count in cursor.fetchall()}
