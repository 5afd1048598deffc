"""The curation log: the one writer of `CurationEvent` rows, and what every decision and
its undo share — the event lock, the prior-state snapshots, and the registry of inverses.

Why one module: an event is the contract between a decision and its undo (the payload is
what the undo needs; `undone_by` links the two). Written here only, the summary's bound,
the lock's refusals and that link are the same whichever module made the decision, and
tests/knowledge/actions/curation/test_event_log.py fails when a second writer appears.

Each module of the package registers the inverse of every action it owns
(`register_inverse`); the package's `__init__` imports every module, so the registry is
complete whenever `undo` can be imported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured
from django.db.models import QuerySet

from knowledge.models import CurationAction, CurationEvent, Entity, Relation
from workspaces.errors import Conflict, DomainError, NotFound
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SUMMARY_LENGTH = 500
# The fields of an entity a decision may change, kept in its payload for the exact undo.
ENTITY_FIELDS = ("name", "canonical_name", "type_id", "description", "state", "merged_into_id",
                 "curated", "type_curated", "aliases", "blocking_keys")  # fmt: skip
# Events that undo another: they restore a state, and are not undone themselves.
UNDO_ACTIONS = frozenset(
    {CurationAction.UNMERGE, CurationAction.RESTORE, CurationAction.RELATION_UNDO}
)


# --- Writing ---------------------------------------------------------------------------


def record_event(
    workspace: Workspace,
    action: str,
    *,
    actor: User | None,
    entity: Entity | None = None,
    entity_id: int | None = None,
    relation: Relation | None = None,
    payload: dict[str, Any],
    summary: str,
) -> CurationEvent:
    """Log one decision (or one undo). `entity_id` stands for `entity` where only the id
    is at hand (an undo names the entity it put back without loading it)."""
    named: dict[str, Any] = {"entity": entity} if entity_id is None else {"entity_id": entity_id}
    return CurationEvent.objects.create(
        workspace=workspace,
        action=action,
        actor=actor,
        relation=relation,
        payload=payload,
        summary=summary[:SUMMARY_LENGTH],
        **named,
    )


def mark_undone(event: CurationEvent, *, by: CurationEvent) -> None:
    """Link the event to the event that undid it: it is no longer standing."""
    event.undone_by = by
    event.save(update_fields=["undone_by"])


def record_undo(undoing: Undoing, *, entity_id: int | None) -> CurationEvent:
    """The undo's own event (a restore naming the event it undid), linked from the
    original: how an inverse that is not an action of its own ends."""
    event = undoing.event
    undo = record_event(
        undoing.workspace,
        CurationAction.RESTORE,
        actor=undoing.actor,
        entity_id=entity_id,
        payload={"undid": event.pk},
        summary=f"Undid: {event.summary}",
    )
    mark_undone(event, by=undo)
    return undo


# --- Locking ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """The events a lock accepts, and the words of its refusals: "Event 7 is a rename, not
    a merge." (raised as `error`), "Merge 7 was undone already (event 9)." (`noun`)."""

    actions: frozenset[str]
    kind: str
    noun: str = "Event"
    error: type[DomainError] = Conflict


def lock_event(
    workspace: Workspace, event_id: int, expected: Expected | None = None
) -> CurationEvent:
    """The event, row-locked for its undo. Refused when it is missing or of another
    workspace (NotFound), not of the `expected` kind, or undone already (Conflict, naming
    the undo)."""
    event = (
        CurationEvent.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk=event_id)
        .first()
    )
    if event is None:
        raise NotFound(f"No curation event {event_id} in this workspace.")
    noun = "Event"
    if expected is not None:
        if event.action not in expected.actions:
            raise expected.error(f"Event {event_id} is a {event.action}, not a {expected.kind}.")
        noun = expected.noun
    if event.undone_by_id:
        raise Conflict(f"{noun} {event_id} was undone already (event {event.undone_by_id}).")
    return event


def lock_standing_events(workspace: Workspace, ids: Iterable[int]) -> QuerySet[CurationEvent]:
    """Those of the events still standing (not undone), row-locked, newest first: a
    batch undo skips what was undone one by one since."""
    return (
        CurationEvent.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk__in=list(ids), undone_by__isnull=True)
        .order_by("-pk")
    )


# --- Snapshots -------------------------------------------------------------------------


def snapshot(row: Any, fields: Iterable[str]) -> dict[str, Any]:
    """The row's fields as they are, for the payload an exact undo puts back."""
    return {field: getattr(row, field) for field in fields}


def restore(row: Any, values: dict[str, Any]) -> None:
    """Put a snapshot back on the row (the caller saves it)."""
    for field, value in values.items():
        setattr(row, field, value)


# --- The registry of inverses ----------------------------------------------------------


@dataclass(frozen=True)
class Undoing:
    """One undo under way: the locked event and who undoes it. `vector` is the old name's
    vector for a rename's undo, made before any row lock (the model's first load takes
    seconds); None inside a cascade, where the inverse makes it."""

    workspace: Workspace
    event: CurationEvent
    actor: User | None
    vector: dict[str, Any] | None = None


Inverse = Callable[[Undoing], CurationEvent]
# {action: the function that undoes an event of it}, filled by each module at import.
INVERSES: dict[str, Inverse] = {}


def register_inverse(*actions: str) -> Callable[[Inverse], Inverse]:
    """Decorate the function that undoes events of `actions` (one owner per action)."""

    def register(inverse: Inverse) -> Inverse:
        taken = [a for a in actions if INVERSES.get(a, inverse) is not inverse]
        if taken:
            raise ImproperlyConfigured(f"{', '.join(taken)} already has an inverse.")
        for action in actions:
            INVERSES[action] = inverse
        return inverse

    return register


def inverse_of(action: str) -> Inverse | None:
    """The function that undoes an event of the action, if any module registered one."""
    return INVERSES.get(action)
