"""The quality page's one-click decisions about a suspicious name, made of curation's own
actions, so each is an ordinary curation event with an exact undo.

- Delete is `do_delete_entity`: the entity and its edges are hidden and its names blocked
  in its type; `do_restore_entity` undoes both.
- Block says the name is noise whatever type extraction gives it: the entity is deleted as
  above and the name blocked in every type (`do_block_name`, whose event then names the
  entity and the delete). `do_undo_block` (knowledge/actions/curation/block.py, with the
  block it undoes) restores the entity and lifts the blocks; it also lifts a block made
  without an entity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from knowledge.actions.curation.block import do_block_name
from knowledge.actions.curation.entities import do_delete_entity
from knowledge.models import CurationEvent, Entity
from workspaces.errors import NotFound
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
