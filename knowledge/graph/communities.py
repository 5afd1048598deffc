"""Communities of a workspace's graph: groups of entities more tightly linked to each other
than to the rest, for colouring the explorer and for summaries ("what is this corpus
about") in retrieval and the API.

Louvain modularity (networkx) over the active graph, undirected, edges weighted by their
relation weight (parallel edges add up). It runs in memory on the worker: a workspace of a
million relations fits in a few hundred MB and a minute or two, and the answer is only ever
a snapshot (entities added since have no community until the next run). A fixed seed makes a
run on the same graph give the same communities; they are numbered by size, largest first
(0), ties by their smallest entity id, so numbers are stable between runs on an unchanged
graph. An entity without relations is a community of its own.

Two levels: a community larger than `split_above` entities (setting COMMUNITY_SPLIT_ABOVE)
is split again, by Louvain over its induced subgraph (same seed), into sub-communities
numbered the same way inside it (`Entity.subcommunity`); the community map drills into
them before it shows entities. Two levels are enough for the explorer: a sub-community can
still be large (a dense core Louvain will not cut), and its drill-down then shows its
best-connected members, as many as asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knowledge.models import Entity, EntityState, Relation
from workspaces.models import Workspace

if TYPE_CHECKING:
    import networkx as nx

SEED = 7
RESOLUTION = 1.0
# Louvain weighs an edge by its weight; a relation whose weight is zero (no evidence
# strength recorded) still holds its two ends together, a little.
MIN_WEIGHT = 0.01


@dataclass(frozen=True, slots=True)
class Detected:
    """The communities found (entity id -> number) and what they were found in."""

    assignment: dict[int, int]
    # entity id -> sub-community number, for the entities of split communities only.
    subassignment: dict[int, int]
    sizes: list[int]
    entities: int
    relations: int
    isolated: int
    modularity: float


def _graph(workspace: Workspace) -> tuple[nx.Graph, int]:
    """The active graph, undirected, and how many relations it was made of."""
    # networkx is loaded by the worker that runs this, not by every process that imports
    # the task or the action to enqueue or call it.
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(
        Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .values_list("pk", flat=True)
        .iterator(chunk_size=10000)
    )
    edges = (
        Relation.objects.for_workspace(workspace)
        .filter(
            state=EntityState.ACTIVE,
            source__state=EntityState.ACTIVE,
            target__state=EntityState.ACTIVE,
        )
        .values_list("source_id", "target_id", "weight")
        .iterator(chunk_size=10000)
    )
    relations = 0
    for source, target, weight in edges:
        relations += 1
        weight = max(float(weight), MIN_WEIGHT)
        if graph.has_edge(source, target):
            graph[source][target]["weight"] += weight
        else:
            graph.add_edge(source, target, weight=weight)
    return graph, relations


def numbered(groups: Iterable[Iterable[int]]) -> dict[int, int]:
    """entity id -> community number: largest first, ties by smallest member id."""
    ordered = sorted((sorted(group) for group in groups), key=lambda g: (-len(g), g[0]))
    return {entity: number for number, group in enumerate(ordered) for entity in group}


def detect_communities(workspace: Workspace, *, split_above: int | None = None) -> Detected:
    """Louvain over the workspace's active graph, numbered by `numbered`; communities of
    more than `split_above` entities (None: none) split into sub-communities."""
    from networkx.algorithms.community import modularity

    graph, relations = _graph(workspace)
    if graph.number_of_edges():
        groups = _louvain(graph)
        quality = modularity(graph, groups, weight="weight")
    else:
        # Nothing links anything: every entity is its own community (and modularity,
        # undefined without edges, is reported as 0).
        groups, quality = [{node} for node in graph.nodes], 0.0
    assignment = numbered(groups)
    return Detected(
        assignment=assignment,
        subassignment=_split(graph, groups, split_above) if split_above is not None else {},
        sizes=[len(group) for group in groups],
        entities=graph.number_of_nodes(),
        relations=relations,
        isolated=sum(1 for node in graph.nodes if graph.degree(node) == 0),
        modularity=round(float(quality), 4),
    )


def _louvain(graph: nx.Graph) -> list[set[int]]:
    from networkx.algorithms.community import louvain_communities

    return list(louvain_communities(graph, weight="weight", resolution=RESOLUTION, seed=SEED))


def _split(graph: nx.Graph, groups: list[set[int]], split_above: int) -> dict[int, int]:
    """entity id -> sub-community number, for the groups larger than `split_above`: Louvain
    over each one's induced subgraph (its members without relations inside it are each a
    sub-community of their own), numbered by `numbered`. A group Louvain finds no cut in
    stays whole (no sub-communities)."""
    found: dict[int, int] = {}
    for group in groups:
        if len(group) <= split_above:
            continue
        inside = graph.subgraph(group).copy()
        parts = _louvain(inside) if inside.number_of_edges() else [{n} for n in inside]
        if len(parts) > 1:
            found.update(numbered(parts))
    return found
