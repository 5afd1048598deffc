"""Names and pairs that must stay apart: block a name (extraction never makes it an entity
again), mark two entities "not the same" (never merged automatically, never suggested
again), and the undo of each.

`do_undo_block` undoes any block: also the quality page's (knowledge/actions/quality.py:
delete the entity and block its name in every type, the event naming the entity and the
delete), whose entity it restores — so the inverse of a block lives with the block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from knowledge.actions.curation.entities import (
    do_restore_entity,
    locked_entities,
    uncurate_deleted,
)
from knowledge.actions.curation.events import (
    Expected,
    Undoing,
    lock_event,
    mark_undone,
    record_event,
    record_undo,
    register_inverse,
)
from knowledge.actions.curation.rules import remember_not_same
from knowledge.consolidation.keys import entity_key
from knowledge.models import (
    CurationAction,
    CurationEvent,
    CurationRule,
    Entity,
    EntityState,
    EntityType,
    MergeSuggestion,
    RuleKind,
    SuggestionStatus,
)
from workspaces.errors import InvalidInput
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The block events `do_undo_block` takes, and the words of its refusals.
BLOCKS = Expected(frozenset({CurationAction.BLOCK}), kind="block", noun="Block")


def do_block_name(
    *,
    workspace: Workspace,
    name: str,
    type_name: str | None = None,
    actor: User | None = None,
) -> CurationEvent:
    """Extraction never creates (or attaches evidence to) an entity of this name again."""
    entity_type = None
    if type_name:
        entity_type = EntityType.objects.for_workspace(workspace).filter(name=type_name).first()
        if entity_type is None:
            raise InvalidInput(f"No entity type {type_name!r} in this workspace.")
    # Keys differ by type only in corporate suffixes: block each form the name can take.
    keys = sorted(
        {entity_key(name, type_name)}
        if type_name
        else {entity_key(name, "organization"), entity_key(name, "")}
    )
    if not any(keys):
        raise InvalidInput("Say which name to block.")
    with transaction.atomic():
        event = record_event(
            workspace, CurationAction.BLOCK, actor=actor, entity=None,
            payload={"canonical": keys, "type": type_name},
            summary=f"Blocked the name {name!r}" + (f" as {type_name}" if type_name else ""),
        )  # fmt: skip
        for canonical in keys:
            CurationRule.objects.create(
                workspace=workspace, kind=RuleKind.BLOCKED, canonical=canonical,
                entity_type=entity_type, event=event,
            )  # fmt: skip
    return event


def do_mark_not_same(
    *, workspace: Workspace, entity_id: int, other_id: int, actor: User | None = None
) -> CurationEvent:
    """These two are different: never merged automatically, never suggested again."""
    if entity_id == other_id:
        raise InvalidInput("An entity is always the same as itself.")
    with transaction.atomic():
        entities = locked_entities(workspace, [entity_id, other_id])
        event = record_event(
            workspace, CurationAction.NOT_SAME, actor=actor, entity=entities[entity_id],
            payload={"pair": sorted([entity_id, other_id])},
            summary=f"{entities[entity_id].name!r} is not {entities[other_id].name!r}",
        )  # fmt: skip
        event.payload["suggestions_rejected"] = remember_not_same(
            workspace, entity_id, other_id, event
        )
        event.save(update_fields=["payload"])
    return event


# --- Undo ------------------------------------------------------------------------------


def do_undo_block(
    *, workspace: Workspace, event_id: int, actor: User | None = None
) -> CurationEvent:
    """Undo a block: its rules are lifted and the entity it deleted (if still deleted) is
    restored, with its own names unblocked. Returns the restoring event."""
    with transaction.atomic():
        event = lock_event(workspace, event_id, BLOCKS)
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
            undo = record_event(
                workspace, CurationAction.RESTORE, actor=actor, entity=entity,
                payload={"block_event": event.pk}, summary=f"Unblocked {blocked}",
            )  # fmt: skip
        mark_undone(event, by=undo)
    return undo


@register_inverse(CurationAction.BLOCK)
def _undo_block(undoing: Undoing) -> CurationEvent:
    """`do_undo_block`; and the entity the block deleted is as curated as before it."""
    event = undoing.event
    undo = do_undo_block(workspace=undoing.workspace, event_id=event.pk, actor=undoing.actor)
    deleted = CurationEvent.objects.filter(pk=event.payload.get("delete_event") or 0).first()
    if deleted is not None and deleted.undone_by_id == undo.pk:
        uncurate_deleted(deleted)
    return undo


@register_inverse(CurationAction.NOT_SAME)
def _undo_not_same(undoing: Undoing) -> CurationEvent:
    """The pair may be matched again; the suggestion the decision settled is open again."""
    event = undoing.event
    CurationRule.objects.filter(event=event).update(active=False)
    MergeSuggestion.objects.filter(pk__in=event.payload.get("suggestions_rejected", [])).update(
        status=SuggestionStatus.OPEN, decided_by=None, decided_at=None
    )
    return record_undo(undoing, entity_id=event.entity_id)
