"""Merging two types of the schema registry, and undoing the merge exactly: curation of
types, made of the curation of each row.

Each entity (or relation) of the merged type is retyped by the ordinary curation action,
so each change is its own event in the row's history, with its pins or edge rules, and
the graph projection follows. A `TypeChange` (action merge) groups those events: thousands
of rows stay one merge that is undone at once, in one transaction, and a merge of a large
type costs a few queries per row rather than one huge payload to replay. Rows that cannot move
(an entity of the same name, or the same edge, exists in the target type already) are left
in the retired type and listed in the merge for review, never lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from knowledge.actions.curation.entities import do_retype_entity
from knowledge.actions.curation.events import (
    ENTITY_FIELDS,
    lock_standing_events,
    record_event,
    snapshot,
)
from knowledge.actions.curation.events import mark_undone as mark_event_undone
from knowledge.actions.curation.relations import do_retype_relation, do_undo_relation_event
from knowledge.actions.schema import (
    TypeKind,
    do_ensure_default_schema,
    do_undo_type_change,
    fallback_type,
    locked_change,
    mark_undone,
    type_model,
)
from knowledge.canonical import type_name
from knowledge.graph.sync import schedule_graph_sync
from knowledge.models import (
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityState,
    Relation,
    TypeStatus,
)
from knowledge.models.schema import SchemaType, TypeChange, TypeChangeAction
from workspaces.errors import Conflict, DomainError, InvalidInput, NotFound
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Entity fields a retype changes, and so the fields its undo puts back.
RETYPED_FIELDS = ("type_id", "canonical_name", "curated", "type_curated", "blocking_keys")


def _pair(
    workspace: Workspace, kind: TypeKind, source_name: str, into_name: str
) -> tuple[SchemaType, SchemaType]:
    model = type_model(kind)
    names = {type_name(source_name), type_name(into_name)}
    found = {
        t.name: t
        for t in model.objects.for_workspace(workspace)
        .select_for_update()
        .filter(name__in=names)
        .order_by("pk")
    }
    for name in (source_name, into_name):
        if type_name(name) not in found:
            raise NotFound(f"No {kind} type named {name!r} in this workspace.")
    return found[type_name(source_name)], found[type_name(into_name)]


def do_merge_types(
    *,
    workspace: Workspace,
    kind: TypeKind,
    source_name: str,
    into_name: str,
    actor: User | None = None,
) -> TypeChange:
    """Retype every active entity (or relation) of `source_name` to `into_name`, each by
    the curation retype action, and retire `source_name`. The fallback type cannot be
    merged away (it cannot be retired); the target must not be retired."""
    do_ensure_default_schema(workspace=workspace)
    with transaction.atomic():
        source, into = _pair(workspace, kind, source_name, into_name)
        if source.pk == into.pk:
            raise InvalidInput("Choose two different types to merge.")
        if source.name == fallback_type(kind):
            raise Conflict(
                f"{source.name!r} is the fallback {kind} type: it cannot be merged away."
            )
        if into.status == TypeStatus.RETIRED:
            raise Conflict(f"{into.name!r} is retired: accept it before merging into it.")
        merge = TypeChange(
            workspace=workspace, kind=kind, action=TypeChangeAction.MERGE,
            type_name=source.name, into=into.name, before={"status": source.status},
            actor=actor,
        )  # fmt: skip
        if kind == "entity":
            _retype_entities(workspace, merge, source, into, actor)
        else:
            _retype_relations(workspace, merge, source, into, actor)
        source.status = TypeStatus.RETIRED
        source.save(update_fields=["status", "updated_at"])
        left = f", {len(merge.conflicts)} left (already in {into.name})" if merge.conflicts else ""
        merge.summary = (
            f"Merged the {kind} type {source.name} into {into.name}: "
            f"{len(merge.events)} retyped{left}"
        )[:500]
        merge.save()
    return merge


def _retype_entities(
    workspace: Workspace,
    merge: TypeChange,
    source: SchemaType,
    into: SchemaType,
    actor: User | None,
) -> None:
    rows = (
        Entity.objects.for_workspace(workspace)
        .filter(type_id=source.pk, state=EntityState.ACTIVE)
        .order_by("pk")
        .values_list("pk", "name")
    )
    for pk, name in rows.iterator(chunk_size=500):
        try:
            event = do_retype_entity(
                workspace=workspace, entity_id=pk, type_name=into.name, actor=actor
            )
        except DomainError as exc:  # the name exists in `into`: left, listed
            merge.conflicts.append({"id": pk, "name": name, "reason": exc.message})
        else:
            merge.events.append(event.pk)


def _retype_relations(
    workspace: Workspace,
    merge: TypeChange,
    source: SchemaType,
    into: SchemaType,
    actor: User | None,
) -> None:
    rows = (
        Relation.objects.for_workspace(workspace)
        .filter(type_id=source.pk, state=EntityState.ACTIVE)
        .order_by("pk")
        .values_list("pk", "source__name", "target__name")
    )
    for pk, source_label, target_label in rows.iterator(chunk_size=500):
        try:
            event = do_retype_relation(
                workspace=workspace, relation_id=pk, type_name=into.name, actor=actor
            )
        except DomainError as exc:  # the same edge exists in `into`: left, listed
            name = f"{source_label} → {target_label}"
            merge.conflicts.append({"id": pk, "name": name, "reason": exc.message})
        else:
            merge.events.append(event.pk)


def do_undo_schema_change(
    *, workspace: Workspace, change_id: int, actor: User | None = None
) -> TypeChange:
    """Undo any logged change of a type: a merge here, the others in actions.schema."""
    found = TypeChange.objects.for_workspace(workspace).filter(pk=change_id).first()
    if found is not None and found.action == TypeChangeAction.MERGE:
        return do_unmerge_types(workspace=workspace, merge_id=change_id, actor=actor)
    return do_undo_type_change(workspace=workspace, change_id=change_id, actor=actor)


def do_unmerge_types(
    *, workspace: Workspace, merge_id: int, actor: User | None = None
) -> TypeChange:
    """Put every row the merge moved back in its type exactly as it was (type, key,
    curated flags, pins lifted), and the merged type back in its status. Retypes undone one
    by one since are skipped; a row changed since the merge refuses the whole undo."""
    with transaction.atomic():
        merge = locked_change(workspace, merge_id)
        if merge.action != TypeChangeAction.MERGE:
            raise InvalidInput(f"Schema change {merge_id} is not a merge.")
        kind: TypeKind = "relation" if merge.kind == "relation" else "entity"
        source, into = _pair(workspace, kind, merge.type_name, merge.into)
        for event in lock_standing_events(workspace, merge.events):
            if kind == "entity":
                _undo_entity_retype(workspace, event, into, actor)
            else:
                do_undo_relation_event(workspace=workspace, event_id=event.pk, actor=actor)
        source.status = merge.before["status"]
        source.save(update_fields=["status", "updated_at"])
        mark_undone(merge, actor)
    return merge


def _undo_entity_retype(
    workspace: Workspace, event: CurationEvent, into: SchemaType, actor: User | None
) -> None:
    entity = (
        Entity.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk=event.entity_id or 0)
        .first()
    )
    later = (
        CurationEvent.objects.for_workspace(workspace)
        .filter(entity_id=event.entity_id or 0, pk__gt=event.pk, undone_by__isnull=True)
        .exists()
    )
    if entity is None or later or entity.type_id != into.pk or entity.state != EntityState.ACTIVE:
        label = entity.name if entity is not None else f"#{event.entity_id}"
        raise Conflict(f"{label!r} changed since the merge (event {event.pk}): undo that first.")
    # The undo is a retype too: its "before" is the merged state, so undoing it (from the
    # entity's history) retypes the entity again, like any retype.
    merged = snapshot(entity, ENTITY_FIELDS)
    before = event.payload["before"]
    for field in RETYPED_FIELDS:
        setattr(entity, field, before[field])
    entity.save(update_fields=[*(f.removesuffix("_id") for f in RETYPED_FIELDS), "updated_at"])
    CurationRule.objects.filter(event=event).update(active=False)
    undo = record_event(
        workspace, CurationAction.RETYPE, actor=actor, entity=entity,
        payload={"undid": event.pk, "before": merged}, summary=f"Undid: {event.summary}",
    )  # fmt: skip
    mark_event_undone(event, by=undo)
    schedule_graph_sync(workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=[])
