"""The explorer's bulk load: thousands of nodes and the edges among them in one payload,
from hubs, a search, ids or a community.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from knowledge.graph import get_graph_backend
from knowledge.graph.base import GraphResult
from knowledge.models import Entity
from knowledge.selectors.entities import search_entities
from knowledge.selectors.graph import graph_out
from workspaces.models import Workspace

# Nodes one bulk load may return (setting EXPLORER_MAX_BULK_NODES, default 50,000). The
# explorer has no cap of its own: it loads more by expanding, and can ask again for more
# hubs; this bounds the work of one request.
MAX_BULK_NODES: int = settings.EXPLORER_MAX_BULK_NODES
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
    columns: bool = False,
) -> dict[str, Any]:
    """The explorer's bulk loads (`GET`/`POST /workspaces/{slug}/graph`): the graph payload
    (nodes, edges among them, truncated) plus `count`; with `columns`, the same graph as
    columns (`graph_columns`), built straight from the backend's answer: at 20,000 nodes
    and 40,000 edges making the objects first would cost most of a second.

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
        matched = {"nodes": [{"id": i} for i in chosen], "edges": [], "truncated": False,
                   "count": len(chosen)}  # fmt: skip
        return graph_columns(matched) if columns else matched
    result = backend.subgraph(workspace_id=workspace.pk, ids=chosen) if chosen else None
    if columns:
        return _result_columns(result or GraphResult(), touching=touching, count=count)
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


def graph_columns(payload: dict[str, Any]) -> dict[str, Any]:
    """The bulk payload as columns (`format=columns`): parallel arrays for the nodes and the
    edges, types as indexes into `types` / `relation_types`, edge ends as indexes into the
    nodes. At 20,000 nodes well under half the bytes of the object shape, and far quicker for
    a browser to parse (no keys repeated per node). The object shape stays the default.

    A column per field the nodes have: the ids-only answer (`edges` false) is one `id`
    column, so the columns decode to exactly the object shape."""
    nodes = payload["nodes"]
    fields = list(nodes[0]) if nodes else ["id"]
    return _as_columns(
        {field: [node[field] for node in nodes] for field in fields},
        [(e["id"], e["source"], e["target"], e["type"], e["weight"]) for e in payload["edges"]],
        count=payload["count"],
        truncated=payload["truncated"],
    )


def _result_columns(
    result: GraphResult, *, touching: list[int] | None, count: int | None
) -> dict[str, Any]:
    """`graph_columns` of the payload `get_bulk_graph` would build from `result`, read from
    the backend's nodes and edges directly."""
    nodes = result.nodes
    found = result.edges
    if touching:
        near = set(touching)
        found = [e for e in found if e.source in near or e.target in near]
    total = len(nodes) if count is None else count
    return _as_columns(
        {
            "id": [n.id for n in nodes],
            "name": [n.name for n in nodes],
            "type": [n.type for n in nodes],
            "degree": [n.degree for n in nodes],
            "mention_count": [n.mention_count for n in nodes],
            "community": [n.community for n in nodes],
        },
        [(e.id, e.source, e.target, e.type, e.weight) for e in found],
        count=total,
        truncated=total > len(nodes),
    )


def _as_columns(
    node_columns: dict[str, list[Any]],
    edges: list[tuple[int, int, int, str, float]],
    *,
    count: int,
    truncated: bool,
) -> dict[str, Any]:
    """The columns envelope: node types and edge types as indexes into `types` /
    `relation_types`, edge ends (entity ids in `edges`) as indexes into the nodes."""
    types: dict[str, int] = {}
    relation_types: dict[str, int] = {}
    if "type" in node_columns:
        node_columns["type"] = _numbered(types, node_columns["type"])
    at = {node_id: i for i, node_id in enumerate(node_columns["id"])}
    edge_columns = {
        "id": [e[0] for e in edges],
        "source": [at[e[1]] for e in edges],
        "target": [at[e[2]] for e in edges],
        "type": _numbered(relation_types, [e[3] for e in edges]),
        "weight": [e[4] for e in edges],
    }
    return {
        "format": "columns",
        "types": list(types),
        "relation_types": list(relation_types),
        "nodes": node_columns,
        "edges": edge_columns,
        "truncated": truncated,
        "count": count,
    }


def _numbered(index: dict[str, int], names: list[str]) -> list[int]:
    """Each name as its number in `index` (new names numbered in first-seen order)."""
    return [index.setdefault(name, len(index)) for name in names]
