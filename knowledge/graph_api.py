"""Read endpoints over the graph: entities, relations, neighbourhoods, paths, subgraphs,
hubs, stats and export. Registered on knowledge's router (knowledge/api.py), so a path
shared with a curation endpoint (GET and PATCH entities/{id}) is one route.

Every handler starts with `get_workspace_access` (viewers may read all of this), then
calls one selector (knowledge/selectors/) or the export (knowledge/export.py).
Neighbourhood, subgraph and path answer the same graph payload so the explorer can draw
any of them with the same code.
"""

# No `from __future__ import annotations` here: ninja resolves the parameters of a view
# wrapped by @paginate in the wrapper's module, where string annotations name nothing.
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Field, Query
from ninja.pagination import LimitOffsetPagination, paginate

from knowledge.api import router
from knowledge.export import export_graph
from knowledge.graph.base import MAX_HOPS
from knowledge.graph_schemas import (
    EntityDetailOut,
    EntityListOut,
    GraphOut,
    HubsOut,
    PathOut,
    RelationDetailOut,
    RelationOut,
    StatsOut,
)
from knowledge.selectors.entities import (
    MAX_EVIDENCE,
    EntityOrder,
    NameMatch,
    get_entity_detail,
    search_entities,
)
from knowledge.selectors.graph import (
    MAX_PATH_HOPS,
    get_hubs,
    get_neighborhood,
    get_path,
    get_subgraph,
    get_workspace_stats,
)
from knowledge.selectors.params import MAX_GRAPH_NODES, parse_ids, parse_names
from knowledge.selectors.relations import get_relation_detail, list_relations
from workspaces.auth import get_workspace_access
from workspaces.errors import InvalidInput

__all__ = ["router"]

# Ids beyond PostgreSQL's bigint are refused as invalid input rather than sent to it.
MAX_ID = 2**63 - 1
MAX_PAGE = 500
StateFilter = Literal["active", "merged", "deleted"]


class Pagination(LimitOffsetPagination):
    """limit 1..500 (default 100), offset from 0; answers {"items": [...], "count": n}."""

    class Input(LimitOffsetPagination.Input):
        limit: int = Field(100, ge=1, le=MAX_PAGE)
        offset: int = Field(0, ge=0, le=MAX_ID)


def _utc(value: datetime | None, *, label: str) -> datetime | None:
    """In UTC (naive means UTC): any offset ISO 8601 allows then reaches the database as
    one it accepts (PostgreSQL refuses offsets beyond ±15:59)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(f"{label}: out of range.") from None


@router.get(
    "/workspaces/{slug}/entities",
    response=list[EntityListOut],
    summary="Entities: search by name or alias, filter by type, source, time and degree",
)
@paginate(Pagination)
def list_entities(
    request: HttpRequest,
    slug: str,
    q: Annotated[str | None, Query(max_length=300, description="name or alias")] = None,
    match: Annotated[
        NameMatch,
        Query(
            description="prefix: names or aliases starting with q, ignoring case, accents and "
            "punctuation (indexed); contains: q anywhere in a name or alias, ignoring case"
        ),
    ] = "prefix",
    type: Annotated[str | None, Query(max_length=64, description="entity type name")] = None,
    source: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="mentioned by this source")
    ] = None,
    seen_after: Annotated[datetime | None, Query(description="last seen at or after")] = None,
    seen_before: Annotated[datetime | None, Query(description="first seen at or before")] = None,
    min_degree: Annotated[int | None, Query(ge=0, le=1_000_000_000)] = None,
    state: Annotated[StateFilter, Query()] = "active",
    order: Annotated[
        EntityOrder, Query(description="name | -degree | -mention_count | ...")
    ] = "name",
) -> QuerySet[Any]:
    workspace = get_workspace_access(request, slug).workspace
    return search_entities(
        workspace,
        q=q,
        match=match,
        entity_type=type,
        source_id=source,
        seen_after=_utc(seen_after, label="seen_after"),
        seen_before=_utc(seen_before, label="seen_before"),
        min_degree=min_degree,
        state=state,
        order=order,
    )


@router.get(
    "/workspaces/{slug}/entities/{entity_id}",
    response=EntityDetailOut,
    summary="One entity: aliases, types, counts, sources, relation counts, evidence",
)
def get_entity(
    request: HttpRequest,
    slug: str,
    entity_id: int,
    evidence_limit: Annotated[int, Query(ge=0, le=MAX_EVIDENCE)] = 20,
) -> dict[str, Any]:
    """Merged and deleted entities answer too (`state`, `merged_into`), so an old link can
    be followed to the survivor. `evidence`: the newest mentions with the text around
    each (document offsets, so `snippet_start` places the snippet in the document)."""
    workspace = get_workspace_access(request, slug).workspace
    return get_entity_detail(workspace, entity_id, evidence_limit=evidence_limit)


@router.get(
    "/workspaces/{slug}/entities/{entity_id}/neighborhood",
    response=GraphOut,
    summary="The entity and what lies within a few hops of it",
)
def entity_neighborhood(
    request: HttpRequest,
    slug: str,
    entity_id: int,
    hops: Annotated[int, Query(ge=1, le=MAX_HOPS)] = 1,
    relation_types: Annotated[str | None, Query(description="comma-separated; default any")] = None,
    entity_types: Annotated[
        str | None,
        Query(description="comma-separated; filters the nodes reached (the entity stays)"),
    ] = None,
    direction: Annotated[Literal["out", "in", "both"], Query()] = "both",
    limit: Annotated[int, Query(ge=1, le=MAX_GRAPH_NODES, description="most nodes returned")] = 500,
) -> dict[str, Any]:
    """Nodes nearest first (`depth` = hops from the entity); `truncated` when `limit` cut
    it. A merged or deleted entity has no neighbourhood (empty nodes)."""
    workspace = get_workspace_access(request, slug).workspace
    return get_neighborhood(
        workspace,
        entity_id,
        hops=hops,
        relation_types=parse_names(relation_types),
        entity_types=parse_names(entity_types),
        direction=direction,
        limit=limit,
    )


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
    return get_path(
        workspace,
        source_id=from_,
        target_id=to,
        max_hops=max_hops,
        relation_types=parse_names(relation_types),
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
    return get_subgraph(workspace, parse_ids(ids, label="ids"))


@router.get(
    "/workspaces/{slug}/relations",
    response=list[RelationOut],
    summary="Relations: filter by source, target, either end, type",
)
@paginate(Pagination)
def relations(
    request: HttpRequest,
    slug: str,
    source: Annotated[int | None, Query(ge=1, le=MAX_ID, description="source entity id")] = None,
    target: Annotated[int | None, Query(ge=1, le=MAX_ID, description="target entity id")] = None,
    entity: Annotated[int | None, Query(ge=1, le=MAX_ID, description="either end")] = None,
    type: Annotated[str | None, Query(max_length=64, description="relation type name")] = None,
    state: Annotated[StateFilter, Query()] = "active",
) -> QuerySet[Any]:
    """Strongest (highest weight) first."""
    workspace = get_workspace_access(request, slug).workspace
    return list_relations(
        workspace,
        source_id=source,
        target_id=target,
        entity_id=entity,
        relation_type=type,
        state=state,
    )


@router.get(
    "/workspaces/{slug}/relations/{relation_id}",
    response=RelationDetailOut,
    summary="One relation and its evidence",
)
def get_relation(
    request: HttpRequest,
    slug: str,
    relation_id: int,
    evidence_limit: Annotated[int, Query(ge=0, le=MAX_EVIDENCE)] = 20,
) -> dict[str, Any]:
    """Each evidence row: its chunk and document, the sentence span (document offsets) and
    the sentence, the extractor's description and strength (0..10)."""
    workspace = get_workspace_access(request, slug).workspace
    return get_relation_detail(workspace, relation_id, evidence_limit=evidence_limit)


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
