"""The review queue (merge suggestions, accepted or rejected) and the curation event log."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Router
from ninja.pagination import LimitOffsetPagination, paginate

from knowledge.actions.curation.suggestions import (
    do_accept_suggestion,
    do_reject_suggestion,
)
from knowledge.api.entities import curation_result
from knowledge.models import SuggestionStatus
from knowledge.schemas.curation import (
    CurationEventOut,
    CurationResult,
    SuggestionAcceptIn,
    SuggestionOut,
)
from knowledge.selectors.curation import (
    list_curation_events,
    list_merge_suggestions,
)
from workspaces.auth import get_caller, get_workspace_access
from workspaces.errors import InvalidInput
from workspaces.models import Role

router = Router(tags=["knowledge"])
# The operation ids clients generated code from (config/api.py).
OPERATION_ID_PREFIX = "knowledge_api"


@router.get(
    "/workspaces/{slug}/merge-suggestions",
    response=list[SuggestionOut],
    summary="The review queue: pairs that may be the same entity",
)
@paginate(LimitOffsetPagination)
def merge_suggestions(request: HttpRequest, slug: str, status: str = "open") -> QuerySet[Any]:
    """`status`: open (default), accepted or rejected."""
    workspace = get_workspace_access(request, slug).workspace
    if status not in SuggestionStatus.values:
        raise InvalidInput(f"status: one of {', '.join(SuggestionStatus.values)}.")
    return list_merge_suggestions(workspace, status=status)


@router.post(
    "/workspaces/{slug}/merge-suggestions/{suggestion_id}/accept",
    response=CurationResult,
    summary="Accept: merge the pair",
)
def accept_suggestion(
    request: HttpRequest, slug: str, suggestion_id: int, payload: SuggestionAcceptIn
) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    event = do_accept_suggestion(
        workspace=workspace,
        suggestion_id=suggestion_id,
        into=payload.into,
        actor=get_caller(request).user,
    )
    return curation_result(workspace, event, event.entity_id)


@router.post(
    "/workspaces/{slug}/merge-suggestions/{suggestion_id}/reject",
    response=CurationResult,
    summary="Reject: not the same, never suggested again",
)
def reject_suggestion(request: HttpRequest, slug: str, suggestion_id: int) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    event = do_reject_suggestion(
        workspace=workspace, suggestion_id=suggestion_id, actor=get_caller(request).user
    )
    return curation_result(workspace, event, None)


@router.get(
    "/workspaces/{slug}/curation-events",
    response=list[CurationEventOut],
    summary="Curation history, newest first",
)
@paginate(LimitOffsetPagination)
def curation_events(request: HttpRequest, slug: str, entity: int | None = None) -> QuerySet[Any]:
    workspace = get_workspace_access(request, slug).workspace
    return list_curation_events(workspace, entity_id=entity)
