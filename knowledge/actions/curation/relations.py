"""Relation curation: delete, retype, reverse, add by hand and describe a relation, each
one transaction and one `CurationEvent` (its `relation` the edge changed) whose payload
holds the rows as they were, so `do_undo_relation_event` puts them back exactly.

Decisions survive re-extraction through `RelationRule` (extraction reads them in
knowledge/actions/extraction/materialize.py, `curated_edges`): the edge a person deleted
is dropped when the model says it again, and evidence for the edge as it was extracted
lands on the relation as the person left it (retyped, reversed). A changed or hand-made
relation is `curated`, so losing its extracted evidence (a deleted source) does not delete
it; a hand-made one carries a `RelationNote` (who, why, optionally where).

A curated edge that takes the place of an edge with rules (a retype onto a type deleted
before, an edge added by hand that a person had deleted) lifts those rules: the latest
decision holds, and its undo brings them back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Q

from ingest.models import Chunk
from knowledge.actions.curation.events import (
    Expected,
    Undoing,
    lock_event,
    mark_undone,
    record_event,
    register_inverse,
    snapshot,
)
from knowledge.actions.evidence import do_refresh_derived
from knowledge.models import (
    CurationAction,
    CurationEvent,
    Entity,
    EntityState,
    Relation,
    RelationEvidence,
    RelationType,
    TypeStatus,
)
from knowledge.models.curation import RelationNote, RelationOutcome, RelationRule
from workspaces.errors import Conflict, InvalidInput, NotFound
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The fields of a relation a curation action may change, and its undo restores.
RELATION_FIELDS = ("source_id", "target_id", "type_id", "state", "description",
                   "description_curated", "curated")  # fmt: skip
RELATION_ACTIONS = frozenset(
    {
        CurationAction.RELATION_DELETE,
        CurationAction.RELATION_RETYPE,
        CurationAction.RELATION_REVERSE,
        CurationAction.RELATION_ADD,
        CurationAction.RELATION_EDIT,
    }
)
# The relation events `do_undo_relation_event` takes, and the words of its refusals.
RELATION_CHANGES = Expected(RELATION_ACTIONS, kind="relation change", error=InvalidInput)
MAX_DESCRIPTION = 2000
MAX_REASON = 2000


def _snapshot(relation: Relation) -> dict[str, Any]:
    return snapshot(relation, RELATION_FIELDS)


def _locked_relation(workspace: Workspace, relation_id: int) -> Relation:
    relation = (
        Relation.objects.for_workspace(workspace).select_for_update().filter(pk=relation_id).first()
    )
    if relation is None:
        raise NotFound(f"Relation {relation_id} not found.")
    return relation


def _active(workspace: Workspace, relation_id: int) -> Relation:
    relation = _locked_relation(workspace, relation_id)
    if relation.state != EntityState.ACTIVE:
        raise Conflict(f"Relation {relation.pk} is {relation.state}; only active ones change.")
    return relation


def _label(relation: Relation) -> str:
    return f"{relation.source.name!r} {relation.type.name} {relation.target.name!r}"


def _relation_type(workspace: Workspace, name: str) -> RelationType:
    """A registered type a person may choose: active or proposed, not retired."""
    found = (
        RelationType.objects.for_workspace(workspace)
        .filter(name=name.strip(), status__in=[TypeStatus.ACTIVE, TypeStatus.PROPOSED])
        .first()
    )
    if found is None:
        raise InvalidInput(f"No active or proposed relation type {name.strip()[:64]!r}.")
    return found


def _endpoints(workspace: Workspace, source_id: int, target_id: int) -> tuple[Entity, Entity]:
    """Both ends, active and of this workspace, row-locked in id order."""
    if source_id == target_id:
        raise InvalidInput("A relation needs two different entities.")
    found = {
        e.pk: e
        for e in Entity.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk__in=[source_id, target_id])
        .order_by("pk")
    }
    for pk in (source_id, target_id):
        if pk not in found:
            raise NotFound(f"No entity {pk} in this workspace.")
        if found[pk].state != EntityState.ACTIVE:
            raise Conflict(f"{found[pk].name!r} is {found[pk].state}; relations join active ones.")
    return found[source_id], found[target_id]


def _free_edge(workspace: Workspace, key: tuple[int, int, int], *, but: int | None) -> None:
    """Refuse a change that would make a second active edge with this (source, target,
    type): the person can delete one of the two instead."""
    source_id, target_id, type_id = key
    taken = (
        Relation.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE, source_id=source_id, target_id=target_id,
                type_id=type_id)
        .exclude(pk=but or 0)
        .select_related("source", "target", "type")
        .first()
    )  # fmt: skip
    if taken is not None:
        raise Conflict(
            f"Relation {taken.pk} ({_label(taken)}) exists already: delete one of the two instead."
        )


def _lift_rules(workspace: Workspace, key: tuple[int, int, int], payload: dict[str, Any]) -> None:
    """A curated edge now stands at `key`: earlier rules about that extracted edge retire
    (their ids kept for the undo)."""
    source_id, target_id, type_id = key
    rules = RelationRule.objects.for_workspace(workspace).filter(
        active=True, source_id=source_id, target_id=target_id, type_id=type_id
    )
    payload["rules_lifted"] = sorted(rules.values_list("pk", flat=True))
    rules.update(active=False)


def _rule(
    workspace: Workspace, key: tuple[int, int, int], outcome: str, relation: Relation,
    event: CurationEvent,
) -> None:  # fmt: skip
    source_id, target_id, type_id = key
    RelationRule.objects.create(
        workspace=workspace, source_id=source_id, target_id=target_id, type_id=type_id,
        outcome=outcome, relation=relation, event=event,
    )  # fmt: skip


def _event(
    workspace: Workspace,
    action: str,
    *,
    actor: User | None,
    relation: Relation,
    payload: dict[str, Any],
    summary: str,
) -> CurationEvent:
    """A relation event names the edge and its source entity (the entity's history
    shows it)."""
    return record_event(
        workspace,
        action,
        actor=actor,
        relation=relation,
        entity=relation.source,
        payload=payload,
        summary=summary,
    )


def _refresh(workspace: Workspace, relation: Relation, *entity_ids: int) -> None:
    """Counts, degree and the graph projection follow (never a deletion: prune=False)."""
    do_refresh_derived(
        workspace_id=workspace.pk,
        entity_ids={relation.source_id, relation.target_id, *entity_ids},
        relation_ids=[relation.pk],
        prune=False,
    )


def _key(relation: Relation) -> tuple[int, int, int]:
    return (relation.source_id, relation.target_id, relation.type_id)


def do_delete_relation(
    *, workspace: Workspace, relation_id: int, actor: User | None = None
) -> CurationEvent:
    """Hide a relation (its evidence kept, for the undo) and drop the edge whenever
    extraction finds it again."""
    with transaction.atomic():
        relation = _active(workspace, relation_id)
        before = _snapshot(relation)
        relation.state, relation.curated = EntityState.DELETED, True
        relation.save(update_fields=["state", "curated", "updated_at"])
        event = _event(
            workspace, CurationAction.RELATION_DELETE, actor=actor, relation=relation,
            payload={"before": before, "after": _snapshot(relation)},
            summary=f"Deleted the relation {_label(relation)}",
        )  # fmt: skip
        _rule(workspace, _key(relation), RelationOutcome.SUPPRESS, relation, event)
        _refresh(workspace, relation)
    return event


def do_retype_relation(
    *, workspace: Workspace, relation_id: int, type_name: str, actor: User | None = None
) -> CurationEvent:
    """Give a relation another registered type; extraction of the old (source, target,
    type) adds its evidence here."""
    with transaction.atomic():
        relation = _active(workspace, relation_id)
        new_type = _relation_type(workspace, type_name)
        if new_type.pk == relation.type_id:
            raise InvalidInput(f"The relation is {new_type.name} already.")
        before, old_key, old_type = _snapshot(relation), _key(relation), relation.type.name
        new_key = (relation.source_id, relation.target_id, new_type.pk)
        _free_edge(workspace, new_key, but=relation.pk)
        payload: dict[str, Any] = {"before": before}
        _lift_rules(workspace, new_key, payload)
        relation.type, relation.curated = new_type, True
        relation.save(update_fields=["type", "curated", "updated_at"])
        payload["after"] = _snapshot(relation)
        event = _event(
            workspace, CurationAction.RELATION_RETYPE, actor=actor, relation=relation,
            payload=payload,
            summary=f"Retyped the relation {relation.source.name!r} → {relation.target.name!r} "
            f"from {old_type} to {new_type.name}",
        )  # fmt: skip
        _rule(workspace, old_key, RelationOutcome.REDIRECT, relation, event)
        _refresh(workspace, relation)
    return event


def do_reverse_relation(
    *, workspace: Workspace, relation_id: int, actor: User | None = None
) -> CurationEvent:
    """Swap source and target; extraction of the edge in its old direction adds its
    evidence here."""
    with transaction.atomic():
        relation = _active(workspace, relation_id)
        before, old_key = _snapshot(relation), _key(relation)
        new_key = (relation.target_id, relation.source_id, relation.type_id)
        _free_edge(workspace, new_key, but=relation.pk)
        payload: dict[str, Any] = {"before": before}
        _lift_rules(workspace, new_key, payload)
        relation.source, relation.target = relation.target, relation.source
        relation.curated = True
        relation.save(update_fields=["source", "target", "curated", "updated_at"])
        payload["after"] = _snapshot(relation)
        event = _event(
            workspace, CurationAction.RELATION_REVERSE, actor=actor, relation=relation,
            payload=payload, summary=f"Reversed the relation, now {_label(relation)}",
        )  # fmt: skip
        _rule(workspace, old_key, RelationOutcome.REDIRECT, relation, event)
        _refresh(workspace, relation)
    return event


def do_edit_relation(
    *, workspace: Workspace, relation_id: int, description: str, actor: User | None = None
) -> CurationEvent:
    """A person's description, which evidence refreshes no longer overwrite."""
    clean = " ".join(description.split())
    if len(clean) > MAX_DESCRIPTION:
        raise InvalidInput(f"A description has at most {MAX_DESCRIPTION} characters.")
    with transaction.atomic():
        relation = _active(workspace, relation_id)
        if clean == relation.description and relation.description_curated:
            raise InvalidInput("The description is unchanged.")
        before = _snapshot(relation)
        relation.description, relation.description_curated = clean, True
        relation.curated = True
        relation.save(update_fields=["description", "description_curated", "curated",
                                     "updated_at"])  # fmt: skip
        event = _event(
            workspace, CurationAction.RELATION_EDIT, actor=actor, relation=relation,
            payload={"before": before, "after": _snapshot(relation)},
            summary=f"Edited the description of {_label(relation)}",
        )  # fmt: skip
        _refresh(workspace, relation)
    return event


def do_update_relation(
    *,
    workspace: Workspace,
    relation_id: int,
    type_name: str | None = None,
    description: str | None = None,
    actor: User | None = None,
) -> list[CurationEvent]:
    """Retype and/or describe a relation in one transaction, each change its own event
    (returned in order); the API's PATCH and the admin's change form go through here."""
    with transaction.atomic():
        _locked_relation(workspace, relation_id)
        events = []
        if type_name is not None:
            events.append(
                do_retype_relation(
                    workspace=workspace,
                    relation_id=relation_id,
                    type_name=type_name,
                    actor=actor,
                )
            )
        if description is not None:
            events.append(
                do_edit_relation(
                    workspace=workspace,
                    relation_id=relation_id,
                    description=description,
                    actor=actor,
                )
            )
    return events


def do_add_relation(
    *,
    workspace: Workspace,
    source_id: int,
    target_id: int,
    type_name: str,
    description: str = "",
    reason: str = "",
    chunk_id: int | None = None,
    char_start: int | None = None,
    char_end: int | None = None,
    actor: User | None = None,
) -> CurationEvent:
    """A relation added by hand between two active entities, with a note of who added it
    and why (optionally the document span that shows it). It and its two ends are
    curated, so no loss of extracted evidence deletes them."""
    clean = " ".join(description.split())
    why = reason.strip()
    if len(clean) > MAX_DESCRIPTION or len(why) > MAX_REASON:
        raise InvalidInput(f"Description and reason have at most {MAX_DESCRIPTION} characters.")
    with transaction.atomic():
        source, target = _endpoints(workspace, source_id, target_id)
        relation_type = _relation_type(workspace, type_name)
        key = (source.pk, target.pk, relation_type.pk)
        _free_edge(workspace, key, but=None)
        chunk = _note_place(workspace, chunk_id, char_start, char_end)
        payload: dict[str, Any] = {
            "ends_curated": {str(e.pk): e.curated for e in (source, target)},
        }
        _lift_rules(workspace, key, payload)
        relation = Relation.objects.create(
            workspace=workspace, source=source, target=target, type=relation_type,
            description=clean, description_curated=bool(clean), curated=True,
        )  # fmt: skip
        Entity.objects.filter(pk__in=[source.pk, target.pk]).update(curated=True)
        payload["after"] = _snapshot(relation)
        event = _event(
            workspace, CurationAction.RELATION_ADD, actor=actor, relation=relation,
            payload=payload, summary=f"Added the relation {_label(relation)}",
        )  # fmt: skip
        RelationNote.objects.create(
            workspace=workspace, relation=relation, actor=actor, reason=why, chunk=chunk,
            char_start=char_start if chunk else None, char_end=char_end if chunk else None,
            event=event,
        )  # fmt: skip
        _refresh(workspace, relation)
    return event


def _note_place(
    workspace: Workspace, chunk_id: int | None, char_start: int | None, char_end: int | None
) -> Chunk | None:
    """The chunk a note points at, checked: of this workspace, the span (document offsets)
    inside it. Offsets need a chunk; a chunk alone points at the whole of it."""
    if chunk_id is None:
        if char_start is not None or char_end is not None:
            raise InvalidInput("Character offsets need the chunk they are in (chunk_id).")
        return None
    chunk = Chunk.objects.for_workspace(workspace).filter(pk=chunk_id).first()
    if chunk is None:
        raise NotFound(f"Chunk {chunk_id} not found.")
    if (char_start is None) != (char_end is None):
        raise InvalidInput("Give both char_start and char_end, or neither.")
    if (
        char_start is not None
        and char_end is not None
        and not chunk.char_start <= char_start < char_end <= chunk.char_end
    ):
        raise InvalidInput(
            f"The span {char_start}-{char_end} is not inside chunk {chunk.pk} "
            f"(characters {chunk.char_start}-{chunk.char_end} of its document)."
        )
    return chunk


# --- Undo ----------------------------------------------------------------------------------


def _locked_relation_event(workspace: Workspace, event_id: int) -> CurationEvent:
    """The relation event to undo, locked; refused when undone already, or when a later
    change to the same relation still stands (undo that one first)."""
    event = lock_event(workspace, event_id, RELATION_CHANGES)
    if event.relation_id is None:
        raise Conflict(f"The relation of event {event_id} no longer exists.")
    later = (
        CurationEvent.objects.for_workspace(workspace)
        .filter(relation_id=event.relation_id, pk__gt=event.pk, undone_by__isnull=True)
        .filter(action__in=RELATION_ACTIONS)
        .order_by("-pk")
        .first()
    )
    if later is not None:
        raise Conflict(
            f"Event {later.pk} ({later.summary}) changed this relation later: undo it first."
        )
    return event


def do_undo_relation_event(
    *, workspace: Workspace, event_id: int, actor: User | None = None
) -> CurationEvent:
    """Put the relation back exactly as it was before the event, and retire the rules the
    event made (bringing back those it lifted). The undo is itself an event."""
    with transaction.atomic():
        event = _locked_relation_event(workspace, event_id)
        relation = _locked_relation(workspace, event.relation_id or 0)
        payload = event.payload
        changed = _changed_since(relation, payload["after"])
        if changed:
            raise Conflict(
                f"Relation {relation.pk} changed since event {event.pk} "
                f"({', '.join(changed)}); it cannot be put back exactly."
            )
        ends = {relation.source_id, relation.target_id}
        RelationRule.objects.filter(event=event).update(active=False)
        RelationRule.objects.filter(pk__in=payload.get("rules_lifted", [])).update(active=True)
        summary = f"Undid: {event.summary}"
        kept: Relation | None = relation
        if event.action == CurationAction.RELATION_ADD:
            kept = _unadd(relation, event)
        else:
            _put_back(workspace, relation, payload["before"])
            ends |= {relation.source_id, relation.target_id}
        undo = record_event(
            workspace, CurationAction.RELATION_UNDO, actor=actor,
            relation=kept, entity_id=min(ends), payload={"undid": event.pk},
            summary=summary,
        )  # fmt: skip
        mark_undone(event, by=undo)
        do_refresh_derived(
            workspace_id=workspace.pk,
            entity_ids=ends,
            relation_ids=[kept.pk] if kept is not None else [],
            prune=False,
        )
    return undo


def _changed_since(relation: Relation, after: dict[str, Any]) -> list[str]:
    """The fields that differ from what the event left, but a description derived from
    evidence (new evidence rewrites it; the undo's refresh does again)."""
    now = _snapshot(relation)
    return [
        field
        for field in RELATION_FIELDS
        if now[field] != after.get(field)
        and not (field == "description" and not after.get("description_curated"))
    ]


def _put_back(workspace: Workspace, relation: Relation, before: dict[str, Any]) -> None:
    if before["state"] == EntityState.ACTIVE:
        _free_edge(
            workspace,
            (before["source_id"], before["target_id"], before["type_id"]),
            but=relation.pk,
        )
    for field, value in before.items():
        setattr(relation, field, value)
    relation.save()


def _unadd(relation: Relation, event: CurationEvent) -> Relation | None:
    """A hand-made relation goes with its note, and its ends are curated as before unless
    a later decision (a curation event naming one, another hand-made relation touching
    it) still needs them kept; if extraction has since found the same edge, the relation
    stays as extraction's."""
    RelationNote.objects.filter(relation=relation).delete()
    for key, curated in event.payload.get("ends_curated", {}).items():
        entity_id = int(key)
        later = CurationEvent.objects.filter(entity_id=entity_id, pk__gt=event.pk).exists()
        noted = RelationNote.objects.filter(
            Q(relation__source_id=entity_id) | Q(relation__target_id=entity_id)
        ).exists()
        if not later and not noted:
            Entity.objects.filter(pk=entity_id).update(curated=curated)
    if RelationEvidence.objects.filter(relation=relation).exists():
        relation.curated = relation.description_curated = False
        relation.save(update_fields=["curated", "description_curated", "updated_at"])
        return relation
    relation.delete()
    return None


@register_inverse(*RELATION_ACTIONS)
def _undo_relation_change(undoing: Undoing) -> CurationEvent:
    return do_undo_relation_event(
        workspace=undoing.workspace, event_id=undoing.event.pk, actor=undoing.actor
    )
