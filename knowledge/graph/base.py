"""The graph backend contract: what every backend answers, in one payload shape.

Postgres is the system of record; a backend answers traversal queries over the active
entities and relations of one workspace (merged and deleted rows never appear). Every
method takes the workspace id and never returns another workspace's rows, whatever ids it
is given. Results are capped inside the query (a limit is a promise about work done, not a
slice of a larger answer) and say when they were cut (`truncated`).

A backend that keeps its own copy of the graph (a projection, like Neo4j) sets
`supports_projection` and implements the write methods; the write path calls them after
each commit with the ids it touched (`knowledge/graph/sync.py`), and `sync_graph` rebuilds a
workspace from scratch. Backends that read Postgres directly treat writes as no-ops.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[Direction, ...] = ("out", "in", "both")
MAX_HOPS = 3


class GraphBackendError(Exception):
    """A backend could not answer (server down, timeout, bad configuration); the message
    is safe to show (no credentials)."""


# Not frozen (hashable all the same): a 2-hop answer is a thousand of these, and a frozen
# dataclass's __init__ sets each field through object.__setattr__, ~5x slower to build
# (bench/graph.py: ~1 ms of a neighbourhood's client time). Nothing changes them.
@dataclass(slots=True, unsafe_hash=True)
class GraphNode:
    id: int
    name: str
    type: str
    # Active relations touching it (both directions, self-loops once).
    degree: int = 0
    # Hops from the nearest seed (neighborhood) or position on a path; None elsewhere.
    depth: int | None = None
    mention_count: int = 0
    community: int | None = None


@dataclass(slots=True, unsafe_hash=True)
class GraphEdge:
    id: int
    source: int
    target: int
    type: str
    weight: float = 0.0


@dataclass(slots=True)
class GraphResult:
    """Nodes and the active edges among them (both ends in `nodes`)."""

    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    # True when a limit cut the answer (more nodes were reachable, or more edges existed).
    truncated: bool = False


@dataclass(slots=True)
class PathResult:
    """A shortest path: nodes in order from source to target (depth = position) and the
    edge used for each hop (len(edges) == len(nodes) - 1)."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]

    @property
    def length(self) -> int:
        return len(self.edges)


@dataclass(slots=True)
class GraphStats:
    entities: int = 0
    relations: int = 0
    entities_by_type: dict[str, int] = field(default_factory=dict)
    relations_by_type: dict[str, int] = field(default_factory=dict)
    # Degree histogram: bucket label ("0", "1", "2-3", "4-7", ... powers of two) -> entities.
    degree_distribution: dict[str, int] = field(default_factory=dict)
    max_degree: int = 0
    # Sum of degrees over the number of active entities (isolated ones included).
    mean_degree: float = 0.0


@dataclass(frozen=True, slots=True)
class EntityRow:
    """What a projection stores of an entity."""

    id: int
    workspace_id: int
    name: str
    type: str
    mention_count: int = 0
    community: int | None = None


@dataclass(frozen=True, slots=True)
class RelationRow:
    """What a projection stores of a relation."""

    id: int
    workspace_id: int
    source: int
    target: int
    type: str
    weight: float = 0.0


class GraphBackend(ABC):
    """One configured backend (an entry of GRAPH_BACKENDS). Instances are shared by the
    threads of a process: keep per-call state local."""

    # Answers from its own copy of the graph, kept in sync through the write methods.
    supports_projection: bool = False
    # Can run inside the caller's database transaction (sees uncommitted rows).
    supports_transactions: bool = False

    def __init__(self, alias: str, options: dict[str, Any]) -> None:
        self.alias = alias
        self.options = options

    # --- reads --------------------------------------------------------------------------

    @abstractmethod
    def neighborhood(
        self,
        *,
        workspace_id: int,
        seeds: Sequence[int],
        hops: int = 1,
        relation_types: Sequence[str] | None = None,
        entity_types: Sequence[str] | None = None,
        direction: Direction = "both",
        limit: int = 500,
    ) -> GraphResult:
        """The seeds (depth 0) and entities within `hops` (1..MAX_HOPS) of them, each at its
        shortest depth, walking only `relation_types` (None = any) in `direction`;
        `entity_types` filters the nodes reached (the seeds always stay). At most `limit`
        nodes, nearest first (ties: higher degree, then id); edges are those among the
        returned nodes that match `relation_types`. Unknown or foreign seeds are ignored.

        Read precisely: the walk goes through entities of every type (depths count them);
        `entity_types` decides which of them are returned and count against `limit`. When a
        level has more returnable entities than the room left, the best of it by the order
        above are kept, the walk stops and `truncated` is set; when the limit is reached
        exactly with hops left, `truncated` says whether anything returnable lies beyond.
        hops outside 1..MAX_HOPS or an unknown direction raise ValueError."""

    @abstractmethod
    def shortest_path(
        self,
        *,
        workspace_id: int,
        source: int,
        target: int,
        max_hops: int = 4,
        relation_types: Sequence[str] | None = None,
    ) -> PathResult | None:
        """A shortest undirected path of at most `max_hops` edges, or None. source ==
        target gives a path of one node and no edges."""

    @abstractmethod
    def hubs(
        self, *, workspace_id: int, entity_type: str | None = None, limit: int = 20
    ) -> list[GraphNode]:
        """The highest-degree entities (ties: mention count, then id)."""

    @abstractmethod
    def subgraph(self, *, workspace_id: int, ids: Sequence[int]) -> GraphResult:
        """The given entities (those active in the workspace) and the edges among them."""

    @abstractmethod
    def stats(self, *, workspace_id: int) -> GraphStats:
        """Counts by type and the degree distribution of the active graph."""

    # --- writes (projections only) ------------------------------------------------------

    def upsert_entities(self, rows: Iterable[EntityRow]) -> None:
        """Create or update these entities in the projection."""
        return  # a backend reading Postgres directly has nothing to do

    def upsert_relations(self, rows: Iterable[RelationRow]) -> None:
        """Create or update these relations (their endpoints exist or are created bare)."""
        return  # a backend reading Postgres directly has nothing to do

    def delete_entities(self, *, workspace_id: int, ids: Iterable[int]) -> None:
        """Remove these entities and their relations from the projection."""
        return  # a backend reading Postgres directly has nothing to do

    def delete_relations(self, *, workspace_id: int, ids: Iterable[int]) -> None:
        """Remove these relations from the projection."""
        return  # a backend reading Postgres directly has nothing to do

    def clear_workspace(self, *, workspace_id: int) -> None:
        """Remove everything of the workspace from the projection (before a rebuild)."""
        return  # a backend reading Postgres directly has nothing to do

    def ensure_schema(self) -> None:
        """Create constraints and indexes the backend needs (idempotent)."""
        return  # a backend reading Postgres directly has nothing to do

    # --- lifecycle ------------------------------------------------------------------------

    def check(self) -> dict[str, Any]:
        """Health for /api/v1/health: {"ok": bool, ...}; never raises."""
        return {"ok": True}

    def close(self) -> None:
        """Release connections (tests, shutdown)."""
        return  # a backend reading Postgres directly has nothing to do


ProgressCallback = Callable[[int], None]


def degree_bucket(degree: int) -> str:
    """Histogram bucket of a degree: "0", "1", "2-3", "4-7", "8-15", ..."""
    if degree <= 1:
        return str(max(degree, 0))
    low = 1 << (degree.bit_length() - 1)
    return f"{low}-{2 * low - 1}"


def build_stats(
    entity_types: dict[str, int], relation_types: dict[str, int], degrees: dict[int, int]
) -> GraphStats:
    """GraphStats from counts by type and a {degree: entities} table: what every backend's
    `stats()` reads from its store, turned into the one shape."""
    histogram: dict[str, int] = {}
    for degree in sorted(degrees):
        bucket = degree_bucket(degree)
        histogram[bucket] = histogram.get(bucket, 0) + degrees[degree]
    entities = sum(entity_types.values())
    return GraphStats(
        entities=entities,
        relations=sum(relation_types.values()),
        entities_by_type=dict(sorted(entity_types.items())),
        relations_by_type=dict(sorted(relation_types.items())),
        degree_distribution=histogram,
        max_degree=max(degrees, default=0),
        mean_degree=(sum(d * n for d, n in degrees.items()) / entities) if entities else 0.0,
    )


def check_neighborhood_args(*, hops: int, direction: str, limit: int) -> None:
    """The contract's limits on `neighborhood` arguments, raised as every backend does."""
    if not 1 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be between 1 and {MAX_HOPS}, not {hops}.")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
    if limit < 1:
        raise ValueError("limit must be at least 1.")
