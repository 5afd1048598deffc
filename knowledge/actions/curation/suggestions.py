"""The review queue's two answers to a merge suggestion: accept (the pair is merged) or
reject (the pair is "not the same"), each the ordinary decision plus the suggestion's
own status and who decided it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from knowledge.actions.curation.block import do_mark_not_same
from knowledge.actions.curation.merge import default_survivor, do_merge_entities
from knowledge.models import CurationEvent, MergeSuggestion, SuggestionStatus
from workspaces.errors import Conflict, InvalidInput, NotFound
from workspaces.models import Workspace

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _open_suggestion(workspace: Workspace, suggestion_id: int) -> MergeSuggestion:
    suggestion = (
        MergeSuggestion.objects.for_workspace(workspace)
        .select_for_update()
        .filter(pk=suggestion_id)
        .first()
    )
    if suggestion is None:
        raise NotFound(f"No merge suggestion {suggestion_id} in this workspace.")
    if suggestion.status != SuggestionStatus.OPEN:
        raise Conflict(f"Suggestion {suggestion_id} was {suggestion.status} already.")
    return suggestion


def do_accept_suggestion(
    *,
    workspace: Workspace,
    suggestion_id: int,
    into: int | None = None,
    actor: User | None = None,
) -> CurationEvent:
    """Merge the pair (into the entity with more mentions unless `into` says otherwise)."""
    with transaction.atomic():
        suggestion = _open_suggestion(workspace, suggestion_id)
        pair = [suggestion.entity_a, suggestion.entity_b]
        if into is not None and into not in {e.pk for e in pair}:
            raise InvalidInput("`into` must be one of the suggested pair.")
        survivor = into or default_survivor(pair).pk
        other = next(e.pk for e in pair if e.pk != survivor)
        event = do_merge_entities(
            workspace=workspace, survivor_id=survivor, merged_ids=[other], actor=actor
        )
        MergeSuggestion.objects.filter(pk=suggestion.pk).update(
            status=SuggestionStatus.ACCEPTED, decided_by=actor, decided_at=timezone.now()
        )
    return event


def do_reject_suggestion(
    *, workspace: Workspace, suggestion_id: int, actor: User | None = None
) -> CurationEvent:
    """Not the same: the pair is never suggested or merged automatically again."""
    with transaction.atomic():
        suggestion = _open_suggestion(workspace, suggestion_id)
        event = do_mark_not_same(
            workspace=workspace,
            entity_id=suggestion.entity_a_id,
            other_id=suggestion.entity_b_id,
            actor=actor,
        )
        MergeSuggestion.objects.filter(pk=suggestion.pk).update(
            status=SuggestionStatus.REJECTED, decided_by=actor, decided_at=timezone.now()
        )
    return event
