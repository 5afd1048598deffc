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
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import batched

import networkx as nx
from django.db import connection, transaction
from networkx.algorithms.community import louvain_communities, modularity

from knowledge.graph.sync import schedule_graph_sync
from knowledge.models import Entity, EntityState, Relation
from workspaces.models import Workspace

SEED = 7
RESOLUTION = 1.0
# Louvain weighs an edge by its weight; a relation whose weight is zero (no evidence
# strength recorded) still holds its two ends together, a little.
MIN_WEIGHT = 0.01
UPDATE_BATCH = 5000


@dataclass(frozen=True, slots=True)
class CommunityReport:
    entities: int
    relations: int
    communities: int
    # Size of the largest community, and how many entities have no relation at all (each a
    # community of one).
    largest: int
    isolated: int
    modularity: float
    # Entities whose community number changed (those written).
    changed: int
    seconds: float


def _graph(workspace: Workspace) -> tuple[nx.Graph, int]:
    """The active graph, undirected, and how many relations it was made of."""
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


def _store(workspace: Workspace, assignment: dict[int, int]) -> list[int]:
    """Write the numbers (only rows whose number changes) and clear the number of entities
    no longer active; returns the ids written."""
    changed: list[int] = []
    with connection.cursor() as cursor:
        for batch in batched(sorted(assignment.items()), UPDATE_BATCH):
            cursor.execute(
                """
                UPDATE knowledge_entity AS e SET community = v.community
                FROM unnest(%s::bigint[], %s::int[]) AS v(id, community)
                WHERE e.id = v.id AND e.workspace_id = %s
                  AND e.community IS DISTINCT FROM v.community
                RETURNING e.id
                """,
                [[pk for pk, _ in batch], [n for _, n in batch], workspace.pk],
            )
            changed.extend(row[0] for row in cursor.fetchall())
        cursor.execute(
            """
            UPDATE knowledge_entity SET community = NULL
            WHERE workspace_id = %s AND state <> 'active' AND community IS NOT NULL
            RETURNING id
            """,
            [workspace.pk],
        )
        changed.extend(row[0] for row in cursor.fetchall())
    return changed


def do_compute_communities(*, workspace: Workspace) -> CommunityReport:
    """Detect the communities of the workspace's active graph and store each entity's
    number on `Entity.community` (one transaction: readers see the old numbering or the
    new one, never a mix); projections get the entities whose number changed."""
    started = time.perf_counter()
    graph, relations = _graph(workspace)
    if graph.number_of_edges():
        groups = louvain_communities(graph, weight="weight", resolution=RESOLUTION, seed=SEED)
        quality = modularity(graph, groups, weight="weight")
    else:
        # Nothing links anything: every entity is its own community (and modularity,
        # undefined without edges, is reported as 0).
        groups, quality = [{node} for node in graph.nodes], 0.0
    assignment = numbered(groups)
    with transaction.atomic():
        changed = _store(workspace, assignment)
        schedule_graph_sync(workspace_id=workspace.pk, entity_ids=changed, relation_ids=[])
    sizes = [len(group) for group in groups]
    return CommunityReport(
        entities=graph.number_of_nodes(),
        relations=relations,
        communities=len(groups),
        largest=max(sizes, default=0),
        isolated=sum(1 for node in graph.nodes if graph.degree(node) == 0),
        modularity=round(float(quality), 4),
        changed=len(changed),
        seconds=round(time.perf_counter() - started, 3),
    )
