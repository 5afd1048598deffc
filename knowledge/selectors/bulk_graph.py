"""The explorer's bulk load: thousands of nodes and the edges among them in one payload,
from hubs, a search, ids or a community.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from knowledge.graph import get_graph_backend
from knowledge.models import Entity
from knowledge.selectors.entities import search_entities
from knowledge.selectors.graph import graph_out
from workspaces.models import Workspace

# Nodes one bulk load may return. The explorer has no cap of its own: it loads more by
# expanding, and can ask again for more hubs; this bounds the work of one request.
MAX_BULK_NODES = 20_000
DEFAULT_HUBS = 150


@dataclass(frozen=True, slots=True)
class GraphFilters:
    """What the explorer's server-side filters keep: entities of these types, mentioned by
    this source, seen in this time range, with at least this degree."""

    types: tuple[str, ...] = ()
    source_id: int | None = None
    seen_after: datetime | None = None
    seen_before: datetime | None = None
    min_degree: int | None = None

    def __bool__(self) -> bool:
        return bool(
            self.types or self.source_id or self.seen_after or self.seen_before or self.min_degree
        )


def get_bulk_graph(
    workspace: Workspace,
    *,
    hubs: int | None = None,
    ids: list[int] | None = None,
    touching: list[int] | None = None,
    edges: bool = True,
    filters: GraphFilters | None = None,
) -> dict[str, Any]:
    """The explorer's bulk loads (`GET`/`POST /workspaces/{slug}/graph`): the graph payload
    (nodes, edges among them, truncated) plus `count`.

    With `ids`: those of the given entities that are active and match the filters (count:
    how many); with `touching`, only the edges with an end among those; with `edges` false,
    only which of them match (`{"id"}` nodes, no edges, no traversal). Otherwise the `hubs`
    (default DEFAULT_HUBS) best-connected active entities matching the filters (count: how
    many match in all)."""
    filters = filters or GraphFilters()
    entities = _matching(workspace, filters)
    backend = get_graph_backend()
    if ids is not None:
        chosen = (
            list(entities.filter(pk__in=ids).values_list("pk", flat=True))
            if (filters or not edges) and ids
            else ids
        )
        count = None
    else:
        limit = DEFAULT_HUBS if hubs is None else hubs
        if filters:
            chosen = list(entities.values_list("pk", flat=True)[:limit])
        else:
            chosen = [n.id for n in backend.hubs(workspace_id=workspace.pk, limit=limit)]
        count = entities.count() if len(chosen) >= limit else len(chosen)
    if not edges:
        return {"nodes": [{"id": i} for i in chosen], "edges": [], "truncated": False,
                "count": len(chosen)}  # fmt: skip
    result = backend.subgraph(workspace_id=workspace.pk, ids=chosen) if chosen else None
    payload = graph_out(result) if result is not None else {"nodes": [], "edges": []}
    if touching:
        near = set(touching)
        payload["edges"] = [
            e for e in payload["edges"] if e["source"] in near or e["target"] in near
        ]
    for node in payload["nodes"]:
        node.pop("depth", None)  # always null here; the client reads a missing key alike
    payload["count"] = len(payload["nodes"]) if count is None else count
    payload["truncated"] = payload["count"] > len(payload["nodes"])
    return payload


def _matching(workspace: Workspace, filters: GraphFilters) -> QuerySet[Entity]:
    entities = search_entities(
        workspace,
        source_id=filters.source_id,
        seen_after=filters.seen_after,
        seen_before=filters.seen_before,
        min_degree=filters.min_degree,
        order="-degree",
    )
    return entities.filter(type__name__in=filters.types) if filters.types else entities
