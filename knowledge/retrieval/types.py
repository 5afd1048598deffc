"""What a hybrid search hands back, and the values its stages pass each other.

Plain dataclasses, no Django: the search builds them, the API schema and the `search`
command read them (knowledge/retrieval_schemas.py turns a SearchResult into JSON), and the
context block quotes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

# The names `signals_used` may list, in the order the search runs them.
SIGNALS = ("vector", "entity_vector", "keyword", "recognition", "graph")
# The chunk rankings fusion combines; a search may be asked for some of them only.
CHUNK_SIGNALS = ("vector", "keyword", "graph")


@dataclass(frozen=True, slots=True)
class QueryVector:
    """The query's embedding and the model that made it (only vectors of that model are
    compared with it)."""

    model: str
    values: list[float]

    @property
    def dimension(self) -> int:
        return len(self.values)


@dataclass(slots=True)
class Recognised:
    """An entity named in the query (by canonical name or alias)."""

    entity_id: int
    matched: str
    start: int  # word positions in the query, end exclusive
    end: int
    # Whether the query writes a whole name or alias of the entity, not a looser form of it
    # that only the canonical key equates ("file" for "--file" or "file_name"): only then
    # may it seed the graph (knowledge/retrieval/signals/recognition.py).
    whole: bool = True


@dataclass(frozen=True, slots=True)
class SignalHit:
    rank: int  # 1-based, within the signal's candidates
    score: float  # cosine similarity, ts_rank_cd, or graph proximity


@dataclass(slots=True)
class ChunkSignals:
    vector: SignalHit | None = None
    keyword: SignalHit | None = None
    graph: SignalHit | None = None


@dataclass(slots=True)
class ChunkHit:
    id: int
    document_id: int
    document_title: str
    document_path: str
    url: str | None
    source_id: int
    ordinal: int
    char_start: int
    char_end: int
    text: str
    truncated: bool
    score: float
    signals: ChunkSignals
    # Entities of the result this chunk mentions (what the context block cites it for).
    entity_ids: list[int] = field(default_factory=list)
    # Its document's own date (ingest: Document.published_at), when it has one.
    published_at: datetime | None = None


@dataclass(slots=True)
class EntityHit:
    id: int
    name: str
    type: str
    description: str
    aliases: list[str]
    mention_count: int
    score: float
    # Why it is here: "recognised", "vector", "graph" (one or more).
    why: list[str]
    matched: str | None = None  # the query text it was recognised in
    similarity: float | None = None  # cosine similarity of its name to the query
    depth: int | None = None  # hops from the nearest seed
    proximity: float | None = None
    # The query names it: by a whole name or alias, and one specific enough to seed the
    # graph (a common word of the question that happens to be a name is not naming it).
    named: bool = False


@dataclass(slots=True)
class EvidenceHit:
    chunk_id: int
    document_id: int
    char_start: int | None
    char_end: int | None
    text: str


@dataclass(slots=True)
class RelationHit:
    id: int
    source_id: int
    target_id: int
    source_name: str
    target_name: str
    type: str
    weight: float
    description: str
    evidence: list[EvidenceHit]


@dataclass(frozen=True, slots=True)
class PathNode:
    id: int
    name: str
    type: str


@dataclass(frozen=True, slots=True)
class PathEdge:
    id: int
    source_id: int
    target_id: int
    type: str


@dataclass(slots=True)
class PathHit:
    source_id: int
    target_id: int
    length: int
    nodes: list[PathNode]
    edges: list[PathEdge]


@dataclass(slots=True)
class SearchResult:
    query: str
    chunks: list[ChunkHit]
    entities: list[EntityHit]
    relations: list[RelationHit]
    paths: list[PathHit]
    context: str
    signals_used: list[str]
    warnings: list[str]
    took_ms: float
    timings_ms: dict[str, float]
