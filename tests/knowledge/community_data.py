"""Planted graphs with known communities, written straight with the ORM: two cliques joined
by one edge, and groups of groups (the communities the map splits into sub-communities)."""

from __future__ import annotations

from itertools import combinations

from knowledge.actions.schema import do_ensure_default_schema
from knowledge.models import Entity, EntityType, Relation, RelationType
from workspaces.models import Workspace


class Planted:
    """Entities and relations of one workspace, by name."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        do_ensure_default_schema(workspace=workspace)
        self.person = EntityType.objects.get(workspace=workspace, name="person")
        self.related = RelationType.objects.get(workspace=workspace, name="related_to")
        self.ids: dict[str, int] = {}

    def entities(self, *names: str) -> None:
        rows = Entity.objects.bulk_create(
            Entity(
                workspace=self.workspace,
                name=name,
                canonical_name=name.lower(),
                type=self.person,
                mention_count=1,
            )
            for name in names
        )
        self.ids.update({row.name: row.pk for row in rows})

    def relate(self, *pairs: tuple[str, str], weight: float = 1.0) -> None:
        Relation.objects.bulk_create(
            Relation(
                workspace=self.workspace,
                source_id=self.ids[a],
                target_id=self.ids[b],
                type=self.related,
                weight=weight,
            )
            for a, b in pairs
        )

    def entity(self, name: str) -> Entity:
        return Entity.objects.get(pk=self.ids[name])


def two_cliques(workspace: Workspace) -> Planted:
    """Two cliques of six (a0-a5, b0-b5) joined by one edge (a5 - b0), and one entity with
    no relation ("loner"): communities 0 (a), 1 (b) and 2 (the loner)."""
    graph = Planted(workspace)
    a = [f"a{i}" for i in range(6)]
    b = [f"b{i}" for i in range(6)]
    graph.entities(*a, *b, "loner")
    graph.relate(*combinations(a, 2), weight=3.0)
    graph.relate(*combinations(b, 2), weight=3.0)
    graph.relate((a[5], b[0]))
    return graph


def nested(workspace: Workspace) -> Planted:
    """Three groups (g0-g2) of four cliques of five (g0s0 … g2s3), every two cliques of a
    group joined by three edges, the groups in a chain by one edge each (g0 - g1 - g2):
    Louvain finds the three groups as communities of 20, and inside each one (alone) its
    four cliques, so with COMMUNITY_SPLIT_ABOVE under 20 each group has four
    sub-communities of five. Entity names: g{group}s{clique}e{member}."""
    graph = Planted(workspace)
    for g in range(3):
        cliques = [[f"g{g}s{s}e{e}" for e in range(5)] for s in range(4)]
        graph.entities(*(name for clique in cliques for name in clique))
        for clique in cliques:
            graph.relate(*combinations(clique, 2))
        for one, other in combinations(cliques, 2):
            graph.relate(*((one[i % 5], other[(i * 7 + 3) % 5]) for i in range(3)))
    graph.relate(("g0s0e0", "g1s0e1"), ("g1s0e0", "g2s0e1"))
    return graph
