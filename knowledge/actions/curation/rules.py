"""The rules curation decisions leave for consolidation (`CurationRule`), which it applies
before anything automatic so a decision survives re-extraction: a name pinned to an
entity, a pair that is not the same — and their retirement when the decision is undone.

Several decisions write the same rule (a rename, an alias and a split pin a name; "not the
same", a split and an unmerge keep a pair apart), so the rules sit below all of them.
A blocked name is written by the one decision that blocks (delete, block), in place.
"""

from __future__ import annotations

from django.utils import timezone

from knowledge.models import (
    CurationEvent,
    CurationRule,
    Entity,
    MergeSuggestion,
    RuleKind,
    SuggestionStatus,
)
from workspaces.models import Workspace


def pin_name(
    workspace: Workspace, canonical: str, entity: Entity, event: CurationEvent
) -> list[int]:
    """Pin the name to the entity; returns the ids of the pins to other entities it lifted
    (the event's undo brings them back)."""
    others = (
        CurationRule.objects.for_workspace(workspace)
        .filter(
            kind=RuleKind.ALIAS_PIN, canonical=canonical, entity_type_id=entity.type_id, active=True
        )
        .exclude(entity=entity)
    )
    lifted = list(others.values_list("pk", flat=True))
    others.update(active=False)
    CurationRule.objects.get_or_create(
        workspace=workspace,
        kind=RuleKind.ALIAS_PIN,
        canonical=canonical,
        entity_type_id=entity.type_id,
        entity=entity,
        active=True,
        defaults={"event": event},
    )
    return lifted


def remember_not_same(workspace: Workspace, a: int, b: int, event: CurationEvent) -> list[int]:
    """Remember the pair as different; returns the open suggestions of the pair it rejected."""
    low, high = sorted((a, b))
    CurationRule.objects.get_or_create(
        workspace=workspace,
        kind=RuleKind.NOT_SAME,
        entity_id=low,
        other_id=high,
        active=True,
        defaults={"event": event},
    )
    suggestions = MergeSuggestion.objects.for_workspace(workspace).filter(
        entity_a_id=low, entity_b_id=high, status=SuggestionStatus.OPEN
    )
    rejected = list(suggestions.values_list("pk", flat=True))
    suggestions.update(status=SuggestionStatus.REJECTED, decided_at=timezone.now())
    return rejected


def retire_rules(event: CurationEvent) -> None:
    """The rules the event made retire; the pins it lifted hold again."""
    CurationRule.objects.filter(event=event).update(active=False)
    CurationRule.objects.filter(pk__in=event.payload.get("pins_lifted", [])).update(active=True)
