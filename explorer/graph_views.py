"""The graph explorer page and the htmx panels of an entity and a relation.

The page itself is a shell: the graph is drawn on a canvas by the ES modules in
static/js/graph/, which read the JSON API for everything: piece by piece (hubs,
neighbourhood, subgraph, path, search) and in bulk (`…/graph`, thousands of nodes at once,
knowledge/api/graph.py). The server's limits reach the modules as data- attributes. The
panels are server-rendered (autoescaped) HTML that the page swaps into its `#panel`
element; opened directly, they are ordinary pages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path, reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from explorer.snippets import highlighted
from explorer.workspace_pages import WorkspaceRequest, workspace_page
from ingest.selectors import get_sources
from knowledge.models import Entity, EntityState
from knowledge.selectors.bulk_graph import DEFAULT_HUBS, MAX_BULK_NODES
from knowledge.selectors.entities import get_entity_detail
from knowledge.selectors.graph import MAX_PATH_HOPS
from knowledge.selectors.params import MAX_GRAPH_NODES
from knowledge.selectors.relations import get_relation_detail, list_relations
from knowledge.selectors.schema import list_entity_types, list_relation_types
from workspaces.errors import NotFound
from workspaces.models import Workspace

# Relations listed in an entity's panel (strongest first), and evidence rows shown.
PANEL_RELATIONS = 120
PANEL_EVIDENCE = 20
# Sources offered by the source filter (newest first).
MAX_SOURCE_CHOICES = 300


# --- the page ---------------------------------------------------------------------------------


@require_GET
@workspace_page()
def explore(request: WorkspaceRequest) -> HttpResponse:
    """The explorer shell; what it shows is in its URL (see static/js/graph/state.js).

    The count of active entities and the map threshold ride along as data attributes, so
    a bare URL decides between the community map and the hubs without a request first."""
    workspace = request.membership.workspace
    # Most used first: the explorer gives colours in this order, so a type keeps its colour.
    entity_types = sorted(
        (t for t in list_entity_types(workspace) if t.entity_count),
        key=lambda t: (-t.entity_count, t.name),
    )
    relation_types = sorted(
        (t for t in list_relation_types(workspace) if t.relation_count),
        key=lambda t: (-t.relation_count, t.name),
    )
    return render(
        request,
        "explorer/graph/explore.html",
        {
            "nav": "explore",
            "workspace": workspace,
            "entity_types": entity_types,
            "relation_types": relation_types,
            "sources": list(get_sources(workspace).only("id", "name")[:MAX_SOURCE_CHOICES]),
            "api_base": f"{reverse('api:api-root')}workspaces/{quote(workspace.slug, safe='')}",
            "default_hubs": DEFAULT_HUBS,
            "max_bulk_nodes": MAX_BULK_NODES,
            "max_ids": MAX_GRAPH_NODES,
            "max_path_hops": MAX_PATH_HOPS,
            "map_above": settings.EXPLORER_MAP_ABOVE,
            "entity_count": Entity.objects.for_workspace(workspace)
            .filter(state=EntityState.ACTIVE)
            .count(),
        },
    )


# --- panels -------------------------------------------------------------------------------------


def document_link(
    workspace: Workspace, document_id: int, start: int | None, end: int | None
) -> str:
    """The document page (sources screens) at the span the evidence points at."""
    query: dict[str, Any] = {"ws": workspace.slug}
    if start is not None and end is not None:
        query = {"start": start, "end": end, **query}
    return f"/documents/{int(document_id)}/?{urlencode(query)}"


def _evidence(workspace: Workspace, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            **row,
            **highlighted(row),
            "link": document_link(
                workspace, row["document"]["id"], row.get("char_start"), row.get("char_end")
            ),
        }
        for row in rows
    ]


def _panel_url(name: str, pk: int, workspace: Workspace) -> str:
    return f"{reverse(name, args=[pk])}?{urlencode({'ws': workspace.slug})}"


def _grouped_relations(workspace: Workspace, entity_id: int) -> tuple[list[dict[str, Any]], int]:
    """The entity's strongest active relations grouped by type (groups in order of their
    strongest relation), each row naming the other end and the direction."""
    relations = list(list_relations(workspace, entity_id=entity_id)[:PANEL_RELATIONS])
    groups: dict[str, list[dict[str, Any]]] = {}
    for relation in relations:
        outgoing = relation.source_id == entity_id
        other = relation.target if outgoing else relation.source
        groups.setdefault(relation.type.name, []).append(
            {
                "id": relation.pk,
                "url": _panel_url("explorer:relation_panel", relation.pk, workspace),
                "direction": "out" if outgoing else "in",
                "weight": relation.weight,
                "other": {
                    "id": other.pk,
                    "name": other.name,
                    "type": other.type.name,
                    "url": _panel_url("explorer:entity_panel", other.pk, workspace),
                },
            }
        )
    return [{"type": name, "relations": rows} for name, rows in groups.items()], len(relations)


def render_entity_panel(
    request: WorkspaceRequest, entity_id: int, *, status: int = 200
) -> HttpResponse:
    """The entity panel of `entity_id` in the current workspace (404 for another
    workspace's or a missing entity): the panel alone for htmx, a page around it
    otherwise. Curation views call it to answer an action with the updated panel."""
    workspace = request.membership.workspace
    try:
        entity = get_entity_detail(workspace, entity_id, evidence_limit=PANEL_EVIDENCE)
    except NotFound as error:
        raise Http404(error.message) from None
    groups, shown = _grouped_relations(workspace, entity["id"])
    total = sum(row["count"] for row in entity["relation_counts"])
    context = {
        "nav": "explore",
        "workspace": workspace,
        "entity": entity,
        "evidence": _evidence(workspace, entity["evidence"]),
        "relation_groups": groups,
        "relations_shown": shown,
        "relations_total": total,
        "merged_into_url": (
            _panel_url("explorer:entity_panel", entity["merged_into"], workspace)
            if entity["merged_into"]
            else ""
        ),
    }
    template = "explorer/graph/entity_panel.html"
    if getattr(request, "htmx", False):
        template += "#panel"
    return render(request, template, context, status=status)


@require_GET
@workspace_page()
def entity_panel(request: WorkspaceRequest, entity_id: int) -> HttpResponse:
    return render_entity_panel(request, entity_id)


@require_GET
@workspace_page()
def relation_panel(request: WorkspaceRequest, relation_id: int) -> HttpResponse:
    """A relation, its two ends (links to their panels) and its evidence."""
    workspace = request.membership.workspace
    try:
        relation = get_relation_detail(workspace, relation_id, evidence_limit=PANEL_EVIDENCE)
    except NotFound as error:
        raise Http404(error.message) from None
    for end in ("source", "target"):
        relation[end]["url"] = _panel_url("explorer:entity_panel", relation[end]["id"], workspace)
    context = {
        "nav": "explore",
        "workspace": workspace,
        "relation": relation,
        "evidence": _evidence(workspace, relation["evidence"]),
    }
    template = "explorer/graph/relation_panel.html"
    if getattr(request, "htmx", False):
        template += "#panel"
    return render(request, template, context)


urlpatterns: list[URLPattern] = [
    path("explore/", explore, name="explore"),
    path("panels/entity/<int:entity_id>/", entity_panel, name="entity_panel"),
    path("panels/relation/<int:relation_id>/", relation_panel, name="relation_panel"),
]
