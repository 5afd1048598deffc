"""Reads over the graph beyond single entities: paths, subgraphs, statistics,
hubs, the export, and the explorer's bulk loads. Every handler starts with
`get_workspace_access` (viewers may read all of this), then calls one selector
(knowledge/selectors/) or the export (knowledge/export.py). Neighbourhood, subgraph, path
and the bulk loads answer the same graph payload, so the explorer draws any of them with
the same code.
"""

# No `from __future__ import annotations` here: ninja resolves the parameters of a view
# wrapped by @paginate in the wrapper's module, where string annotations name nothing.
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from ninja import Query, Router

from knowledge.api.params import MAX_PAGE, day_bound
from knowledge.export import export_graph
from knowledge.schemas.graph import (
    BulkGraphIn,
    BulkGraphOut,
    BulkGraphQuery,
    GraphOut,
    HubsOut,
    PathOut,
    StatsOut,
)
from knowledge.selectors.bulk_graph import GraphFilters, get_bulk_graph
from knowledge.selectors.graph import (
    MAX_PATH_HOPS,
    get_hubs,
    get_path,
    get_subgraph,
    get_workspace_stats,
)
from knowledge.selectors.params import MAX_GRAPH_NODES, parse_ids, parse_names
from system.metrics import observe_graph_query
from workspaces.auth import get_workspace_access
from workspaces.models import MAX_ID

router = Router(tags=["knowledge"])
# The operation ids clients generated code from (config/api.py).
OPERATION_ID_PREFIX = "knowledge_graph_api"


@router.get(
    "/workspaces/{slug}/path",
    response=PathOut,
    summary="A shortest path between two entities",
)
def shortest_path(
    request: HttpRequest,
    slug: str,
    from_: Annotated[int, Query(alias="from", ge=1, le=MAX_ID, description="entity id")],
    to: Annotated[int, Query(ge=1, le=MAX_ID, description="entity id")],
    max_hops: Annotated[int, Query(ge=1, le=MAX_PATH_HOPS)] = 4,
    relation_types: Annotated[str | None, Query(description="comma-separated; default any")] = None,
) -> dict[str, Any]:
    """Ignores direction. No path within `max_hops` is an answer, not an error: 200 with
    `found: false`, `length: null` and no nodes. An unknown `from` or `to` is a 404."""
    workspace = get_workspace_access(request, slug).workspace
    return _timed(
        "path",
        lambda: get_path(
            workspace,
            source_id=from_,
            target_id=to,
            max_hops=max_hops,
            relation_types=parse_names(relation_types),
        ),
    )


@router.get(
    "/workspaces/{slug}/subgraph",
    response=GraphOut,
    summary="Given entities and the edges among them",
)
def subgraph(
    request: HttpRequest,
    slug: str,
    ids: Annotated[
        str, Query(description=f"comma-separated entity ids, at most {MAX_GRAPH_NODES}")
    ],
) -> dict[str, Any]:
    """Ids that are not active entities of this workspace are left out, as if missing."""
    workspace = get_workspace_access(request, slug).workspace
    node_ids = parse_ids(ids, label="ids")
    return _timed("subgraph", lambda: get_subgraph(workspace, node_ids))


@router.get("/workspaces/{slug}/stats", response=StatsOut, summary="Graph statistics")
def stats(request: HttpRequest, slug: str) -> dict[str, Any]:
    """Active entities and relations by type, the degree distribution, and the counts of
    what the graph was built from."""
    workspace = get_workspace_access(request, slug).workspace
    return get_workspace_stats(workspace)


@router.get("/workspaces/{slug}/hubs", response=HubsOut, summary="The best-connected entities")
def hubs(
    request: HttpRequest,
    slug: str,
    type: Annotated[str | None, Query(max_length=64, description="entity type name")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
    offset: Annotated[int, Query(ge=0, le=MAX_GRAPH_NODES - 1)] = 0,
) -> dict[str, Any]:
    """Highest degree first (ties: more mentions, then id); offset + limit at most
    2000."""
    workspace = get_workspace_access(request, slug).workspace
    limit = max(1, min(limit, MAX_GRAPH_NODES - offset))
    return get_hubs(workspace, entity_type=type, limit=limit, offset=offset)


_EXPORT_DOC = {
    "responses": {
        "200": {
            "description": "The export, streamed as an attachment",
            "content": {
                "application/json": {},
                "application/graphml+xml": {},
                "text/csv": {},
                "text/plain": {},
            },
        }
    }
}


@router.get(
    "/workspaces/{slug}/export",
    summary="Export the graph: JSON, GraphML, CSV or Cypher (streamed)",
    openapi_extra=_EXPORT_DOC,
)
def export(
    request: HttpRequest,
    slug: str,
    format: Annotated[Literal["json", "graphml", "csv", "cypher"], Query()] = "json",
    part: Annotated[
        Literal["entities", "relations"] | None,
        Query(description="csv only (required there): which table"),
    ] = None,
) -> StreamingHttpResponse:
    """Active entities and the active relations between them. csv is one table per request
    (`part`); list cells (aliases, keywords, source ids) are JSON. cypher is MERGE
    statements for cypher-shell (idempotent)."""
    workspace = get_workspace_access(request, slug).workspace
    result = export_graph(workspace, fmt=format, part=part)
    response = StreamingHttpResponse(result.pieces, content_type=result.content_type)
    response["Content-Disposition"] = f'attachment; filename="{result.filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _timed(query: str, read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The read's answer; its duration goes to the graph latency metric (system/metrics.py)."""
    started = time.perf_counter()
    data = read()
    observe_graph_query(query, time.perf_counter() - started)
    return data


# --- the explorer's bulk loads -------------------------------------------------------------


def _filters(
    *,
    types: list[str] | str | None,
    source: int | None,
    seen_after: str | None,
    seen_before: str | None,
    min_degree: int | None,
) -> GraphFilters:
    if isinstance(types, list):
        types = ",".join(types)
    return GraphFilters(
        types=tuple(parse_names(types) or ()) if types else (),
        source_id=source,
        seen_after=day_bound(seen_after, label="seen_after", end=False),
        seen_before=day_bound(seen_before, label="seen_before", end=True),
        min_degree=min_degree,
    )


def _compact(payload: dict[str, Any]) -> HttpResponse:
    # Compact separators: at thousands of nodes the spaces are a tenth of the bytes. The
    # payload is the selector's own (either format), so it is sent as it is, not validated
    # again.
    return JsonResponse(payload, json_dumps_params={"separators": (",", ":")})


@router.get(
    "/workspaces/{slug}/graph",
    response=BulkGraphOut,
    summary="Bulk graph: the top hubs matching filters, with the edges among them",
)
def bulk_graph(request: HttpRequest, slug: str, params: Query[BulkGraphQuery]) -> HttpResponse:
    """The explorer's first load: the `hubs` best-connected active entities matching the
    filters and the active edges among them; `count` says how many match in all."""
    workspace = get_workspace_access(request, slug).workspace
    filters = _filters(
        types=params.types, source=params.source, seen_after=params.seen_after,
        seen_before=params.seen_before, min_degree=params.min_degree,
    )  # fmt: skip
    columns = params.format == "columns"
    data = _timed(
        "bulk",
        lambda: get_bulk_graph(workspace, hubs=params.hubs, filters=filters, columns=columns),
    )
    return _compact(data)


@router.post(
    "/workspaces/{slug}/graph",
    response=BulkGraphOut,
    summary="Bulk graph: given entities that match filters, with the edges among them",
)
def bulk_graph_of(request: HttpRequest, slug: str, payload: BulkGraphIn) -> HttpResponse:
    """Those of `ids` that are active and match the filters, and the edges among them (only
    those touching `touching` when given); with `edges` false only which ids match. A read,
    posted because thousands of ids do not fit in a URL (session callers send the CSRF
    header like for any POST)."""
    workspace = get_workspace_access(request, slug).workspace
    filters = _filters(
        types=payload.types, source=payload.source, seen_after=payload.seen_after,
        seen_before=payload.seen_before, min_degree=payload.min_degree,
    )  # fmt: skip
    data = _timed(
        "bulk_ids",
        lambda: get_bulk_graph(
            workspace,
            ids=list(dict.fromkeys(payload.ids)),
            touching=payload.touching,
            edges=payload.edges,
            filters=filters,
            columns=payload.format == "columns",
        ),
    )
    return _compact(data)
