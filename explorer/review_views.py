"""The review page: open merge suggestions, most likely first, both entities side by side
with their evidence, the reasons and the score, and Accept / Reject (and Undo of an
accepted merge) on each (knowledge/actions/curation/).

Editors only: every view here is `workspace_page(role=Role.EDITOR)`. Each decision posts
(htmx; a plain form post without JavaScript) and answers with the suggestion's card saying
what happened, or, for a plain post, back to the page with a message; an accepted merge
also tells the graph page what changed (explorer/curation_outcome.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.views.decorators.http import require_GET, require_POST

from explorer.curation_outcome import Outcome, answer_status, graph_changed, posted_id
from explorer.snippets import highlighted
from explorer.workspace_pages import WorkspaceRequest, workspace_page
from knowledge.actions.curation import (
    default_survivor,
    do_accept_suggestion,
    do_reject_suggestion,
    do_unmerge,
)
from knowledge.models import CurationAction, CurationEvent, Entity
from knowledge.selectors.curation import list_merge_suggestions
from knowledge.selectors.entities import get_entity_detail
from workspaces.errors import DomainError, InvalidInput, NotFound
from workspaces.models import Role, Workspace

REVIEW_PAGE_SIZE = 10
REVIEW_EVIDENCE = 3  # snippets per side of a suggestion


def _workspace(request: WorkspaceRequest) -> Workspace:
    return request.membership.workspace


def _side(workspace: Workspace, entity: Entity) -> dict[str, Any]:
    detail = get_entity_detail(workspace, entity.pk, evidence_limit=REVIEW_EVIDENCE)
    return {**detail, "evidence": [{**item, **highlighted(item)} for item in detail["evidence"]]}


@workspace_page(role=Role.EDITOR)
@require_GET
def review(request: WorkspaceRequest) -> HttpResponse:
    """Open merge suggestions, most likely first: both entities side by side with their
    evidence, the reasons and the score, and accept / reject."""
    workspace = _workspace(request)
    page = Paginator(list_merge_suggestions(workspace, status="open"), REVIEW_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    items = []
    for suggestion in page.object_list:
        pair = [suggestion.entity_a, suggestion.entity_b]
        items.append(
            {
                "suggestion": suggestion,
                "sides": [_side(workspace, entity) for entity in pair],
                "keep": default_survivor(pair).pk,
            }
        )
    return render(
        request, "explorer/curation/review.html", {"nav": "review", "page": page, "items": items}
    )


def _decided(
    request: WorkspaceRequest,
    suggestion_id: int,
    act: Callable[[Workspace, Any], CurationEvent],
    *,
    undoable: bool,
) -> HttpResponse:
    """Run one review action and answer with the suggestion's card showing what happened
    (htmx), or back to the review page with a message (a plain form post)."""
    workspace = _workspace(request)
    try:
        event = act(workspace, request.user)
    except NotFound as exc:
        raise Http404(exc.message) from None
    except DomainError as exc:
        outcome = Outcome("review", exc.message, error=True, status=exc.status)
        if not request.htmx:
            messages.error(request, exc.message)
            return redirect("explorer:review")
        return _card(request, suggestion_id, outcome)
    merge = event.action in {CurationAction.MERGE, CurationAction.AUTO_MERGE}
    outcome = Outcome("review", event.summary, undo_event=event.pk if undoable and merge else None)
    if not request.htmx:
        messages.success(request, event.summary)
        return redirect("explorer:review")
    response = _card(request, suggestion_id, outcome)
    if merge:
        merged = [m["id"] for m in event.payload["merged"]]
        response["HX-Trigger"] = graph_changed(event.payload["survivor"]["id"], merged)
    elif event.action == CurationAction.UNMERGE:
        response["HX-Trigger"] = graph_changed(event.entity_id, [])
    return response


def _card(request: WorkspaceRequest, suggestion_id: int, outcome: Outcome) -> HttpResponse:
    return render(
        request,
        "explorer/curation/review.html#decided",
        {"item": {"id": suggestion_id, "outcome": outcome}, "ws": _workspace(request).slug},
        status=answer_status(request, outcome),
    )


@workspace_page(role=Role.EDITOR)
@require_POST
def review_accept(request: WorkspaceRequest, suggestion_id: int) -> HttpResponse:
    """Merge the pair; `into` (one of the two) is the entity that stays."""

    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        into = request.POST.get("into") or None
        try:
            survivor = int(into) if into else None
        except ValueError:
            raise InvalidInput("Choose which entity stays.") from None
        return do_accept_suggestion(
            workspace=workspace, suggestion_id=suggestion_id, into=survivor, actor=actor
        )

    return _decided(request, suggestion_id, act, undoable=True)


@workspace_page(role=Role.EDITOR)
@require_POST
def review_reject(request: WorkspaceRequest, suggestion_id: int) -> HttpResponse:
    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        return do_reject_suggestion(workspace=workspace, suggestion_id=suggestion_id, actor=actor)

    return _decided(request, suggestion_id, act, undoable=False)


@workspace_page(role=Role.EDITOR)
@require_POST
def review_undo(request: WorkspaceRequest, suggestion_id: int) -> HttpResponse:
    """Undo the merge an accepted suggestion made (the pair is then kept apart)."""

    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        event_id = posted_id(request, "event", "Say which merge to undo.")
        return do_unmerge(workspace=workspace, event_id=event_id, actor=actor)

    return _decided(request, suggestion_id, act, undoable=False)


urlpatterns: list[URLPattern] = [
    path("review/", review, name="review"),
    path("review/<int:suggestion_id>/accept/", review_accept, name="review_accept"),
    path("review/<int:suggestion_id>/reject/", review_reject, name="review_reject"),
    path("review/<int:suggestion_id>/undo/", review_undo, name="review_undo"),
]
