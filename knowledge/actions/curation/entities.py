"""Curation of one entity: rename, retype, delete and restore, split, and its aliases —
each one transaction and one event (events.py) whose payload the exact undo reads, and
the undo of each (registered with events.py, dispatched by undo.py).

A rename, an alias and a split pin the name to the entity, so extraction finds it there
again; a retype pins the entity's names in every type; a delete blocks its names
(rules.py). `do_update_entity` is the one edit path of the API, the admin and the explorer.

Also the entity pieces the other decisions share: the row locks (in id order, so two
curators never deadlock), an entity's names, and the alias list shown on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Q

from knowledge.actions.curation.events import (
    ENTITY_FIELDS,
    Undoing,
    mark_undone,
    record_event,
    record_undo,
    register_inverse,
    snapshot,
)
from knowledge.actions.curation.rules import pin_name, remember_not_same, retire_rules
from knowledge.actions.embeddings import VECTOR_FIELDS, vector_fields_for
from knowledge.actions.evidence import do_refresh_derived
from knowledge.consolidation.keys import entity_blocking_keys, entity_key
from knowledge.graph.sync import schedule_graph_sync
from knowledge.models import (
    Alias,
    AliasOrigin,
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityState,
    EntityType,
    Mention,
    Relation,
    RuleKind,
    TypeStatus,
)
from workspaces.errors import Conflict, InvalidInput, NotFound
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User


# --- Shared with the other decisions --------------------------------------------------


def locked_entities(workspace: Workspace, ids: Iterable[int]) -> dict[int, Entity]:
    """The entities, row-locked in id order (so two curators never deadlock)."""
    wanted = sorted(set(ids))
    found = {
        e.pk: e
        for e in Entity.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk__in=wanted)
        .order_by("pk")
    }
    missing = [pk for pk in wanted if pk not in found]
    if missing:
        raise NotFound(f"No entity {missing[0]} in this workspace.")
    return found


def sync_alias_list(entity_ids: Iterable[int]) -> None:
    """Entity.aliases is the display copy of the alias table."""
    for entity in Entity.objects.filter(pk__in=set(entity_ids)):
        names = sorted(
            set(Alias.objects.filter(entity=entity).values_list("name", flat=True)) - {entity.name}
        )
        if names != entity.aliases:
            Entity.objects.filter(pk=entity.pk).update(aliases=names)


def names_of(entity: Entity) -> set[str]:
    """The canonical names an entity answers to: its own and its aliases."""
    return {entity.canonical_name} | set(
        Alias.objects.filter(entity=entity).values_list("canonical", flat=True)
    )


# --- Single-entity changes -------------------------------------------------------------


def _one(workspace: Workspace, entity_id: int) -> Entity:
    return locked_entities(workspace, [entity_id])[entity_id]


def do_rename_entity(
    *, workspace: Workspace, entity_id: int, name: str, actor: User | None = None
) -> CurationEvent:
    """A new display name; the old one stays an alias pinned to the entity, so extraction
    keeps finding it, and the new name holds after re-extraction."""
    clean = " ".join(name.split())[:300]
    if not clean:
        raise InvalidInput("An entity needs a name.")
    # The new name's vector, or none for the backfill to fill in (never the old name's);
    # before the row lock, since the model's first load takes seconds.
    vector = vector_fields_for(clean)
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        before = snapshot(entity, ENTITY_FIELDS)
        canonical = entity_key(clean, entity.type.name)
        clash = (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type_id=entity.type_id, canonical_name=canonical)
            .exclude(pk=entity.pk)
            .first()
        )
        if clash is not None:
            raise Conflict(f"{clash.name!r} ({clash.pk}) has that name already: merge them.")
        old = entity.name
        alias_created = None
        if old != clean and entity.canonical_name != canonical:
            alias, created = Alias.objects.get_or_create(
                workspace=workspace,
                entity=entity,
                canonical=entity.canonical_name,
                defaults={"name": old, "origin": AliasOrigin.MANUAL},
            )
            alias_created = alias.pk if created else None
        entity.name, entity.canonical_name, entity.curated = clean, canonical, True
        entity.blocking_keys = entity_blocking_keys(clean, entity.type.name)
        for field, value in vector.items():
            setattr(entity, field, value)
        entity.save(
            update_fields=["name", "canonical_name", "blocking_keys", "curated", "updated_at",
                           *VECTOR_FIELDS]
        )  # fmt: skip
        event = record_event(
            workspace, CurationAction.RENAME, actor=actor, entity=entity,
            payload={"before": before, "alias_created": alias_created},
            summary=f"Renamed {old!r} to {clean!r}",
        )  # fmt: skip
        lifted = [
            pk for key in sorted({before["canonical_name"], canonical})
            for pk in pin_name(workspace, key, entity, event)
        ]  # fmt: skip
        event.payload["pins_lifted"] = lifted
        event.save(update_fields=["payload"])
        sync_alias_list([entity.pk])
        schedule_graph_sync(workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=[])
    return event


def do_retype_entity(
    *, workspace: Workspace, entity_id: int, type_name: str, actor: User | None = None
) -> CurationEvent:
    """A new type; the entity's names are pinned to it, so extraction that calls it
    something else still lands here."""
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        new_type = EntityType.objects.for_workspace(workspace).filter(name=type_name).first()
        if new_type is None or new_type.status == TypeStatus.RETIRED:
            raise InvalidInput(f"No usable entity type {type_name!r} in this workspace.")
        canonical = entity_key(entity.name, new_type.name)
        clash = (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type=new_type, canonical_name=canonical)
            .exclude(pk=entity.pk)
            .first()
        )
        if clash is not None:
            raise Conflict(f"{clash.name!r} ({clash.pk}) is that type already: merge them.")
        before = snapshot(entity, ENTITY_FIELDS)
        old_type = entity.type.name
        entity.type, entity.curated, entity.canonical_name = new_type, True, canonical
        # A person's type outvotes the extractor's from now on.
        entity.type_curated = True
        entity.blocking_keys = entity_blocking_keys(entity.name, new_type.name)
        entity.save(
            update_fields=["type", "curated", "type_curated", "canonical_name", "blocking_keys",
                           "updated_at"]
        )  # fmt: skip
        event = record_event(
            workspace, CurationAction.RETYPE, actor=actor, entity=entity,
            payload={"before": before},
            summary=f"Retyped {entity.name!r} from {old_type} to {new_type.name}",
        )  # fmt: skip
        # Pinned in every type: whatever type extraction says, the name comes here.
        for canonical in names_of(entity):
            CurationRule.objects.create(
                workspace=workspace, kind=RuleKind.ALIAS_PIN, canonical=canonical,
                entity_type=None, entity=entity, event=event,
            )  # fmt: skip
        schedule_graph_sync(workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=[])
    return event


def do_delete_entity(
    *, workspace: Workspace, entity_id: int, actor: User | None = None
) -> CurationEvent:
    """Hide an entity and its edges, and block its names so extraction does not bring it
    back; `do_restore_entity` undoes both."""
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        if entity.state != EntityState.ACTIVE:
            raise Conflict(f"{entity.name!r} is {entity.state}.")
        relations = Relation.objects.for_workspace(workspace).filter(
            Q(source=entity) | Q(target=entity), state=EntityState.ACTIVE
        )
        relation_ids = list(relations.values_list("pk", flat=True))
        relations.update(state=EntityState.DELETED)
        curated = entity.curated
        entity.state, entity.curated = EntityState.DELETED, True
        entity.save(update_fields=["state", "curated", "updated_at"])
        event = record_event(
            workspace, CurationAction.DELETE, actor=actor, entity=entity,
            payload={"relations": relation_ids, "curated": curated},
            summary=f"Deleted {entity.name!r}",
        )  # fmt: skip
        for canonical in names_of(entity):
            CurationRule.objects.create(
                workspace=workspace, kind=RuleKind.BLOCKED, canonical=canonical,
                entity_type_id=entity.type_id, entity=entity, event=event,
            )  # fmt: skip
        schedule_graph_sync(
            workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=relation_ids
        )
    return event


def do_restore_entity(
    *, workspace: Workspace, entity_id: int, actor: User | None = None
) -> CurationEvent:
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        if entity.state != EntityState.DELETED:
            raise Conflict(f"{entity.name!r} is not deleted.")
        clash = (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type_id=entity.type_id,
                    canonical_name=entity.canonical_name)
            .first()
        )  # fmt: skip
        if clash is not None:
            raise Conflict(f"{clash.name!r} ({clash.pk}) took its place: merge them instead.")
        deleted = (
            CurationEvent.objects.for_workspace(workspace)
            .filter(entity=entity, action=CurationAction.DELETE, undone_by__isnull=True)
            .order_by("-created_at")
            .first()
        )
        entity.state = EntityState.ACTIVE
        entity.save(update_fields=["state", "updated_at"])
        event = record_event(
            workspace, CurationAction.RESTORE, actor=actor, entity=entity,
            payload={"delete_event": deleted.pk if deleted else None},
            summary=f"Restored {entity.name!r}",
        )  # fmt: skip
        if deleted is not None:
            Relation.objects.filter(
                pk__in=deleted.payload.get("relations", []), state=EntityState.DELETED
            ).update(state=EntityState.ACTIVE)
            CurationRule.objects.filter(event=deleted).update(active=False)
            mark_undone(deleted, by=event)
        schedule_graph_sync(
            workspace_id=workspace.pk,
            entity_ids=[entity.pk],
            relation_ids=deleted.payload.get("relations", []) if deleted else [],
        )
    return event


def do_add_alias(
    *, workspace: Workspace, entity_id: int, name: str, actor: User | None = None
) -> CurationEvent:
    clean = " ".join(name.split())[:300]
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        canonical = entity_key(clean, entity.type.name)
        if not canonical:
            raise InvalidInput("An alias needs a name.")
        taken = (
            Alias.objects.for_workspace(workspace)
            .filter(canonical=canonical, entity__type_id=entity.type_id,
                    entity__state=EntityState.ACTIVE)
            .exclude(entity=entity)
            .select_related("entity")
            .first()
        )  # fmt: skip
        if taken is not None:
            raise Conflict(f"{clean!r} is an alias of {taken.entity.name!r} already.")
        alias, created = Alias.objects.get_or_create(
            workspace=workspace, entity=entity, canonical=canonical,
            defaults={"name": clean, "origin": AliasOrigin.MANUAL},
        )  # fmt: skip
        event = record_event(
            workspace, CurationAction.ALIAS_ADD, actor=actor, entity=entity,
            payload={"alias": alias.pk, "canonical": canonical, "alias_created": created},
            summary=f"Added alias {clean!r} to {entity.name!r}",
        )  # fmt: skip
        event.payload["pins_lifted"] = pin_name(workspace, canonical, entity, event)
        event.save(update_fields=["payload"])
        sync_alias_list([entity.pk])
    return event


def do_remove_alias(
    *, workspace: Workspace, entity_id: int, name: str, actor: User | None = None
) -> CurationEvent:
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        canonical = entity_key(name, entity.type.name)
        rows = list(Alias.objects.filter(entity=entity, canonical=canonical).values())
        if not rows:
            raise NotFound(f"{entity.name!r} has no alias {name!r}.")
        Alias.objects.filter(pk=rows[0]["id"]).delete()
        pins = CurationRule.objects.filter(
            kind=RuleKind.ALIAS_PIN, canonical=canonical, entity=entity, active=True
        )
        lifted = list(pins.values_list("pk", flat=True))
        pins.update(active=False)
        row = {**rows[0], "created_at": rows[0]["created_at"].isoformat()}
        event = record_event(
            workspace, CurationAction.ALIAS_REMOVE, actor=actor, entity=entity,
            payload={"canonical": canonical, "alias_row": row, "pins_lifted": lifted},
            summary=f"Removed alias {name!r} of {entity.name!r}",
        )  # fmt: skip
        sync_alias_list([entity.pk])
    return event


def do_split_entity(
    *,
    workspace: Workspace,
    entity_id: int,
    mention_ids: Iterable[int],
    name: str,
    type_name: str | None = None,
    actor: User | None = None,
) -> CurationEvent:
    """Move chosen mentions to a new entity (and pin its name to it, and mark the two as
    not the same, so re-extraction keeps them apart)."""
    clean = " ".join(name.split())[:300]
    if not clean:
        raise InvalidInput("The new entity needs a name.")
    vector = vector_fields_for(clean)
    ids = sorted(set(mention_ids))
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        mentions = Mention.objects.filter(entity=entity, pk__in=ids)
        if mentions.count() != len(ids) or not ids:
            raise InvalidInput("Choose one or more mentions of this entity to split off.")
        entity_type = entity.type
        if type_name:
            found = EntityType.objects.for_workspace(workspace).filter(name=type_name).first()
            if found is None:
                raise InvalidInput(f"No entity type {type_name!r} in this workspace.")
            entity_type = found
        canonical = entity_key(clean, entity_type.name)
        if (
            Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE, type=entity_type, canonical_name=canonical)
            .exists()
        ):
            raise Conflict(f"An entity named {clean!r} of that type exists: merge into it.")
        new = Entity.objects.create(
            workspace=workspace, name=clean, canonical_name=canonical, type=entity_type,
            curated=True, type_curated=True,
            blocking_keys=entity_blocking_keys(clean, entity_type.name), **vector,
        )  # fmt: skip
        mentions.update(entity=new)
        event = record_event(
            workspace, CurationAction.SPLIT, actor=actor, entity=entity,
            payload={"new_entity": new.pk, "mentions": ids},
            summary=f"Split {len(ids)} mention(s) of {entity.name!r} into {clean!r}",
        )  # fmt: skip
        event.payload["pins_lifted"] = pin_name(workspace, canonical, new, event)
        remember_not_same(workspace, entity.pk, new.pk, event)
        event.save(update_fields=["payload"])
        do_refresh_derived(
            workspace_id=workspace.pk, entity_ids=[entity.pk, new.pk], relation_ids=[], prune=False
        )
    return event


def do_set_aliases(
    *, workspace: Workspace, entity_id: int, names: Iterable[str], actor: User | None = None
) -> list[CurationEvent]:
    """Make the alias list exactly `names` (one event per alias added or removed)."""
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        kind = entity.type.name
        wanted = {entity_key(n, kind): " ".join(n.split()) for n in names if entity_key(n, kind)}
        current = dict(Alias.objects.filter(entity=entity).values_list("canonical", "name"))
        events = [
            do_remove_alias(workspace=workspace, entity_id=entity.pk, name=current[c], actor=actor)
            for c in sorted(set(current) - set(wanted))
        ]
        events += [
            do_add_alias(workspace=workspace, entity_id=entity.pk, name=wanted[c], actor=actor)
            for c in sorted(set(wanted) - set(current))
            if c != entity.canonical_name
        ]
    return events


def do_update_entity(
    *,
    workspace: Workspace,
    entity_id: int,
    name: str | None = None,
    type_name: str | None = None,
    aliases: Iterable[str] | None = None,
    actor: User | None = None,
) -> list[CurationEvent]:
    """Change what is given of an entity's name, type and alias list, in one transaction:
    each change is its own curation event (so each can be undone), returned in order. The
    API, the admin and the explorer all edit entities through here."""
    with transaction.atomic():
        entity = _one(workspace, entity_id)
        events = []
        if name is not None and name != entity.name:
            events.append(
                do_rename_entity(workspace=workspace, entity_id=entity.pk, name=name, actor=actor)
            )
        if type_name is not None and type_name != entity.type.name:
            events.append(
                do_retype_entity(
                    workspace=workspace, entity_id=entity.pk, type_name=type_name, actor=actor
                )
            )
        if aliases is not None:
            events += do_set_aliases(
                workspace=workspace, entity_id=entity.pk, names=aliases, actor=actor
            )
    return events


# --- Undo (registered with events.py; undo.py dispatches) -----------------------------


@register_inverse(CurationAction.DELETE)
def _undo_delete(undoing: Undoing) -> CurationEvent:
    """The entity comes back through the restore action, which lifts the blocks."""
    workspace, event = undoing.workspace, undoing.event
    entity = Entity.objects.for_workspace(workspace).filter(pk=event.entity_id or 0).first()
    if entity is None or entity.state != EntityState.DELETED:
        raise Conflict(f"The entity of event {event.pk} is not deleted any more.")
    undo = do_restore_entity(workspace=workspace, entity_id=entity.pk, actor=undoing.actor)
    uncurate_deleted(event)
    return undo


def uncurate_deleted(deleted: CurationEvent) -> None:
    """A deletion marked its entity curated; the undo puts back what it was (when the
    deletion recorded it)."""
    if "curated" in deleted.payload and deleted.entity_id:
        Entity.objects.filter(pk=deleted.entity_id).update(curated=deleted.payload["curated"])


@register_inverse(CurationAction.RENAME)
def _undo_rename(undoing: Undoing) -> CurationEvent:
    workspace, event, vector = undoing.workspace, undoing.event, undoing.vector
    _refuse_old(event, "alias_created", "pins_lifted")
    entity = _active_entity(workspace, event, event.entity_id)
    before = event.payload["before"]
    _check_name_free(workspace, entity, before)
    if vector is None:  # undone as part of a cascade: the name's vector is made here
        vector = vector_fields_for(before["name"])
    if event.payload["alias_created"]:
        Alias.objects.filter(pk=event.payload["alias_created"], entity=entity).delete()
    retire_rules(event)
    for field in ("name", "canonical_name", "blocking_keys", "curated"):
        setattr(entity, field, before[field])
    for field, value in vector.items():
        setattr(entity, field, value)
    entity.save(
        update_fields=["name", "canonical_name", "blocking_keys", "curated", "updated_at",
                       *VECTOR_FIELDS]
    )  # fmt: skip
    sync_alias_list([entity.pk])
    schedule_graph_sync(workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=[])
    return record_undo(undoing, entity_id=entity.pk)


@register_inverse(CurationAction.RETYPE)
def _undo_retype(undoing: Undoing) -> CurationEvent:
    workspace, event = undoing.workspace, undoing.event
    entity = _active_entity(workspace, event, event.entity_id)
    before = event.payload["before"]
    _check_name_free(workspace, entity, before)
    retire_rules(event)
    fields = ("type_id", "canonical_name", "blocking_keys", "curated", "type_curated")
    for field in fields:
        setattr(entity, field, before[field])
    entity.save(
        update_fields=["type", "canonical_name", "blocking_keys", "curated", "type_curated",
                       "updated_at"]
    )  # fmt: skip
    schedule_graph_sync(workspace_id=workspace.pk, entity_ids=[entity.pk], relation_ids=[])
    return record_undo(undoing, entity_id=entity.pk)


@register_inverse(CurationAction.ALIAS_ADD)
def _undo_alias_add(undoing: Undoing) -> CurationEvent:
    event = undoing.event
    _refuse_old(event, "alias_created", "pins_lifted")
    entity = _active_entity(undoing.workspace, event, event.entity_id)
    if event.payload["alias_created"]:
        Alias.objects.filter(pk=event.payload["alias"], entity=entity).delete()
    retire_rules(event)
    sync_alias_list([entity.pk])
    return record_undo(undoing, entity_id=entity.pk)


@register_inverse(CurationAction.ALIAS_REMOVE)
def _undo_alias_remove(undoing: Undoing) -> CurationEvent:
    event = undoing.event
    _refuse_old(event, "alias_row", "pins_lifted")
    entity = _active_entity(undoing.workspace, event, event.entity_id)
    row = dict(event.payload["alias_row"])
    if Alias.objects.filter(entity=entity, canonical=row["canonical"]).exists():
        raise Conflict(f"{entity.name!r} has the alias {row['name']!r} again already.")
    created_at = datetime.fromisoformat(row.pop("created_at"))
    Alias.objects.create(**row)
    Alias.objects.filter(pk=row["id"]).update(created_at=created_at)
    retire_rules(event)
    sync_alias_list([entity.pk])
    return record_undo(undoing, entity_id=entity.pk)


@register_inverse(CurationAction.SPLIT)
def _undo_split(undoing: Undoing) -> CurationEvent:
    """The split-off entity goes: its mentions (the split ones, and any extraction sent it
    since) return, and the rules the split made (its pin, "not the same") go with it."""
    workspace, event = undoing.workspace, undoing.event
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
    retire_rules(event)
    new.delete()
    do_refresh_derived(
        workspace_id=workspace.pk, entity_ids=[entity.pk, new_id], relation_ids=[], prune=False
    )
    return record_undo(undoing, entity_id=entity.pk)


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
        entity = locked_entities(workspace, [entity_id])[entity_id]
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
