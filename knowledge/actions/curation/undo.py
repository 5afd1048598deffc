"""One undo for every curation decision, whoever made it (a person, consolidation, the
LLM's review): `do_undo_event` finds the event's exact inverse in the registry
(events.py; each module registers the inverses of the actions it owns) and runs it in one
transaction, itself an event, with `undone_by` set on the original.

An undo is refused while a later decision about the same entity or relation still
stands — undoing the earlier one underneath it would leave the later one describing a
graph that no longer exists — and the refusal names that later event. `cascade=True`
undoes those later events first, newest first, then this one.

Undo events (unmerge, restore, relation undo) are not undoable themselves: redo the
decision instead. Events recorded before their payload kept what an exact undo needs are
refused with a message saying so, rather than undone approximately.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Q

from knowledge.actions.curation.events import UNDO_ACTIONS, Undoing, inverse_of, lock_event
from knowledge.actions.curation.merge import MERGE_ACTIONS
from knowledge.actions.curation.relations import RELATION_ACTIONS
from knowledge.actions.embeddings import vector_fields_for
from knowledge.models import CurationAction, CurationEvent
from workspaces.errors import Conflict
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Entity decisions that move mentions, edges or whole entities: a relation change made
# after one of them rests on it, and one made before it is buried under it.
STRUCTURAL_ACTIONS = MERGE_ACTIONS | {
    CurationAction.DELETE,
    CurationAction.SPLIT,
    CurationAction.BLOCK,
}
# How many later events a refusal names.
NAMED_BLOCKERS = 3


def is_undoable(event: CurationEvent) -> bool:
    """Whether an Undo can be offered for the event at all (it may still be refused)."""
    return event.undone_by_id is None and event.action not in UNDO_ACTIONS


def do_undo_event(
    *, workspace: Workspace, event_id: int, actor: User | None = None, cascade: bool = False
) -> CurationEvent:
    """Undo the event exactly; returns the undo's own event. Refused (Conflict) when it
    was undone already, is an undo itself, or a later event still standing touched the
    same entity or relation — unless `cascade`, which undoes those first, newest first."""
    vector = _vector_for_rename(workspace, event_id)
    with transaction.atomic():
        return _undo(workspace, event_id, actor, cascade=cascade, vector=vector)


def _vector_for_rename(workspace: Workspace, event_id: int) -> dict[str, Any] | None:
    """The old name's vector for a rename's undo, computed before any row lock (the model's
    first load takes seconds)."""
    event = CurationEvent.objects.for_workspace(workspace).filter(pk=event_id).first()
    if event is None or event.action != CurationAction.RENAME:
        return None
    return vector_fields_for(str(event.payload.get("before", {}).get("name", "")))


def _undo(
    workspace: Workspace,
    event_id: int,
    actor: User | None,
    *,
    cascade: bool,
    vector: dict[str, Any] | None = None,
) -> CurationEvent:
    event = _locked_event(workspace, event_id)
    blockers = dependants(workspace, event)
    if blockers and not cascade:
        named = "; ".join(f"event {b.pk} ({b.summary})" for b in blockers[:NAMED_BLOCKERS])
        raise Conflict(
            f"A later decision still stands on what event {event.pk} changed: {named}. "
            "Undo it first, or undo both."
        )
    for blocker in blockers:
        blocker.refresh_from_db(fields=["undone_by"])
        if blocker.undone_by_id is None:
            _undo(workspace, blocker.pk, actor, cascade=True)
    inverse = inverse_of(event.action)
    if inverse is None:
        raise Conflict(f"Event {event.pk} ({event.get_action_display()}) has no undo.")
    return inverse(Undoing(workspace=workspace, event=event, actor=actor, vector=vector))


def _locked_event(workspace: Workspace, event_id: int) -> CurationEvent:
    event = lock_event(workspace, event_id)
    if event.action in UNDO_ACTIONS:
        raise Conflict(
            f"Event {event_id} is an undo ({event.get_action_display()}); it cannot be "
            "undone itself: make the decision again instead."
        )
    return event


# --- What depends on an event ------------------------------------------------------------


def touched_entities(event: CurationEvent) -> set[int]:
    """The entities an event changed, from its row and its payload."""
    payload = event.payload or {}
    ids: set[Any] = {event.entity_id}
    if event.action in MERGE_ACTIONS:
        ids.add(payload.get("survivor", {}).get("id"))
        ids |= {m.get("id") for m in payload.get("merged", [])}
    ids |= set(payload.get("pair", []))
    ids |= {payload.get("new_entity"), payload.get("entity")}
    for side in ("before", "after"):
        snapshot = payload.get(side) or {}
        if event.action in RELATION_ACTIONS:
            ids |= {snapshot.get("source_id"), snapshot.get("target_id")}
    return {pk for pk in ids if isinstance(pk, int)}


def dependants(workspace: Workspace, event: CurationEvent) -> list[CurationEvent]:
    """Later events still standing that touched what this one changed, newest first.
    A relation change depends on the entity decisions that moved its ends and on the
    later changes of the same relation; an entity decision on every later decision
    about its entities (relation changes only when it moved edges)."""
    ours = touched_entities(event)
    later = (
        CurationEvent.objects.for_workspace(workspace)
        .filter(pk__gt=event.pk, undone_by__isnull=True)
        .exclude(action__in=UNDO_ACTIONS)
    )
    if event.action in RELATION_ACTIONS:
        same_relation = Q(relation_id=event.relation_id) & Q(action__in=RELATION_ACTIONS)
        found = later.filter(same_relation | (_touching(ours) & Q(action__in=STRUCTURAL_ACTIONS)))
    else:
        found = later.filter(_touching(ours))
        if event.action not in STRUCTURAL_ACTIONS:
            found = found.exclude(action__in=RELATION_ACTIONS)
    return list(found.order_by("-pk"))


def _touching(ids: set[int]) -> Q:
    query = Q(entity_id__in=ids) | Q(relation__source_id__in=ids) | Q(relation__target_id__in=ids)
    for pk in ids:
        query |= Q(payload__merged__contains=[{"id": pk}]) | Q(payload__pair__contains=[pk])
        query |= Q(payload__new_entity=pk) | Q(payload__entity=pk)
    return query
