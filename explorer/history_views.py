"""The History page (`/history/`): every curation decision of the workspace, newest first —
people's and the machine's (consolidation's automatic merges with their reasons, the LLM
review's verdicts) — so a curator can review what was decided and undo it.

Filters: person (`actor`, a username or "machine"), `action`, `entity` (its id, from the
entity panel's link or the form), a date range (`since`, `until`), and `event` for one
event (the link a refusal gives to the event that blocks an undo).

Everyone in the workspace sees the page; editors get an Undo on each event that still
stands. Undo posts to `history_undo`, which calls `do_undo_event` and answers with the
event's row: done, or the refusal naming the later event(s) in the way, with links to them
and an "Undo both" button that undoes them first (newest first), then this one.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from explorer.workspace_pages import WorkspaceRequest, workspace_page
from knowledge.actions.curation.undo import dependants, do_undo_event, is_undoable
from knowledge.models import CurationAction, CurationEvent
from knowledge.selectors.curation import (
    MACHINE,
    get_llm_verdicts,
    list_curation_actors,
    list_curation_events,
)
from workspaces.errors import Conflict, DomainError
from workspaces.models import Role, Workspace

PAGE_SIZE = 50
# Text from documents and the LLM is shown escaped, and bounded.
REASON_CHARS = 300


def _workspace(request: WorkspaceRequest) -> Workspace:
    return request.membership.workspace


def _can_edit(request: WorkspaceRequest) -> bool:
    return bool(request.membership.allows(Role.EDITOR))


def _positive(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and 0 < int(value) < 2**63 else None


def _filters(request: WorkspaceRequest) -> tuple[dict[str, Any], list[str]]:
    """The filters asked for, and what could not be read (shown, then ignored)."""
    query = request.GET
    errors = []
    dates: dict[str, date | None] = {}
    for key in ("since", "until"):
        raw = query.get(key, "").strip()
        try:
            dates[key] = date.fromisoformat(raw) if raw else None
        except ValueError:
            dates[key] = None
            errors.append(f"{raw[:40]!r} is not a date (YYYY-MM-DD); {key} ignored.")
    action = query.get("action", "")
    if action and action not in CurationAction.values:
        errors.append("No such action; every action shown.")
        action = ""
    raw_entity = query.get("entity", "").strip()
    entity = _positive(raw_entity)
    if raw_entity and entity is None:
        errors.append("The entity is an id (a number); every entity shown.")
    filters = {
        "actor": query.get("actor", "").strip()[:150] or None,
        "action": action or None,
        "entity_id": entity,
        "event_id": _positive(query.get("event")),
        **dates,
    }
    return filters, errors


def _row(
    event: CurationEvent,
    *,
    can_edit: bool,
    verdicts: dict[Any, Any],
    outcome: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One event as the page shows it: who, what, why (the machine's reasons, the LLM's
    verdict), where it points, and whether an Undo is offered."""
    payload = event.payload or {}
    reasons = []
    if event.action in {CurationAction.AUTO_MERGE, CurationAction.MERGE}:
        reasons = [str(reason)[:REASON_CHARS] for reason in payload.get("reasons", [])]
    verdict = None
    pair = payload.get("pair")
    if event.action == CurationAction.NOT_SAME and isinstance(pair, list) and len(pair) == 2:
        found = verdicts.get(tuple(pair))
        if found:
            verdict = {"verdict": found[0], "reason": str(found[1])[:REASON_CHARS]}
    return {
        "event": event,
        "who": event.actor.get_username() if event.actor is not None else MACHINE,
        "reasons": reasons,
        "verdict": verdict,
        "undoable": can_edit and is_undoable(event),
        "outcome": outcome,
    }


def _rows(
    workspace: Workspace, events: list[CurationEvent], *, can_edit: bool
) -> list[dict[str, Any]]:
    pairs: list[tuple[int, int]] = [
        (e.payload["pair"][0], e.payload["pair"][1])
        for e in events
        if e.action == CurationAction.NOT_SAME and len(e.payload.get("pair", [])) == 2
    ]
    verdicts = get_llm_verdicts(workspace, pairs)
    return [_row(e, can_edit=can_edit, verdicts=verdicts) for e in events]


@workspace_page()
@require_GET
def history(request: WorkspaceRequest) -> HttpResponse:
    workspace = _workspace(request)
    filters, errors = _filters(request)
    page = Paginator(list_curation_events(workspace, **filters), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    kept = {
        key: request.GET[key]
        for key in ("actor", "action", "entity", "since", "until", "event")
        if request.GET.get(key)
    }
    context = {
        "nav": "history",
        "page": page,
        "rows": _rows(workspace, list(page.object_list), can_edit=_can_edit(request)),
        "filters": kept,
        "query": urlencode(kept),
        "errors": errors,
        "actors": [MACHINE, *list_curation_actors(workspace)],
        "actions": CurationAction.choices,
        "ws": workspace.slug,
    }
    return render(request, "explorer/history/page.html", context)


@workspace_page(role=Role.EDITOR)
@require_POST
def history_undo(request: WorkspaceRequest, event_id: int) -> HttpResponse:
    """Undo one event (with `cascade`, the later ones in its way first); answers with its
    row (htmx), or back to the page with the outcome as a message."""
    workspace = _workspace(request)
    event = list_curation_events(workspace, event_id=event_id).first()
    if event is None:
        raise Http404(f"No curation event {event_id} in this workspace.")
    cascade = request.POST.get("cascade") == "1"
    outcome: dict[str, Any]
    try:
        undo = do_undo_event(
            workspace=workspace,
            event_id=event.pk,
            actor=request.user,
            cascade=cascade,
        )
    except Conflict as exc:
        blockers = [] if event.undone_by_id else dependants(workspace, event)
        outcome = {"error": True, "message": exc.message, "blockers": blockers}
    except DomainError as exc:
        outcome = {"error": True, "message": exc.message, "blockers": []}
    else:
        outcome = {"error": False, "message": undo.summary, "undo": undo}
    if not request.htmx:
        (messages.error if outcome["error"] else messages.success)(request, outcome["message"])
        return redirect(f"{reverse('explorer:history')}?{urlencode({'ws': workspace.slug})}")
    event.refresh_from_db()
    row = _rows(workspace, [event], can_edit=True)[0]
    row["outcome"] = outcome
    return render(
        request,
        "explorer/history/page.html#event-row",
        {"row": row, "ws": workspace.slug, "can_edit": True},
    )


urlpatterns: list[URLPattern] = [
    path("history/", history, name="history"),
    path("history/<int:event_id>/undo/", history_undo, name="history_undo"),
]
