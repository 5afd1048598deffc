"""API schemas of the graph reads (knowledge/api/entities.py, graph.py); every field listed.

One graph payload (`GraphOut`: nodes, edges, truncated) answers neighbourhood, subgraph and
path alike, so the explorer draws all three with one piece of code; path adds `found` and
`length`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Field, Schema
from pydantic import StrictInt

from knowledge.schemas.entity import EntityBase
from knowledge.selectors.bulk_graph import DEFAULT_HUBS, MAX_BULK_NODES
from workspaces.models import MAX_ID


class GraphNodeOut(Schema):
    id: int
    name: str
    type: str
    degree: int = Field(..., description="active relations touching it (self-loops once)")
    depth: int | None = Field(
        ..., description="hops from the nearest seed (neighbourhood), position on a path"
    )
    mention_count: int
    community: int | None


class GraphEdgeOut(Schema):
    id: int
    source: int
    target: int
    type: str
    weight: float


class GraphOut(Schema):
    nodes: list[GraphNodeOut]
    edges: list[GraphEdgeOut] = Field(..., description="active edges among `nodes`")
    truncated: bool = Field(..., description="a limit cut the answer")


class PathOut(GraphOut):
    found: bool = Field(..., description="false: no path within max_hops (nodes, edges empty)")
    length: int | None = Field(..., description="edges on the path; null when not found")


class EntityListOut(EntityBase):
    degree: int = Field(..., description="active relations touching it (self-loops once)")
    community: int | None
    source_ids: list[int]
    first_seen_at: datetime | None
    last_seen_at: datetime | None
    state: str = Field(..., description="active | merged | deleted")

    @staticmethod
    def resolve_type(obj: Any) -> str:
        return str(obj.type.name)


class SourceRefOut(Schema):
    id: int
    name: str
    kind: str


class DocumentRefOut(Schema):
    id: int
    title: str
    path: str = Field(..., description="the document's path or URL within its source")
    url: str | None = Field(..., description="the web address, when the document came from one")
    source_id: int


class RelationCountOut(Schema):
    type: str
    direction: str = Field(..., description="out (this entity is the source) | in")
    count: int


class MentionEvidenceOut(Schema):
    id: int
    chunk_id: int
    document: DocumentRefOut
    surface_form: str
    char_start: int | None = Field(..., description="offset in the document text; null: unplaced")
    char_end: int | None
    snippet: str = Field(..., description="the text around the mention (at most ~300 chars)")
    snippet_start: int = Field(..., description="document offset of the snippet's first char")
    description: str
    created_at: datetime


class EntityDetailOut(Schema):
    id: int
    name: str
    type: str
    description: str
    summary: str
    aliases: list[str]
    type_votes: dict[str, int]
    type_curated: bool
    mention_count: int
    degree: int
    community: int | None
    first_seen_at: datetime | None
    last_seen_at: datetime | None
    state: str = Field(..., description="active | merged | deleted")
    merged_into: int | None
    curated: bool
    sources: list[SourceRefOut]
    relation_counts: list[RelationCountOut] = Field(
        ..., description="active relations by type and direction"
    )
    evidence: list[MentionEvidenceOut] = Field(
        ..., description="the newest mentions (at most `evidence_limit`)"
    )


class EntityRefOut(Schema):
    id: int
    name: str
    type: str

    @staticmethod
    def resolve_type(obj: Any) -> str:
        return obj["type"] if isinstance(obj, dict) else str(obj.type.name)


class RelationOut(Schema):
    id: int
    source: EntityRefOut
    target: EntityRefOut
    type: str
    description: str
    keywords: list[str]
    weight: float
    evidence_count: int
    state: str = Field(..., description="active | merged | deleted")
    created_at: datetime

    @staticmethod
    def resolve_type(obj: Any) -> str:
        return obj["type"] if isinstance(obj, dict) else str(obj.type.name)

    @staticmethod
    def resolve_keywords(obj: Any) -> list[str]:
        keywords = obj["keywords"] if isinstance(obj, dict) else obj.keywords
        return [str(k) for k in (keywords or [])]


class RelationEvidenceOut(Schema):
    id: int
    chunk_id: int
    document: DocumentRefOut
    char_start: int | None = Field(
        ..., description="sentence span in the document text; null: unplaced"
    )
    char_end: int | None
    snippet: str = Field(..., description="the sentence (or the chunk's start when unplaced)")
    snippet_start: int
    description: str
    keywords: list[str]
    strength: float = Field(..., description="0..10, as the extractor rated it")
    created_at: datetime


class RelationDetailOut(RelationOut):
    evidence: list[RelationEvidenceOut] = Field(
        ..., description="the newest evidence (at most `evidence_limit`)"
    )
    evidence_total: int


class CountsOut(Schema):
    sources: int
    documents: int
    chunks: int
    mentions: int
    relation_evidence: int
    orphan_entities: int = Field(..., description="active entities with no mention")


class StatsOut(Schema):
    backend: str = Field(..., description="the graph backend that answered")
    entities: int = Field(..., description="active entities")
    relations: int = Field(..., description="active relations")
    entities_by_type: dict[str, int]
    relations_by_type: dict[str, int]
    degree_distribution: dict[str, int] = Field(
        ..., description='bucket ("0", "1", "2-3", "4-7", …) -> entities'
    )
    max_degree: int
    mean_degree: float
    counts: CountsOut


class HubsOut(Schema):
    items: list[GraphNodeOut] = Field(..., description="highest degree first")
    count: int = Field(..., description="active entities of the type (all of them, any degree)")


# --- the explorer's bulk loads -------------------------------------------------------------

BulkId = Annotated[StrictInt, Field(gt=0, le=MAX_ID)]
BULK_FORMAT = (
    "objects (default): nodes and edges as objects; columns: parallel arrays per field, "
    "types as indexes into `types` / `relation_types`, edge ends as node indexes"
)


class BulkGraphQuery(Schema):
    """`GET …/graph`: the top hubs matching the filters."""

    hubs: int | None = Field(
        None, ge=0, le=MAX_BULK_NODES, description=f"how many (default {DEFAULT_HUBS})"
    )
    types: str | None = Field(None, description="entity type names, comma-separated")
    source: int | None = Field(None, ge=1, le=MAX_ID, description="mentioned by this source")
    seen_after: str | None = Field(None, description="seen on or after: 2026-01-31 or ISO 8601")
    seen_before: str | None = Field(None, description="seen on or before (the whole day)")
    min_degree: int | None = Field(None, ge=0, le=10**9)
    format: Literal["objects", "columns"] = Field("objects", description=BULK_FORMAT)


class BulkGraphIn(Schema):
    """`POST …/graph`: given entities (a read, posted because thousands of ids do not fit
    in a URL), with the same filters as the GET."""

    ids: list[BulkId] = Field(..., max_length=MAX_BULK_NODES)
    touching: list[BulkId] = Field(
        [], max_length=MAX_BULK_NODES, description="only edges with an end among these"
    )
    edges: bool = Field(True, description="false: only which ids match (nodes {id}, no edges)")
    types: list[str] | str | None = None
    source: int | None = Field(None, ge=1, le=MAX_ID)
    seen_after: str | None = None
    seen_before: str | None = None
    min_degree: int | None = Field(None, ge=0, le=10**9)
    format: Literal["objects", "columns"] = Field("objects", description=BULK_FORMAT)


class BulkNodeOut(Schema):
    id: int
    name: str | None = None
    type: str | None = None
    degree: int | None = None
    mention_count: int | None = None
    community: int | None = None


class BulkGraphOut(Schema):
    nodes: list[BulkNodeOut]
    edges: list[GraphEdgeOut]
    truncated: bool
    count: int = Field(..., description="how many match in all (hubs), or of the ids given")
