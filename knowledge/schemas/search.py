"""Schemas of `POST /workspaces/{slug}/search` (knowledge/api/search.py), every field listed.

Kept apart from knowledge/schemas.py because the search payload is also what
`manage.py search --json` prints: one definition for both.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from ninja import Field, Schema

from knowledge.graph.base import MAX_HOPS
from knowledge.retrieval import SearchResult
from knowledge.retrieval.limits import MAX_FILTER_ITEMS, MAX_LIMIT, MAX_QUERY_CHARS
from knowledge.schemas.entity import EntityBase
from workspaces.models import MAX_ID

# The date filters and the recency preference, alike in search and ask.
IngestedFrom = Annotated[
    date | None, Field(description="only documents ingested on or after this day (UTC)")
]
IngestedTo = Annotated[
    date | None, Field(description="only documents ingested on or before this day (UTC)")
]
PublishedFrom = Annotated[
    date | None,
    Field(
        description="only documents whose own date (published_at) is on or after this day "
        "(UTC); undated documents are left out"
    ),
]
PublishedTo = Annotated[
    date | None,
    Field(
        description="only documents whose own date (published_at) is on or before this day "
        "(UTC); undated documents are left out"
    ),
]
Recency = Annotated[
    float | None,
    Field(
        ge=0,
        le=1,
        description="prefer newer documents: a chunk's score times 1 + recency * 0.5 ** "
        "(its document's age / the half-life setting); 0: off (default: the setting, off)",
    ),
]


class SearchIn(Schema):
    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS)
    limit: int = Field(10, ge=1, le=MAX_LIMIT, description="chunks to return")
    hops: int | None = Field(
        None, ge=0, le=MAX_HOPS, description="graph expansion depth (default: the setting)"
    )
    relation_types: list[Annotated[str, Field(max_length=200)]] | None = Field(
        None, max_length=MAX_FILTER_ITEMS, description="relations graph expansion may walk"
    )
    entity_types: list[Annotated[str, Field(max_length=200)]] | None = Field(
        None, max_length=MAX_FILTER_ITEMS, description="entities recognised, matched, reached"
    )
    sources: list[Annotated[int, Field(ge=1, le=MAX_ID)]] | None = Field(
        None, max_length=MAX_FILTER_ITEMS, description="only chunks of these sources"
    )
    ingested_from: IngestedFrom = None
    ingested_to: IngestedTo = None
    published_from: PublishedFrom = None
    published_to: PublishedTo = None
    recency: Recency = None


class SignalOut(Schema):
    rank: int = Field(..., description="1-based rank within the signal's candidates")
    score: float = Field(
        ..., description="cosine similarity (vector), ts_rank_cd + 1 per looser tier below "
        "its own (keyword), or graph proximity (graph)",
    )  # fmt: skip


class ChunkSignalsOut(Schema):
    vector: SignalOut | None
    keyword: SignalOut | None
    graph: SignalOut | None


class SearchChunkOut(Schema):
    id: int
    document_id: int
    document_title: str
    document_path: str
    url: str | None = Field(..., description="the document's URL when it came from the web")
    source_id: int
    ordinal: int
    char_start: int = Field(..., description="offset of the chunk in the document's text")
    char_end: int
    text: str = Field(..., description="the chunk's text (bounded; see truncated)")
    truncated: bool
    score: float = Field(..., description="fused score (weighted reciprocal rank fusion)")
    signals: ChunkSignalsOut
    entity_ids: list[int] = Field(..., description="returned entities this chunk mentions")
    published_at: datetime | None = Field(
        None, description="its document's own date (see the document's published_source)"
    )


class SearchEntityOut(EntityBase):
    score: float
    why: list[str] = Field(..., description="recognised | vector | graph")
    matched: str | None = Field(..., description="the query text it was recognised in")
    similarity: float | None = Field(..., description="cosine similarity of its name")
    depth: int | None = Field(..., description="hops from the nearest query entity")
    proximity: float | None


class SearchEvidenceOut(Schema):
    chunk_id: int
    document_id: int
    char_start: int | None
    char_end: int | None
    text: str = Field(..., description="the evidence sentence (bounded)")


class SearchRelationOut(Schema):
    id: int
    source_id: int
    target_id: int
    source_name: str
    target_name: str
    type: str
    weight: float
    description: str
    evidence: list[SearchEvidenceOut]


class SearchPathNodeOut(Schema):
    id: int
    name: str
    type: str


class SearchPathEdgeOut(Schema):
    id: int
    source_id: int
    target_id: int
    type: str


class SearchPathOut(Schema):
    source_id: int
    target_id: int
    length: int
    nodes: list[SearchPathNodeOut]
    edges: list[SearchPathEdgeOut]


class SearchOut(Schema):
    query: str
    chunks: list[SearchChunkOut]
    entities: list[SearchEntityOut]
    relations: list[SearchRelationOut]
    paths: list[SearchPathOut]
    context: str = Field(..., description="Markdown for an LLM prompt; sources cited as [n]")
    signals_used: list[str] = Field(
        ..., description="vector, entity_vector, keyword, recognition, graph: those that ran"
    )
    warnings: list[str] = Field(..., description="why a signal was skipped or degraded")
    took_ms: float
    timings_ms: dict[str, float] = Field(..., description="time per stage")


def search_payload(result: SearchResult) -> dict[str, Any]:
    """The API's JSON for a result (also printed by `manage.py search --json`)."""
    return SearchOut.model_validate(result, from_attributes=True).model_dump(mode="json")
