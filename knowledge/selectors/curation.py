"""Reads behind curation: an entity by id or by name, the merge event to undo, the review
queue, the event log, and the entities a consolidation pass walks.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from ingest.models import Source
from knowledge.models import (
    CurationAction,
    CurationEvent,
    Entity,
    EntityState,
    Mention,
    MergeSuggestion,
)
from workspaces.errors import InvalidInput, NotFound
from workspaces.models import Workspace
from workspaces.selectors import get_object_for_workspace


def get_entity_for_workspace(workspace: Workspace, entity_id: int) -> Entity:
    return get_object_for_workspace(
        Entity.objects.select_related("type"), workspace, entity_id, label="entity"
    )


def find_entity(workspace: Workspace, ref: str) -> Entity:
    """An entity by id or by exact name (for commands); ambiguous names are refused."""
    queryset = Entity.objects.for_workspace(workspace).select_related("type")
    if ref.isdigit():
        found = queryset.filter(pk=int(ref)).first()
        if found is not None:
            return found
    matches = list(queryset.filter(name=ref, state=EntityState.ACTIVE)[:3])
    if not matches:
        raise NotFound(f"No entity {ref!r} in this workspace.")
    if len(matches) > 1:
        raise InvalidInput(
            f"{ref!r} names several entities ({', '.join(str(e.pk) for e in matches)}); use the id."
        )
    return matches[0]


def find_merge_event(workspace: Workspace, entity: Entity) -> CurationEvent:
    """The merge that absorbed `entity`, or else the latest merge into it, not undone."""
    merges = CurationEvent.objects.for_workspace(workspace).filter(
        action__in=[CurationAction.MERGE, CurationAction.AUTO_MERGE], undone_by__isnull=True
    )
    if entity.state == EntityState.MERGED:
        for event in merges.order_by("-created_at"):
            if entity.pk in {m["id"] for m in event.payload.get("merged", [])}:
                return event
    found = merges.filter(entity=entity).order_by("-created_at").first()
    if found is None:
        raise NotFound(f"No merge of {entity.name!r} to undo.")
    return found


def list_merge_suggestions(workspace: Workspace, *, status: str = "open") -> Any:
    return (
        MergeSuggestion.objects.for_workspace(workspace)
        .filter(status=status)
        .select_related("entity_a__type", "entity_b__type")
        .order_by("-score", "pk")
    )


MACHINE = "machine"


def list_curation_events(
    workspace: Workspace,
    *,
    entity_id: int | None = None,
    relation_id: int | None = None,
    event_id: int | None = None,
    actor: str | None = None,
    action: str | None = None,
    since: datetime | date | None = None,
    until: datetime | date | None = None,
) -> Any:
    """The workspace's curation events, newest first (or one of them): one entity's (those
    naming it in their payload too: the merged, the split-off, the other of a pair) or one
    relation's,
    by one person (`actor` a username, or "machine" for consolidation's and the LLM's own
    decisions), of one action, within dates (`until` a date: that whole day)."""
    events = (
        CurationEvent.objects.for_workspace(workspace)
        .select_related("actor", "entity", "relation")
        .defer("entity__embedding", "entity__blocking_keys", "entity__properties")
    )
    if entity_id is not None:
        events = events.filter(
            Q(entity_id=entity_id)
            | Q(payload__merged__contains=[{"id": entity_id}])
            | Q(payload__pair__contains=[entity_id])
            | Q(payload__new_entity=entity_id)
        )
    if relation_id is not None:
        events = events.filter(relation_id=relation_id)
    if event_id is not None:
        events = events.filter(pk=event_id)
    if actor == MACHINE:
        events = events.filter(actor__isnull=True)
    elif actor:
        events = events.filter(actor__username=actor)
    if action:
        events = events.filter(action=action)
    if since is not None:
        events = events.filter(created_at__gte=_moment(since))
    if isinstance(until, datetime):
        events = events.filter(created_at__lte=_moment(until))
    elif until is not None:
        events = events.filter(created_at__lt=_moment(until) + timedelta(days=1))
    return events.order_by("-created_at", "-pk")


def _moment(value: datetime | date) -> datetime:
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else timezone.make_aware(value)
    return timezone.make_aware(datetime.combine(value, time.min))


def list_curation_actors(workspace: Workspace) -> list[str]:
    """The usernames of the people with curation events in the workspace."""
    return sorted(
        set(
            CurationEvent.objects.for_workspace(workspace)
            .filter(actor__isnull=False)
            .values_list("actor__username", flat=True)
        )
    )


def get_llm_verdicts(workspace: Workspace, pairs: list[tuple[int, int]]) -> dict[Any, Any]:
    """The LLM's verdict and reason for each pair (lower id first) it judged."""
    if not pairs:
        return {}
    lows = {low for low, _ in pairs}
    found = (
        MergeSuggestion.objects.for_workspace(workspace)
        .filter(entity_a_id__in=lows)
        .exclude(llm_verdict="")
        .values_list("entity_a_id", "entity_b_id", "llm_verdict", "llm_reason")
    )
    wanted = set(pairs)
    return {(a, b): (verdict, reason) for a, b, verdict, reason in found if (a, b) in wanted}


def get_entities_to_consolidate(workspace: Workspace, *, source: Source | None = None) -> Any:
    """Active entities of the workspace (only those a source mentions, when given)."""
    entities = Entity.objects.for_workspace(workspace).filter(state=EntityState.ACTIVE)
    if source is not None:
        entities = entities.filter(
            pk__in=Mention.objects.filter(chunk__document__source=source).values("entity_id")
        )
    return entities


def all_curation_events_of(workspace: Workspace, event_ids: list[int]) -> bool:
    """Whether every one of these events is the workspace's."""
    found = CurationEvent.objects.for_workspace(workspace).filter(pk__in=event_ids).count()
    return found == len(set(event_ids))
