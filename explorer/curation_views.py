"""Curation in the browser's graph screen: the entity panel's editing controls, and the
relation panel's (delete, retype, reverse, describe, undo; "add a relation" sits with the
entity's). The review page of merge suggestions is review_views.

Editors only. Every view here is `workspace_page(role=Role.EDITOR)`, so a viewer's request
is refused with 403 whatever a page showed them (and the templates show them nothing).

Each control of the entity panel posts to its own endpoint, which calls exactly one
curation action (knowledge/actions/curation/) and answers with the refreshed entity
panel (`explorer.graph_views.render_entity_panel`) and an `HX-Trigger:
graphloom:graph-changed` header, so the graph page redraws what changed. The panel belongs
to the graph screen; the controls inside it are ours, and two things let them live there
without the graph screen knowing anything about curation:

- when the graph screen opens a panel, the controls load themselves from
  `curation_controls` (one htmx request, made only for editors);
- when one of our actions re-renders the panel, the controls' context and the outcome
  (its message, which control it belongs to, the undo button) ride on the request as
  `request.curation_panel`, and the include renders the controls from it in place.

A domain error (an empty name, a merge of an entity with itself, a name another entity
has) is shown in the panel next to the control that caused it, and the graph is not told
to refresh; an htmx request gets it with 200, any other client with the error's own
status (explorer/curation_outcome.py says why).

The history lists of both panels offer an Undo on every decision that still stands
(`undo_event`, and the relation panel's `relation_undo`, both through
knowledge/actions/curation/undo.py); a refusal names the later decision in the way.

The relation panel's controls work the same way (`relation_controls`, and
`request.curation_relation` when an action re-renders the relation panel); each relation
action (knowledge/actions/curation/relations.py) answers with an Undo button for its event.

Every URL the controls post to carries `?ws=` of the workspace the panel was drawn for:
entity ids belong to one workspace, and a panel left open in a tab must keep acting on it
after another tab switched the session to another workspace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path, reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from explorer.curation_outcome import Outcome, answer_status, graph_changed, posted_id
from explorer.graph_views import PANEL_EVIDENCE, document_link, render_entity_panel
from explorer.snippets import highlighted
from explorer.workspace_pages import WorkspaceRequest, workspace_page
from knowledge.actions.curation.entities import (
    do_add_alias,
    do_delete_entity,
    do_remove_alias,
    do_rename_entity,
    do_restore_entity,
    do_retype_entity,
    do_split_entity,
)
from knowledge.actions.curation.merge import do_merge_entities, do_unmerge
from knowledge.actions.curation.relations import (
    RELATION_ACTIONS,
    do_add_relation,
    do_delete_relation,
    do_edit_relation,
    do_retype_relation,
    do_reverse_relation,
)
from knowledge.actions.curation.undo import do_undo_event, is_undoable
from knowledge.models import CurationAction, CurationEvent, Entity, EntityState
from knowledge.selectors.curation import (
    find_merge_event,
    list_curation_events,
)
from knowledge.selectors.entities import (
    NameMatch,
    get_entity_detail,
    get_entity_with_type,
    search_entities,
)
from knowledge.selectors.relations import get_relation_detail
from knowledge.selectors.schema import get_schema_snapshot
from workspaces.errors import DomainError, NotFound
from workspaces.models import Role, Workspace

HISTORY_LIMIT = 15
SPLIT_CHOICES = 20  # the newest mentions offered for a split
TYPEAHEAD_LIMIT = 8


@dataclass
class Change:
    """A successful action's effect on the graph page: the entity to show next, the
    entities gone from the graph, and the event (its summary becomes the message)."""

    event: CurationEvent
    shown: int
    focus: int | None
    removed: list[int] = field(default_factory=list)
    undo_event: int | None = None
    undo_kind: str = "merge"


def _workspace(request: WorkspaceRequest) -> Workspace:
    return request.membership.workspace


def _entity_or_404(workspace: Workspace, entity_id: int) -> Entity:
    try:
        return get_entity_with_type(workspace, entity_id)
    except NotFound as exc:
        raise Http404(exc.message) from None


def _highlighted(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, **highlighted(item)}


# --- The entity panel's controls ---------------------------------------------------------


def controls_context(
    request: WorkspaceRequest,
    entity_id: int,
    *,
    outcome: Outcome | None = None,
    values: dict[str, Any] | None = None,
    confirm_delete: bool = False,
) -> dict[str, Any]:
    """Everything the controls show for one entity: its detail, the types it may take, its
    history (with what each event's undo button calls), and the last outcome."""
    workspace = _workspace(request)
    detail = get_entity_detail(workspace, entity_id, evidence_limit=SPLIT_CHOICES)
    types = [name for name, _ in get_schema_snapshot(workspace).entity_types]
    if detail["type"] not in types:
        types = sorted([*types, detail["type"]])
    events = []
    for event in list_curation_events(workspace, entity_id=entity_id)[:HISTORY_LIMIT]:
        undo = None
        if not event.undone_by_id:
            if event.action in {CurationAction.MERGE, CurationAction.AUTO_MERGE}:
                undo = "unmerge"
            elif event.action == CurationAction.DELETE and detail["state"] == EntityState.DELETED:
                undo = "restore"
            elif event.action != CurationAction.DELETE and is_undoable(event):
                undo = "event"
        events.append({"event": event, "undo": undo})
    merged_by = None
    if detail["state"] == EntityState.MERGED:
        # The merge that absorbed it, and the entity it went into (named as it is now).
        try:
            absorbing = find_merge_event(workspace, get_entity_with_type(workspace, entity_id))
            survivor = get_entity_with_type(workspace, detail["merged_into"])
        except NotFound:
            pass
        else:
            merged_by = {"event_id": absorbing.pk, "survivor": survivor}
    return {
        "entity": detail,
        "types": types,
        "relation_types": [name for name, _ in get_schema_snapshot(workspace).relation_types],
        "events": events,
        "merged_by": merged_by,
        "relations": sum(row["count"] for row in detail["relation_counts"]),
        "split_choices": [_highlighted(item) for item in detail["evidence"]],
        "outcome": outcome,
        "values": values or {},
        "confirm_delete": confirm_delete,
        "ws": _workspace(request).slug,
    }


def _panel(
    request: WorkspaceRequest,
    entity_id: int,
    *,
    outcome: Outcome | None = None,
    values: dict[str, Any] | None = None,
    change: Change | None = None,
) -> HttpResponse:
    """The refreshed entity panel with the controls (and `outcome`) in it."""
    request.curation_panel = controls_context(request, entity_id, outcome=outcome, values=values)
    response = render_entity_panel(request, entity_id, status=answer_status(request, outcome))
    if change is not None:
        response["HX-Trigger"] = graph_changed(change.focus, change.removed)
    return response


def _perform(
    request: WorkspaceRequest,
    entity_id: int,
    control: str,
    act: Callable[[Workspace, Any], Change],
    *,
    values: dict[str, Any] | None = None,
) -> HttpResponse:
    """Run one action for the panel of `entity_id` (404 if the workspace has no such
    entity) and answer with the panel: the shown entity and the event's summary, or the
    error next to `control`."""
    workspace = _workspace(request)
    _entity_or_404(workspace, entity_id)
    try:
        change = act(workspace, request.user)
    except DomainError as exc:
        outcome = Outcome(control, exc.message, error=True, status=exc.status)
        return _panel(request, entity_id, outcome=outcome, values=values)
    outcome = Outcome(
        control, change.event.summary, undo_event=change.undo_event, undo_kind=change.undo_kind
    )
    return _panel(request, change.shown, outcome=outcome, change=change)


@workspace_page(role=Role.EDITOR)
@require_GET
def controls(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """The controls alone: loaded by the panel the graph screen opens, and "Cancel"."""
    _entity_or_404(_workspace(request), entity_id)
    return render(
        request,
        "explorer/curation/_controls.html",
        {"curation": controls_context(request, entity_id)},
    )


@workspace_page(role=Role.EDITOR)
@require_GET
def merge_targets(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """The typeahead of the merge and add-a-relation controls (`for=relation`): active
    entities any word of whose name or aliases
    starts like `q` (one typo forgiven; best matches first, then the most connected), or,
    when none does, that contain it; this one left out."""
    workspace = _workspace(request)
    entity = _entity_or_404(workspace, entity_id)
    q = request.GET.get("q", "").strip()[:300]
    targets: list[Entity] = []
    if q:
        matches: tuple[NameMatch, ...] = ("words", "contains")
        for match in matches:
            found = search_entities(workspace, q=q, match=match).exclude(pk=entity.pk)
            targets = list(found[:TYPEAHEAD_LIMIT])
            if targets:
                break
    return render(
        request,
        "explorer/curation/_merge_targets.html",
        {"q": q, "targets": targets, "entity": entity, "purpose": request.GET.get("for", "")},
    )


@workspace_page(role=Role.EDITOR)
@require_POST
def rename(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    name = request.POST.get("name", "")

    def act(workspace: Workspace, actor: Any) -> Change:
        event = do_rename_entity(workspace=workspace, entity_id=entity_id, name=name, actor=actor)
        return Change(event, shown=entity_id, focus=entity_id)

    return _perform(request, entity_id, "rename", act, values={"name": name})


@workspace_page(role=Role.EDITOR)
@require_POST
def retype(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    type_name = request.POST.get("type", "")

    def act(workspace: Workspace, actor: Any) -> Change:
        event = do_retype_entity(
            workspace=workspace, entity_id=entity_id, type_name=type_name, actor=actor
        )
        return Change(event, shown=entity_id, focus=entity_id)

    return _perform(request, entity_id, "retype", act, values={"type": type_name})


@workspace_page(role=Role.EDITOR)
@require_POST
def alias_add(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    name = request.POST.get("alias", "")

    def act(workspace: Workspace, actor: Any) -> Change:
        event = do_add_alias(workspace=workspace, entity_id=entity_id, name=name, actor=actor)
        return Change(event, shown=entity_id, focus=entity_id)

    return _perform(request, entity_id, "aliases", act, values={"alias": name})


@workspace_page(role=Role.EDITOR)
@require_POST
def alias_remove(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    name = request.POST.get("alias", "")

    def act(workspace: Workspace, actor: Any) -> Change:
        event = do_remove_alias(workspace=workspace, entity_id=entity_id, name=name, actor=actor)
        return Change(event, shown=entity_id, focus=entity_id)

    return _perform(request, entity_id, "aliases", act)


@workspace_page(role=Role.EDITOR)
@require_POST
def merge(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """Merge this entity and the one chosen in the typeahead; `keep` says which stays
    ("this" by default, or "target"). The panel then shows the one that stayed."""
    keep = request.POST.get("keep", "this")

    def act(workspace: Workspace, actor: Any) -> Change:
        target = posted_id(request, "target", "Choose the entity to merge with.")
        survivor, other = (target, entity_id) if keep == "target" else (entity_id, target)
        event = do_merge_entities(
            workspace=workspace, survivor_id=survivor, merged_ids=[other], actor=actor
        )
        merged = [m["id"] for m in event.payload["merged"]]
        return Change(event, shown=survivor, focus=survivor, removed=merged, undo_event=event.pk)

    return _perform(request, entity_id, "merge", act, values={"keep": keep})


@workspace_page(role=Role.EDITOR)
@require_POST
def unmerge(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """Undo a merge named by its event (from the history, or the "Undo merge" button)."""

    def act(workspace: Workspace, actor: Any) -> Change:
        event_id = posted_id(request, "event", "Say which merge to undo.")
        event = do_unmerge(workspace=workspace, event_id=event_id, actor=actor)
        return Change(event, shown=entity_id, focus=entity_id)

    return _perform(request, entity_id, "history", act)


@workspace_page(role=Role.EDITOR)
@require_POST
def undo_event(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """The history's Undo of any other decision about the entity
    (knowledge/actions/curation/undo.py): refused next to the history, naming the later
    event that still stands on it."""

    def act(workspace: Workspace, actor: Any) -> Change:
        event_id = posted_id(request, "event", "Say which change to undo.")
        event = do_undo_event(workspace=workspace, event_id=event_id, actor=actor)
        return Change(event, shown=entity_id, focus=entity_id)

    return _perform(request, entity_id, "history", act)


@workspace_page(role=Role.EDITOR)
@require_http_methods(["GET", "POST"])
def delete(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """GET asks (the controls with a confirmation in place of the delete button); POST
    deletes, as Django's admin does."""
    workspace = _workspace(request)
    if request.method == "GET":
        _entity_or_404(workspace, entity_id)
        context = controls_context(request, entity_id, confirm_delete=True)
        return render(request, "explorer/curation/_controls.html", {"curation": context})

    def act(workspace: Workspace, actor: Any) -> Change:
        event = do_delete_entity(workspace=workspace, entity_id=entity_id, actor=actor)
        return Change(event, shown=entity_id, focus=None, removed=[entity_id])

    return _perform(request, entity_id, "delete", act)


@workspace_page(role=Role.EDITOR)
@require_POST
def restore(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    def act(workspace: Workspace, actor: Any) -> Change:
        event = do_restore_entity(workspace=workspace, entity_id=entity_id, actor=actor)
        return Change(event, shown=entity_id, focus=entity_id)

    return _perform(request, entity_id, "restore", act)


@workspace_page(role=Role.EDITOR)
@require_POST
def split(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """Move the chosen mentions to a new entity; the panel stays on this one (the message
    names the new one, and the graph page is told to redraw)."""
    name = request.POST.get("name", "")
    type_name = request.POST.get("type", "") or None
    try:
        mention_ids = [int(value) for value in request.POST.getlist("mention")]
    except ValueError:
        mention_ids = []

    def act(workspace: Workspace, actor: Any) -> Change:
        event = do_split_entity(
            workspace=workspace,
            entity_id=entity_id,
            mention_ids=mention_ids,
            name=name,
            type_name=type_name,
            actor=actor,
        )
        return Change(event, shown=entity_id, focus=entity_id)

    values = {"name": name, "type": type_name, "mentions": mention_ids}
    return _perform(request, entity_id, "split", act, values=values)


@workspace_page(role=Role.EDITOR)
@require_POST
def relation_add(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """Add a relation by hand between this entity and the one chosen in the typeahead
    (`direction` "out": this one is the source, "in": the target)."""
    post = request.POST
    values = {key: post.get(key, "") for key in ("type", "direction", "description", "reason")}

    def act(workspace: Workspace, actor: Any) -> Change:
        other = posted_id(request, "target", "Choose the other entity.")
        ends = (other, entity_id) if values["direction"] == "in" else (entity_id, other)
        event = do_add_relation(
            workspace=workspace, source_id=ends[0], target_id=ends[1],
            type_name=values["type"], description=values["description"],
            reason=values["reason"], actor=actor,
        )  # fmt: skip
        return Change(
            event, shown=entity_id, focus=entity_id, undo_event=event.pk, undo_kind="relation"
        )

    return _perform(request, entity_id, "relation_add", act, values=values)


@workspace_page(role=Role.EDITOR)
@require_POST
def relation_undo_for_entity(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    """The entity panel's Undo of a relation it added."""

    def act(workspace: Workspace, actor: Any) -> Change:
        event_id = posted_id(request, "event", "Say which change to undo.")
        event = do_undo_event(workspace=workspace, event_id=event_id, actor=actor)
        return Change(event, shown=entity_id, focus=entity_id)

    return _perform(request, entity_id, "relation_add", act)


# --- The relation panel's controls -------------------------------------------------------


def relation_controls_context(
    request: WorkspaceRequest, relation: dict[str, Any], *, outcome: Outcome | None = None,
    values: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """What the relation controls show: the relation, the types it may take, its history
    (each change that still stands with its Undo), and the last outcome."""
    workspace = _workspace(request)
    types = [name for name, _ in get_schema_snapshot(workspace).relation_types]
    if relation["type"] not in types:
        types = sorted([*types, relation["type"]])
    events = list(list_curation_events(workspace, relation_id=relation["id"])[:HISTORY_LIMIT])
    # Every change that still stands has its Undo; one a later change rests on is refused
    # with that change named.
    return {
        "relation": relation,
        "types": types,
        "events": [
            {"event": e, "undo": e.action in RELATION_ACTIONS and is_undoable(e)} for e in events
        ],
        "outcome": outcome,
        "values": values or {},
        "ws": workspace.slug,
    }


def _relation_or_404(workspace: Workspace, relation_id: int) -> dict[str, Any]:
    try:
        return get_relation_detail(workspace, relation_id, evidence_limit=PANEL_EVIDENCE)
    except NotFound as exc:
        raise Http404(exc.message) from None


def _entity_url(workspace: Workspace, entity_id: int) -> str:
    query = urlencode({"ws": workspace.slug})
    return f"{reverse('explorer:entity_panel', args=[entity_id])}?{query}"


def _relation_panel(
    request: WorkspaceRequest,
    relation_id: int,
    *,
    outcome: Outcome | None = None,
    values: dict[str, Any] | None = None,
) -> HttpResponse:
    """The relation panel (as the graph screen draws it) with the controls in it."""
    workspace = _workspace(request)
    relation = _relation_or_404(workspace, relation_id)
    for end in ("source", "target"):
        relation[end]["url"] = _entity_url(workspace, relation[end]["id"])
    evidence = [
        {**row, **highlighted(row),
         "link": document_link(workspace, row["document"]["id"], row.get("char_start"),
                               row.get("char_end"))}
        for row in relation["evidence"]
    ]  # fmt: skip
    request.curation_relation = relation_controls_context(
        request, relation, outcome=outcome, values=values
    )
    template = "explorer/graph/relation_panel.html"
    if getattr(request, "htmx", False):
        template += "#panel"
    context = {"nav": "explore", "workspace": workspace, "relation": relation,
               "evidence": evidence}  # fmt: skip
    return render(request, template, context, status=answer_status(request, outcome))


def _perform_on_relation(
    request: WorkspaceRequest,
    relation_id: int,
    control: str,
    act: Callable[[Workspace, Any], CurationEvent],
    *,
    values: dict[str, Any] | None = None,
) -> HttpResponse:
    """Run one relation action (404 if the workspace has no such relation) and answer
    with the relation panel: the event's summary and its Undo, or the error next to
    `control`. An undo that removed a hand-made relation answers with its source's panel."""
    workspace = _workspace(request)
    before = _relation_or_404(workspace, relation_id)
    try:
        event = act(workspace, request.user)
    except DomainError as exc:
        outcome = Outcome(control, exc.message, error=True, status=exc.status)
        return _relation_panel(request, relation_id, outcome=outcome, values=values)
    undo = event.pk if event.action in RELATION_ACTIONS else None
    outcome = Outcome(control, event.summary, undo_event=undo, undo_kind="relation")
    if event.relation_id is None:
        response = _panel(request, before["source"]["id"], outcome=outcome)
    else:
        response = _relation_panel(request, relation_id, outcome=outcome)
    # The graph page re-reads the edges among what it shows (deleted, retyped, reversed).
    response["HX-Trigger"] = graph_changed(before["source"]["id"], [])
    return response


@workspace_page(role=Role.EDITOR)
@require_GET
def relation_controls(request: WorkspaceRequest, relation_id: int) -> HttpResponse:
    """The controls alone: loaded by the relation panel the graph screen opens."""
    relation = _relation_or_404(_workspace(request), relation_id)
    return render(
        request,
        "explorer/curation/_relation_controls.html",
        {"curation": relation_controls_context(request, relation)},
    )


@workspace_page(role=Role.EDITOR)
@require_POST
def relation_delete(request: WorkspaceRequest, relation_id: int) -> HttpResponse:
    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        return do_delete_relation(workspace=workspace, relation_id=relation_id, actor=actor)

    return _perform_on_relation(request, relation_id, "delete", act)


@workspace_page(role=Role.EDITOR)
@require_POST
def relation_retype(request: WorkspaceRequest, relation_id: int) -> HttpResponse:
    type_name = request.POST.get("type", "")

    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        return do_retype_relation(
            workspace=workspace, relation_id=relation_id, type_name=type_name, actor=actor
        )

    return _perform_on_relation(request, relation_id, "retype", act, values={"type": type_name})


@workspace_page(role=Role.EDITOR)
@require_POST
def relation_reverse(request: WorkspaceRequest, relation_id: int) -> HttpResponse:
    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        return do_reverse_relation(workspace=workspace, relation_id=relation_id, actor=actor)

    return _perform_on_relation(request, relation_id, "reverse", act)


@workspace_page(role=Role.EDITOR)
@require_POST
def relation_edit(request: WorkspaceRequest, relation_id: int) -> HttpResponse:
    description = request.POST.get("description", "")

    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        return do_edit_relation(
            workspace=workspace, relation_id=relation_id, description=description, actor=actor
        )

    values = {"description": description}
    return _perform_on_relation(request, relation_id, "describe", act, values=values)


@workspace_page(role=Role.EDITOR)
@require_POST
def relation_undo(request: WorkspaceRequest, relation_id: int) -> HttpResponse:
    def act(workspace: Workspace, actor: Any) -> CurationEvent:
        event_id = posted_id(request, "event", "Say which change to undo.")
        return do_undo_event(workspace=workspace, event_id=event_id, actor=actor)

    return _perform_on_relation(request, relation_id, "history", act)


def _entity_path(action: str, view: Callable[..., HttpResponse], route: str = "") -> URLPattern:
    return path(
        f"curation/entities/<int:entity_id>/{route or action}/", view, name=f"curation_{action}"
    )


def _relation_path(action: str, view: Callable[..., HttpResponse]) -> URLPattern:
    return path(
        f"curation/relations/<int:relation_id>/{action}/", view, name=f"curation_relation_{action}"
    )


urlpatterns: list[URLPattern] = [
    path("curation/entities/<int:entity_id>/", controls, name="curation_controls"),
    _entity_path("merge_targets", merge_targets, "merge-targets"),
    _entity_path("rename", rename),
    _entity_path("retype", retype),
    _entity_path("alias_add", alias_add, "alias-add"),
    _entity_path("alias_remove", alias_remove, "alias-remove"),
    _entity_path("merge", merge),
    _entity_path("unmerge", unmerge),
    _entity_path("undo", undo_event),
    _entity_path("delete", delete),
    _entity_path("restore", restore),
    _entity_path("split", split),
    _entity_path("relation_add", relation_add, "relation-add"),
    _entity_path("relation_add_undo", relation_undo_for_entity, "relation-undo"),
    path(
        "curation/relations/<int:relation_id>/",
        relation_controls,
        name="curation_relation_controls",
    ),
    _relation_path("delete", relation_delete),
    _relation_path("retype", relation_retype),
    _relation_path("reverse", relation_reverse),
    _relation_path("describe", relation_edit),
    _relation_path("undo", relation_undo),
]
