"""Storing a workspace's communities (detected by knowledge/graph/communities.py) on its
entities, in one transaction, and telling the graph projections which ones changed."""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import batched

from django.db import connection, transaction

from knowledge.graph.communities import detect_communities
from knowledge.graph.sync import schedule_graph_sync
from workspaces.models import Workspace

UPDATE_BATCH = 5000


@dataclass(frozen=True, slots=True)
class CommunityReport:
    entities: int
    relations: int
    communities: int
    # Size of the largest community, and how many entities have no relation at all (each a
    # community of one).
    largest: int
    isolated: int
    modularity: float
    # Entities whose community number changed (those written).
    changed: int
    seconds: float


def _store(workspace: Workspace, assignment: dict[int, int]) -> list[int]:
    """Write the numbers (only rows whose number changes) and clear the number of entities
    no longer active; returns the ids written."""
    changed: list[int] = []
    with connection.cursor() as cursor:
        for batch in batched(sorted(assignment.items()), UPDATE_BATCH):
            cursor.execute(
                """
                UPDATE knowledge_entity AS e SET community = v.community
                FROM unnest(%s::bigint[], %s::int[]) AS v(id, community)
                WHERE e.id = v.id AND e.workspace_id = %s
                  AND e.community IS DISTINCT FROM v.community
                RETURNING e.id
                """,
                [[pk for pk, _ in batch], [n for _, n in batch], workspace.pk],
            )
            changed.extend(row[0] for row in cursor.fetchall())
        cursor.execute(
            """
            UPDATE knowledge_entity SET community = NULL
            WHERE workspace_id = %s AND state <> 'active' AND community IS NOT NULL
            RETURNING id
            """,
            [workspace.pk],
        )
        changed.extend(row[0] for row in cursor.fetchall())
    return changed


def do_compute_communities(*, workspace: Workspace) -> CommunityReport:
    """Detect the communities of the workspace's active graph and store each entity's
    number on `Entity.community` (one transaction: readers see the old numbering or the
    new one, never a mix); projections get the entities whose number changed."""
    started = time.perf_counter()
    found = detect_communities(workspace)
    with transaction.atomic():
        changed = _store(workspace, found.assignment)
        schedule_graph_sync(workspace_id=workspace.pk, entity_ids=changed, relation_ids=[])
    return CommunityReport(
        entities=found.entities,
        relations=found.relations,
        communities=len(found.sizes),
        largest=max(found.sizes, default=0),
        isolated=found.isolated,
        modularity=found.modularity,
        changed=len(changed),
        seconds=round(time.perf_counter() - started, 3),
    )
