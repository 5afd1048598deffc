"""Graph queries through the backend (knowledge/graph/): neighbourhoods, paths, subgraphs,
hubs and statistics. The backend answers from whatever store it keeps; this module only
checks that the ids asked about belong to the workspace and shapes the answer.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ingest.models import Chunk, Document, Source
from knowledge.graph import get_graph_backend
from knowledge.graph.base import MAX_HOPS, Direction, GraphResult, PathResult
from knowledge.models import Entity, EntityState, Mention, RelationEvidence
from knowledge.selectors.entities import get_orphan_entities
from knowledge.selectors.params import MAX_GRAPH_NODES
from workspaces.errors import InvalidInput, NotFound
from workspaces.models import Workspace
from workspaces.selectors import get_object_for_workspace

MAX_PATH_HOPS = 6


def graph_out(result: GraphResult) -> dict[str, Any]:
    return {
        "nodes": [asdict(node) for node in result.nodes],
        "edges": [asdict(edge) for edge in result.edges],
        "truncated": result.truncated,
    }


def path_out(result: PathResult | None) -> dict[str, Any]:
    if result is None:
        return {"nodes": [], "edges": [], "truncated": False, "found": False, "length": None}
    return {
        "nodes": [asdict(node) for node in result.nodes],
        "edges": [asdict(edge) for edge in result.edges],
        "truncated": False,
        "found": True,
        "length": result.length,
    }


def get_neighborhood(
    workspace: Workspace,
    entity_id: object,
    *,
    hops: int = 1,
    relation_types: list[str] | None = None,
    entity_types: list[str] | None = None,
    direction: Direction = "both",
    limit: int = 500,
) -> dict[str, Any]:
    """The graph payload around one entity of the workspace (404 for anyone else's)."""
    entity = get_object_for_workspace(
        Entity.objects.only("id"), workspace, entity_id, label="Entity"
    )
    if not 1 <= hops <= MAX_HOPS:
        raise InvalidInput(f"hops: 1 to {MAX_HOPS}.")
    result = get_graph_backend().neighborhood(
        workspace_id=workspace.pk,
        seeds=[entity.pk],
        hops=hops,
        relation_types=relation_types,
        entity_types=entity_types,
        direction=direction,
        limit=max(1, min(limit, MAX_GRAPH_NODES)),
    )
    return graph_out(result)


def get_path(
    workspace: Workspace,
    *,
    source_id: int,
    target_id: int,
    max_hops: int = 4,
    relation_types: list[str] | None = None,
) -> dict[str, Any]:
    """A shortest path between two entities of the workspace; `found` false when there is
    none within `max_hops` (an answer, not an error). Either end missing: NotFound."""
    ends = {
        e.pk
        for e in Entity.objects.for_workspace(workspace)
        .filter(pk__in=[source_id, target_id])
        .only("id")
    }
    for label, pk in (("from", source_id), ("to", target_id)):
        if pk not in ends:
            raise NotFound(f"Entity {pk} ({label}) not found.")
    result = get_graph_backend().shortest_path(
        workspace_id=workspace.pk,
        source=source_id,
        target=target_id,
        max_hops=max(1, min(max_hops, MAX_PATH_HOPS)),
        relation_types=relation_types,
    )
    return path_out(result)


def get_subgraph(workspace: Workspace, ids: list[int]) -> dict[str, Any]:
    """The given entities (those active in the workspace; others are left out, as if
    missing) and the active edges among them."""
    if len(ids) > MAX_GRAPH_NODES:
        raise InvalidInput(f"ids: at most {MAX_GRAPH_NODES}.")
    if not ids:
        return graph_out(GraphResult())
    return graph_out(get_graph_backend().subgraph(workspace_id=workspace.pk, ids=ids))


def get_hubs(
    workspace: Workspace, *, entity_type: str | None = None, limit: int = 20, offset: int = 0
) -> dict[str, Any]:
    """The best-connected entities, highest degree first, a page of them; `count` is every
    active entity of the type (so a client knows how far it may page)."""
    nodes = get_graph_backend().hubs(
        workspace_id=workspace.pk, entity_type=entity_type or None, limit=offset + limit
    )
    entities = Entity.objects.for_workspace(workspace).filter(state=EntityState.ACTIVE)
    if entity_type:
        entities = entities.filter(type__name=entity_type)
    return {
        "items": [asdict(node) for node in nodes[offset : offset + limit]],
        "count": entities.count(),
    }


def get_workspace_stats(workspace: Workspace) -> dict[str, Any]:
    """The backend's graph statistics and the counts of what the graph was built from."""
    backend = get_graph_backend()
    stats = backend.stats(workspace_id=workspace.pk)
    counts = {
        "sources": Source.objects.for_workspace(workspace).count(),
        "documents": Document.objects.for_workspace(workspace).count(),
        "chunks": Chunk.objects.for_workspace(workspace).count(),
        "mentions": Mention.objects.for_workspace(workspace).count(),
        "relation_evidence": RelationEvidence.objects.for_workspace(workspace).count(),
        "orphan_entities": get_orphan_entities(workspace).count(),
    }
    return {"backend": backend.alias, **asdict(stats), "counts": counts}
