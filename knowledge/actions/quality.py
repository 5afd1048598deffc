"""The quality page's one-click decisions about a suspicious name, made of curation's own
actions, so each is an ordinary curation event with an exact undo.

- Delete is `do_delete_entity`: the entity and its edges are hidden and its names blocked
  in its type; `do_restore_entity` undoes both.
- Block says the name is noise whatever type extraction gives it: the entity is deleted as
  above and the name blocked in every type (`do_block_name`, whose event then names the
  entity and the delete). `do_undo_block` restores the entity and lifts the blocks; it
  also lifts a block made without an entity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from knowledge.actions.curation import do_block_name, do_delete_entity, do_restore_entity
from knowledge.models import CurationAction, CurationEvent, CurationRule, Entity, EntityState
from workspaces.errors import Conflict, NotFound
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def do_block_entity_name(
    *, workspace: Workspace, entity_id: int, actor: User | None = None
) -> CurationEvent:
    """Delete the entity and block its name in every type; returns the block's event,
    which `do_undo_block` takes."""
    with transaction.atomic():
        entity = Entity.objects.for_workspace(workspace).filter(pk=entity_id).first()
        if entity is None:
            raise NotFound(f"No entity {entity_id} in this workspace.")
        deleted = do_delete_entity(workspace=workspace, entity_id=entity.pk, actor=actor)
        block = do_block_name(workspace=workspace, name=entity.name, actor=actor)
        block.entity = entity
        block.payload = {**block.payload, "entity": entity.pk, "delete_event": deleted.pk}
        block.summary = f"Deleted {entity.name!r} and blocked the name in every type"[:500]
        block.save(update_fields=["entity", "payload", "summary"])
    return block


def do_undo_block(
    *, workspace: Workspace, event_id: int, actor: User | None = None
) -> CurationEvent:
    """Undo a block: its rules are lifted and the entity it deleted (if still deleted) is
    restored, with its own names unblocked. Returns the restoring event."""
    with transaction.atomic():
        event = (
            CurationEvent.objects.for_workspace(workspace)
            .select_for_update()
            .filter(pk=event_id)
            .first()
        )
        if event is None:
            raise NotFound(f"No curation event {event_id} in this workspace.")
        if event.action != CurationAction.BLOCK:
            raise Conflict(f"Event {event_id} is a {event.action}, not a block.")
        if event.undone_by_id:
            raise Conflict(f"Block {event_id} was undone already (event {event.undone_by_id}).")
        entity = (
            Entity.objects.for_workspace(workspace).filter(pk=event.payload.get("entity")).first()
        )
        CurationRule.objects.filter(event=event).update(active=False)
        if entity is not None and entity.state == EntityState.DELETED:
            undo = do_restore_entity(workspace=workspace, entity_id=entity.pk, actor=actor)
            undo.payload = {**undo.payload, "block_event": event.pk}
            undo.summary = f"{undo.summary} and unblocked its name"[:500]
            undo.save(update_fields=["payload", "summary"])
        else:
            blocked = ", ".join(repr(key) for key in event.payload.get("canonical", []))
            undo = CurationEvent.objects.create(
                workspace=workspace, action=CurationAction.RESTORE, actor=actor, entity=entity,
                payload={"block_event": event.pk}, summary=f"Unblocked {blocked}"[:500],
            )  # fmt: skip
        event.undone_by = undo
        event.save(update_fields=["undone_by"])
    return undo
