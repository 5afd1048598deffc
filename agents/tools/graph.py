"""`neighborhood`, `find_path` and `graph_stats`: the graph reads of
`GET …/entities/{id}/neighborhood`, `GET …/path` and `GET …/stats`, through the same
selectors (and so the configured graph backend) and response schemas."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from agents.access import Access
from agents.results import ToolAnswer
from agents.tools.base import Arguments, ToolSpec
from knowledge.graph.base import MAX_HOPS
from knowledge.schemas.graph import GraphOut, PathOut, StatsOut
from knowledge.selectors.graph import (
    MAX_PATH_HOPS,
    get_neighborhood,
    get_path,
    get_workspace_stats,
)
from knowledge.selectors.params import MAX_GRAPH_NODES
from workspaces.models import MAX_ID

TypeNames = list[Annotated[str, Field(min_length=1, max_length=200)]]


class NeighborhoodArguments(Arguments):
    entity_id: int = Field(..., ge=1, le=MAX_ID, description="The entity at the centre.")
    hops: int = Field(1, ge=1, le=MAX_HOPS, description="How far to walk.")
    relation_types: TypeNames | None = Field(
        None, max_length=100, description="Only walk these relation types (default: any)."
    )
    entity_types: TypeNames | None = Field(
        None, max_length=100, description="Only return entities of these types."
    )
    direction: Literal["out", "in", "both"] = Field(
        "both", description="out: relations from the entity; in: relations to it."
    )
    limit: int = Field(100, ge=1, le=MAX_GRAPH_NODES, description="Most nodes returned.")


def run_neighborhood(access: Access, args: NeighborhoodArguments) -> ToolAnswer:
    graph = get_neighborhood(
        access.workspace,
        args.entity_id,
        hops=args.hops,
        relation_types=args.relation_types,
        entity_types=args.entity_types,
        direction=args.direction,
        limit=args.limit,
    )
    return ToolAnswer(data=GraphOut.model_validate(graph).model_dump(mode="json"))


class FindPathArguments(Arguments):
    from_id: int = Field(..., ge=1, le=MAX_ID, description="Entity id where the path starts.")
    to_id: int = Field(..., ge=1, le=MAX_ID, description="Entity id where it ends.")
    max_hops: int = Field(4, ge=1, le=MAX_PATH_HOPS, description="Longest path looked for.")
    relation_types: TypeNames | None = Field(
        None, max_length=100, description="Only these relation types (default: any)."
    )


def run_find_path(access: Access, args: FindPathArguments) -> ToolAnswer:
    path = get_path(
        access.workspace,
        source_id=args.from_id,
        target_id=args.to_id,
        max_hops=args.max_hops,
        relation_types=args.relation_types,
    )
    return ToolAnswer(data=PathOut.model_validate(path).model_dump(mode="json"))


class GraphStatsArguments(Arguments):
    pass


def run_graph_stats(access: Access, args: GraphStatsArguments) -> ToolAnswer:
    stats = get_workspace_stats(access.workspace)
    return ToolAnswer(data=StatsOut.model_validate(stats).model_dump(mode="json"))


TOOLS = [
    ToolSpec(
        name="neighborhood",
        title="Entity neighbourhood",
        description=(
            "The entity and the entities within `hops` relations of it, nearest first "
            "(`depth` = hops away), with the relations among them (`edges`: source, "
            "target, type, weight). `truncated` is true when `limit` cut it."
        ),
        arguments=NeighborhoodArguments,
        run=run_neighborhood,
    ),
    ToolSpec(
        name="find_path",
        title="Shortest path between two entities",
        description=(
            "A shortest chain of relations between two entities, ignoring direction. "
            "`found` false (an answer, not an error) when there is none within `max_hops`; "
            "otherwise `nodes` in order from `from_id` to `to_id` and the `edges` between."
        ),
        arguments=FindPathArguments,
        run=run_find_path,
    ),
    ToolSpec(
        name="graph_stats",
        title="Graph statistics",
        description=(
            "How big the workspace's graph is: active entities and relations by type, the "
            "degree distribution, and the counts of sources, documents, chunks and "
            "evidence it was built from. Useful first, to learn the entity and relation "
            "type names the other tools filter by."
        ),
        arguments=GraphStatsArguments,
        run=run_graph_stats,
    ),
]
