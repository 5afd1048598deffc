"""Reads of the communities the last `do_compute_communities` run stored: their sizes and
best-connected members.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection
from django.db.models import Count

from knowledge.models import (
    Entity,
    EntityState,
)
from workspaces.models import Workspace

# The `top` members of each of `communities`: degree, then mention count, then id.
_COMMUNITY_MEMBERS = """
SELECT r.community, r.id, r.name, r.type, r.degree, r.mention_count FROM (
    SELECT e.community, e.id, e.name, et.name AS type, e.degree, e.mention_count,
           row_number() OVER (
               PARTITION BY e.community ORDER BY e.degree DESC, e.mention_count DESC, e.id
           ) AS rank
    FROM knowledge_entity AS e
    JOIN knowledge_entitytype AS et ON et.id = e.type_id
    WHERE e.workspace_id = %(ws)s AND e.state = 'active'
      AND e.community = ANY(%(communities)s::int[])
) AS r
WHERE r.rank <= %(top)s
ORDER BY r.community, r.rank
"""


@dataclass(frozen=True, slots=True)
class CommunityMember:
    id: int
    name: str
    type: str
    degree: int
    mention_count: int


@dataclass(frozen=True, slots=True)
class CommunitySummary:
    id: int
    size: int
    top: list[CommunityMember]


def community_summaries(
    *, workspace: Workspace, top: int = 5, limit: int | None = None
) -> list[CommunitySummary]:
    """The communities of the last `do_compute_communities` run, largest first (`limit` of
    them, None: all), each with its size and its `top` entities by degree (active relations,
    a self-loop once), then mention count, then id. Entities added since the run have no
    community yet and are not counted. Two queries, the second one pass over the
    workspace's relations."""
    active = Entity.objects.for_workspace(workspace).filter(
        state=EntityState.ACTIVE, community__isnull=False
    )
    sizes = [
        (community, size)
        for community, size in active.order_by()
        .values("community")
        .annotate(size=Count("pk"))
        .order_by("-size", "community")
        .values_list("community", "size")
        if community is not None
    ]
    if limit is not None:
        sizes = sizes[:limit]
    if not sizes or top < 1:
        return [CommunitySummary(id=c, size=n, top=[]) for c, n in sizes]
    # Degrees counted in one pass over the workspace's relations (per-entity counts took
    # 20 times longer when the communities hold most of a large graph).
    with connection.cursor() as cursor:
        cursor.execute(
            _COMMUNITY_MEMBERS,
            {"ws": workspace.pk, "communities": [c for c, _ in sizes], "top": top},
        )
        rows = cursor.fetchall()
    members: dict[int, list[CommunityMember]] = {}
    for community, pk, name, type_name, degree, mentions in rows:
        members.setdefault(community, []).append(
            CommunityMember(id=pk, name=name, type=type_name, degree=degree, mention_count=mentions)
        )
    return [CommunitySummary(id=c, size=n, top=members.get(c, [])) for c, n in sizes]
