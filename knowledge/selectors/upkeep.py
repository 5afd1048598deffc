"""Reads the scheduled upkeep jobs (knowledge/hooks.py) decide by: how far a workspace's
graph moved since its community map, which workspaces have merge suggestions the LLM has
not judged, and what the LLM's review cost a workspace this month."""

from __future__ import annotations

from decimal import Decimal

from django.db import connection

from knowledge.models import CommunityRun, MergeSuggestion, SuggestionStatus
from knowledge.selectors.llm_usage import spent_this_month
from workspaces.models import Workspace

_ADDED_AND_NOW = """
SELECT
    (SELECT count(*) FROM knowledge_entity
     WHERE workspace_id = %(ws)s AND state = 'active' AND id > %(last_entity)s),
    (SELECT count(*) FROM knowledge_entity WHERE workspace_id = %(ws)s AND state = 'active'),
    (SELECT count(*) FROM knowledge_relation
     WHERE workspace_id = %(ws)s AND state = 'active' AND id > %(last_relation)s),
    (SELECT count(*) FROM knowledge_relation WHERE workspace_id = %(ws)s AND state = 'active')
"""


def graph_changes_since(workspace: Workspace, run: CommunityRun | None) -> tuple[int, int]:
    """(entities and relations added or removed since `run` was computed, the size of the
    graph it was computed from); without a run, (the whole active graph, 0).

    Added: active rows newer than the run's newest; removed: the run's rows no longer
    active (deleted, merged away). A row both added and removed since is not counted."""
    with connection.cursor() as cursor:
        cursor.execute(
            _ADDED_AND_NOW,
            {
                "ws": workspace.pk,
                "last_entity": run.last_entity if run else 0,
                "last_relation": run.last_relation if run else 0,
            },
        )
        added_entities, entities, added_relations, relations = cursor.fetchone()
    if run is None:
        return entities + relations, 0
    removed = max(run.entities - (entities - added_entities), 0) + max(
        run.relations - (relations - added_relations), 0
    )
    return added_entities + added_relations + removed, run.entities + run.relations


def workspaces_with_unjudged_suggestions() -> list[Workspace]:
    """Workspaces with open merge suggestions the LLM has not judged yet, by slug."""
    ids = (
        MergeSuggestion.objects.filter(status=SuggestionStatus.OPEN, llm_verdict="")
        .values_list("workspace_id", flat=True)
        .distinct()
    )
    return list(Workspace.objects.filter(pk__in=ids).order_by("slug"))


def review_spent_this_month(workspace: Workspace) -> Decimal:
    """What the LLM's review of merge suggestions cost the workspace since the month began
    (the ingest's reviews and the scheduled ones: purpose "review")."""
    return spent_this_month(workspace, purposes=("review",))
