"""The Schema page: the workspace's entity and relation types with their counts and
examples, the types extraction proposed (accept, retire, rename), merging two types (and
undoing a merge), and each relation type's domain and range with the relations outside
them.

Members read it (viewers too); the forms are for editors, and the server refuses anyone
else (403). Types and merges are addressed by id within the current workspace, so another
workspace's id is 404 with nothing done. Each form posts (htmx, CSRF header; a plain form
post without JavaScript) to its own endpoint, which calls one action and answers with the
page's body and a line saying what happened. An htmx request gets 200 with a refusal in
that line (htmx swaps no 4xx answer), a plain post is redirected back with the message.
Every URL carries `?ws=`, so a page left open in a tab keeps acting on the workspace it
shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_GET, require_POST

from explorer.workspace_pages import WorkspaceRequest, workspace_page
from knowledge.actions.curation.types import do_merge_types, do_undo_schema_change
from knowledge.actions.schema import (
    FALLBACK_ENTITY_TYPE,
    FALLBACK_RELATION_TYPE,
    TypeKind,
    do_accept_type,
    do_ensure_default_schema,
    do_rename_type,
    do_retire_type,
    do_set_relation_domain,
)
from knowledge.models.schema import SchemaType
from knowledge.selectors.schema import (
    get_schema_overview,
    get_schema_type,
    get_type_change,
    latest_type_change,
    list_violations,
)
from workspaces.errors import DomainError, InvalidInput
from workspaces.models import Role, Workspace

VIOLATIONS_PAGE = 20
KINDS: dict[str, TypeKind] = {"entity": "entity", "relation": "relation"}


@dataclass
class Outcome:
    message: str
    error: bool = False
    undo: int | None = None  # the schema change a fresh Undo button undoes


def _workspace(request: WorkspaceRequest) -> Workspace:
    return request.membership.workspace


def _page_url(request: WorkspaceRequest) -> str:
    return f"{reverse('explorer:schema')}?ws={_workspace(request).slug}"


def _kind(raw: str) -> TypeKind:
    if raw not in KINDS:
        raise Http404("No such kind of type.")
    return KINDS[raw]


def _type(request: WorkspaceRequest, kind: TypeKind, type_id: int) -> SchemaType:
    try:
        return get_schema_type(_workspace(request), kind, type_id)
    except DomainError:
        raise Http404(f"No such {kind} type in this workspace.") from None


def _context(request: WorkspaceRequest, outcome: Outcome | None = None) -> dict[str, Any]:
    workspace = _workspace(request)
    do_ensure_default_schema(workspace=workspace)
    overview = get_schema_overview(workspace)
    return {
        "nav": "schema",
        "overview": overview,
        "ws": workspace.slug,
        "outcome": outcome,
        # The fallback types cannot be retired, renamed or merged away: no buttons for them.
        "fallback_entity": FALLBACK_ENTITY_TYPE,
        "fallback_relation": FALLBACK_RELATION_TYPE,
        "active_entity_types": [t.name for t in overview.entity_types if t.status != "retired"],
    }


@workspace_page()
@require_GET
def schema(request: WorkspaceRequest) -> HttpResponse:
    return render(request, "explorer/schema/page.html", _context(request))


def _act(request: WorkspaceRequest, act: Callable[[], Outcome]) -> HttpResponse:
    """Run one action; answer with the page's body (htmx) or back to the page."""
    try:
        outcome = act()
    except DomainError as exc:
        outcome = Outcome(exc.message, error=True)
    if not request.htmx:
        (messages.error if outcome.error else messages.success)(request, outcome.message)
        return redirect(_page_url(request))
    return render(request, "explorer/schema/page.html#schema-body", _context(request, outcome))


@workspace_page(role=Role.EDITOR)
@require_POST
def accept_type(request: WorkspaceRequest, kind: str, type_id: int) -> HttpResponse:
    found = _type(request, _kind(kind), type_id)

    def act() -> Outcome:
        do_accept_type(
            workspace=_workspace(request), kind=_kind(kind), name=found.name,
            actor=request.user,
        )  # fmt: skip
        return _logged(request, f"Accepted the {kind} type {found.name}.", found)

    return _act(request, act)


@workspace_page(role=Role.EDITOR)
@require_POST
def retire_type(request: WorkspaceRequest, kind: str, type_id: int) -> HttpResponse:
    found = _type(request, _kind(kind), type_id)

    def act() -> Outcome:
        do_retire_type(
            workspace=_workspace(request), kind=_kind(kind), name=found.name,
            actor=request.user,
        )  # fmt: skip
        return _logged(request, f"Retired the {kind} type {found.name}.", found)

    return _act(request, act)


@workspace_page(role=Role.EDITOR)
@require_POST
def rename_type(request: WorkspaceRequest, kind: str, type_id: int) -> HttpResponse:
    found = _type(request, _kind(kind), type_id)
    new_name = request.POST.get("name", "")

    def act() -> Outcome:
        renamed = do_rename_type(
            workspace=_workspace(request), kind=_kind(kind), name=found.name, new_name=new_name,
            actor=request.user,
        )  # fmt: skip
        return _logged(request, f"Renamed the {kind} type {found.name} to {renamed.name}.", renamed)

    return _act(request, act)


@workspace_page(role=Role.EDITOR)
@require_POST
def merge_types(request: WorkspaceRequest) -> HttpResponse:
    """Merge `source` into `into` (type ids of one `kind`); without `confirm` it answers
    with what the merge would do and a Confirm button."""
    kind = _kind(request.POST.get("kind", ""))
    try:
        source = _type(request, kind, int(request.POST.get("source", "")))
        into = _type(request, kind, int(request.POST.get("into", "")))
    except ValueError:
        return _act(request, _refuse("Choose the two types to merge."))
    if request.POST.get("confirm") != "1":
        if not request.htmx:
            return _act(request, _refuse("Confirm the merge."))
        context = {**_context(request), "confirm": {"kind": kind, "source": source, "into": into}}
        return render(request, "explorer/schema/page.html#schema-body", context)

    def act() -> Outcome:
        merge = do_merge_types(
            workspace=_workspace(request), kind=kind, source_name=source.name,
            into_name=into.name, actor=request.user,
        )  # fmt: skip
        left = f"; {len(merge.conflicts)} left in {source.name} (listed below)"
        return Outcome(
            f"Merged {source.name} into {into.name}: {len(merge.events)} retyped"
            + (left if merge.conflicts else ""),
            undo=merge.pk,
        )

    return _act(request, act)


def _logged(request: WorkspaceRequest, message: str, found: SchemaType) -> Outcome:
    """What an action just did, with an Undo of the change it logged: this person's
    newest change of this type (none when the action changed nothing)."""
    latest = latest_type_change(_workspace(request), actor_id=request.user.pk, name=found.name)
    return Outcome(message, undo=latest.pk if latest is not None else None)


def _refuse(message: str) -> Callable[[], Outcome]:
    def act() -> Outcome:
        raise InvalidInput(message)

    return act


@workspace_page(role=Role.EDITOR)
@require_POST
def undo_change(request: WorkspaceRequest, change_id: int) -> HttpResponse:
    """Undo one logged change of a type (accept, retire, rename, domain, merge)."""
    workspace = _workspace(request)
    try:
        change = get_type_change(workspace, change_id)
    except DomainError:
        raise Http404("No such schema change in this workspace.") from None

    def act() -> Outcome:
        do_undo_schema_change(workspace=workspace, change_id=change.pk, actor=request.user)
        return Outcome(f"Undid: {change.summary}")

    return _act(request, act)


@workspace_page(role=Role.EDITOR)
@require_POST
def set_domain(request: WorkspaceRequest, type_id: int) -> HttpResponse:
    found = _type(request, "relation", type_id)

    def act() -> Outcome:
        do_set_relation_domain(
            workspace=_workspace(request), name=found.name,
            domain=request.POST.getlist("domain"), range=request.POST.getlist("range"),
            actor=request.user,
        )  # fmt: skip
        return _logged(request, f"Saved the domain and range of {found.name}.", found)

    return _act(request, act)


@workspace_page()
@require_GET
def violations(request: WorkspaceRequest, type_id: int) -> HttpResponse:
    """A page of the relations of one type outside its domain or range."""
    found = _type(request, "relation", type_id)
    try:
        offset = max(0, int(request.GET.get("offset", "0")))
    except ValueError:
        offset = 0
    rows = list_violations(
        _workspace(request), type_id=found.pk, offset=offset, limit=VIOLATIONS_PAGE + 1
    )
    return render(
        request,
        "explorer/schema/violations.html",
        {
            "nav": "schema",
            "relation_type": found,
            "rows": rows[:VIOLATIONS_PAGE],
            "offset": offset,
            "previous": max(0, offset - VIOLATIONS_PAGE) if offset else None,
            "next": offset + VIOLATIONS_PAGE if len(rows) > VIOLATIONS_PAGE else None,
            "ws": _workspace(request).slug,
        },
    )


urlpatterns: list[URLPattern] = [
    path("schema/", schema, name="schema"),
    path("schema/<str:kind>-types/<int:type_id>/accept/", accept_type, name="schema_accept"),
    path("schema/<str:kind>-types/<int:type_id>/retire/", retire_type, name="schema_retire"),
    path("schema/<str:kind>-types/<int:type_id>/rename/", rename_type, name="schema_rename"),
    path("schema/merge/", merge_types, name="schema_merge"),
    path("schema/changes/<int:change_id>/undo/", undo_change, name="schema_undo"),
    path("schema/relation-types/<int:type_id>/domain/", set_domain, name="schema_domain"),
    path("schema/relation-types/<int:type_id>/violations/", violations, name="schema_violations"),
]
