"""One undo for every curation decision, whoever made it (a person, consolidation, the
LLM's review): `do_undo_event` finds the event's exact inverse and runs it in one
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

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Q

from knowledge.actions.curation import (
    _locked_entities,
    _sync_alias_list,
    do_restore_entity,
    do_unmerge,
)
from knowledge.actions.embeddings import VECTOR_FIELDS, vector_fields_for
from knowledge.actions.evidence import do_refresh_derived
from knowledge.actions.quality import do_undo_block
from knowledge.actions.relation_curation import do_undo_relation_event
from knowledge.graph.sync import schedule_graph_sync
from knowledge.models import (
    Alias,
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityState,
    Mention,
    MergeSuggestion,
    Relation,
    SuggestionStatus,
)
from workspaces.errors import Conflict, NotFound
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Events that undo another: they restore a state, and are not undone themselves.
UNDO_ACTIONS = frozenset(
    {CurationAction.UNMERGE, CurationAction.RESTORE, CurationAction.RELATION_UNDO}
)
MERGE_ACTIONS = frozenset({CurationAction.MERGE, CurationAction.AUTO_MERGE})
RELATION_ACTIONS = frozenset(
    {
        CurationAction.RELATION_DELETE,
        CurationAction.RELATION_RETYPE,
        CurationAction.RELATION_REVERSE,
        CurationAction.RELATION_ADD,
        CurationAction.RELATION_EDIT,
    }
)
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
    return _inverse(workspace, event, actor, vector)


def _locked_event(workspace: Workspace, event_id: int) -> CurationEvent:
    event = (
        CurationEvent.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk=event_id)
        .first()
    )
    if event is None:
        raise NotFound(f"No curation event {event_id} in this workspace.")
    if event.undone_by_id:
        raise Conflict(f"Event {event_id} was undone already (event {event.undone_by_id}).")
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


# --- The inverses ------------------------------------------------------------------------


def _inverse(
    workspace: Workspace, event: CurationEvent, actor: User | None, vector: dict[str, Any] | None
) -> CurationEvent:
    action = event.action
    if action in MERGE_ACTIONS:
        return do_unmerge(workspace=workspace, event_id=event.pk, actor=actor)
    if action in RELATION_ACTIONS:
        return do_undo_relation_event(workspace=workspace, event_id=event.pk, actor=actor)
    if action == CurationAction.BLOCK:
        undo = do_undo_block(workspace=workspace, event_id=event.pk, actor=actor)
        deleted = CurationEvent.objects.filter(pk=event.payload.get("delete_event") or 0).first()
        if deleted is not None and deleted.undone_by_id == undo.pk:
            _uncurate(deleted)
        return undo
    if action == CurationAction.DELETE:
        return _undo_delete(workspace, event, actor)
    undoers: dict[str, Callable[[], int | None]] = {
        CurationAction.RENAME: lambda: _undo_rename(workspace, event, vector),
        CurationAction.RETYPE: lambda: _undo_retype(workspace, event),
        CurationAction.ALIAS_ADD: lambda: _undo_alias_add(workspace, event),
        CurationAction.ALIAS_REMOVE: lambda: _undo_alias_remove(workspace, event),
        CurationAction.SPLIT: lambda: _undo_split(workspace, event),
        CurationAction.NOT_SAME: lambda: _undo_not_same(event),
    }
    if action not in undoers:
        raise Conflict(f"Event {event.pk} ({event.get_action_display()}) has no undo.")
    entity_id = undoers[action]()
    return _record(workspace, event, actor, entity_id)


def _record(
    workspace: Workspace, event: CurationEvent, actor: User | None, entity_id: int | None
) -> CurationEvent:
    """The undo's own event, linked from the original."""
    undo = CurationEvent.objects.create(
        workspace=workspace,
        action=CurationAction.RESTORE,
        actor=actor,
        entity_id=entity_id,
        payload={"undid": event.pk},
        summary=f"Undid: {event.summary}"[:500],
    )
    event.undone_by = undo
    event.save(update_fields=["undone_by"])
    return undo


def _refuse_old(event: CurationEvent, *keys: str) -> None:
    missing = [key for key in keys if key not in event.payload]
    if missing:
        raise Conflict(
            f"Event {event.pk} was recorded before its undo was kept ({', '.join(missing)} "
            "missing); change it back by hand."
        )


def _active_entity(workspace: Workspace, event: CurationEvent, entity_id: int | None) -> Entity:
    if entity_id is None:
        raise Conflict(f"The entity of event {event.pk} no longer exists.")
    try:
        entity = _locked_entities(workspace, [entity_id])[entity_id]
    except NotFound:
        raise Conflict(f"The entity of event {event.pk} no longer exists.") from None
    if entity.state != EntityState.ACTIVE:
        raise Conflict(f"{entity.name!r} is {entity.state} now; undo what happened to it first.")
    return entity


def _check_name_free(workspace: Workspace, entity: Entity, before: dict[str, Any]) -> None:
    clash = (
        Entity.objects.for_workspace(workspace)
        .filter(
            state=EntityState.ACTIVE,
            type_id=before["type_id"],
            canonical_name=before["canonical_name"],
        )
        .exclude(pk=entity.pk)
        .first()
    )
    if clash is not None:
        raise Conflict(f"{clash.name!r} ({clash.pk}) has that name now: merge them instead.")


def _retire_rules(event: CurationEvent) -> None:
    """The rules the event made retire; the pins it lifted hold again."""
    CurationRule.objects.filter(event=event).update(active=False)
    CurationRule.objects.filter(pk__in=event.payload.get("pins_lifted", [])).update(active=True)


def _undo_delete(workspace: Workspace, event: CurationEvent, actor: User | None) -> CurationEvent:
    entity = Entity.objects.for_workspace(workspace).filter(pk=event.entity_id or 0).first()
    if entity is None or entity.state != EntityState.DELETED:
        raise Conflict(f"The entity of event {event.pk} is not deleted any more.")
    undo = do_restore_entity(workspace=workspace, entity_id=entity.pk, actor=actor)
    _uncurate(event)
    return undo


def _uncurate(deleted: CurationEvent) -> None:
    """A deletion marked its entity curated; the undo puts back what it was (when the
    deletion recorded it)."""
    if "curated" in deleted.payload and deleted.entity_id:
        Entity.objects.filter(pk=deleted.entity_id).update(curated=deleted.payload["curated"])


def _undo_rename(workspace: Workspace, event: CurationEvent, vector: dict[str, Any] | None) -> int:
    _refuse_old(event, "alias_created", "pins_lifted")
    entity = _active_entity(workspace, event, event.entity_id)
    before = event.payload["before"]
    _check_name_free(workspace, entity, before)
    if vector is None:  # undone as part of a cascade: the name's vector is made here
        vector = vector_fields_for(before["name"])
    if event.payload["alias_created"]:
        Alias.objects.filter(pk=event.payload["alias_created"], entity=entity).delete()
    _retire_rules(event)
    for field in ("name", "canonical_name", "blocking_keys", "curated"):
        setattr(entity, field, before[field])
    for field, value in vector.items():
        setattr(entity, field, value)
    entity.save(
        update_fields=["name", "canonical_name", "blocking_keys", "curated", "updated_at",
                       *VECTOR_FIELDS]
    )  # fmt: skip
    _sync_alias_list([entity.pk])
    schedule_graph_sync(workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=[])
    return entity.pk


def _undo_retype(workspace: Workspace, event: CurationEvent) -> int:
    entity = _active_entity(workspace, event, event.entity_id)
    before = event.payload["before"]
    _check_name_free(workspace, entity, before)
    _retire_rules(event)
    fields = ("type_id", "canonical_name", "blocking_keys", "curated", "type_curated")
    for field in fields:
        setattr(entity, field, before[field])
    entity.save(
        update_fields=["type", "canonical_name", "blocking_keys", "curated", "type_curated",
                       "updated_at"]
    )  # fmt: skip
    schedule_graph_sync(workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=[])
    return entity.pk


def _undo_alias_add(workspace: Workspace, event: CurationEvent) -> int:
    _refuse_old(event, "alias_created", "pins_lifted")
    entity = _active_entity(workspace, event, event.entity_id)
    if event.payload["alias_created"]:
        Alias.objects.filter(pk=event.payload["alias"], entity=entity).delete()
    _retire_rules(event)
    _sync_alias_list([entity.pk])
    return entity.pk


def _undo_alias_remove(workspace: Workspace, event: CurationEvent) -> int:
    _refuse_old(event, "alias_row", "pins_lifted")
    entity = _active_entity(workspace, event, event.entity_id)
    row = dict(event.payload["alias_row"])
    if Alias.objects.filter(entity=entity, canonical=row["canonical"]).exists():
        raise Conflict(f"{entity.name!r} has the alias {row['name']!r} again already.")
    created_at = datetime.fromisoformat(row.pop("created_at"))
    Alias.objects.create(**row)
    Alias.objects.filter(pk=row["id"]).update(created_at=created_at)
    _retire_rules(event)
    _sync_alias_list([entity.pk])
    return entity.pk


def _undo_split(workspace: Workspace, event: CurationEvent) -> int:
    """The split-off entity goes: its mentions (the split ones, and any extraction sent it
    since) return, and the rules the split made (its pin, "not the same") go with it."""
    _refuse_old(event, "pins_lifted")
    entity = _active_entity(workspace, event, event.entity_id)
    new_id = event.payload["new_entity"]
    new = Entity.objects.for_workspace(workspace).select_for_update().filter(pk=new_id).first()
    if new is None:
        raise Conflict(f"The entity split off by event {event.pk} no longer exists.")
    if Relation.objects.filter(Q(source_id=new_id) | Q(target_id=new_id)).exists():
        raise Conflict(
            f"{new.name!r} has relations of its own now; merge it into {entity.name!r} instead."
        )
    Mention.objects.filter(entity_id=new_id).update(entity=entity)
    _retire_rules(event)
    new.delete()
    do_refresh_derived(
        workspace_id=workspace.pk, entity_ids=[entity.pk, new_id], relation_ids=[], prune=False
    )
    return entity.pk


def _undo_not_same(event: CurationEvent) -> int | None:
    """The pair may be matched again; the suggestion the decision settled is open again."""
    CurationRule.objects.filter(event=event).update(active=False)
    MergeSuggestion.objects.filter(pk__in=event.payload.get("suggestions_rejected", [])).update(
        status=SuggestionStatus.OPEN, decided_by=None, decided_at=None
    )
    return event.entity_id
