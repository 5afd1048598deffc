"""The graph backend conformance suite's fixtures: every backend, and the shapes it answers on.

`graph_backend` runs each conformance test once per backend. Postgres always runs (it reads
the tables the ORM writes); Neo4j runs when GRAPHLOOM_TEST_NEO4J_URL names a server (e.g.
`docker compose --profile neo4j up -d neo4j`) and is skipped with that reason otherwise.

`shapes` writes one graph with the ORM, the system of record: a chain, a cycle, self-loops,
parts that do not touch, a hub with 300 spokes, parallel edges of different types, an
isolated entity, merged and deleted rows that must never appear, and a second workspace with
the same structure and names whose ids must never leak. A projection backend gets both
workspaces pushed into it (`project`) before the test reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from knowledge.actions.schema import do_ensure_default_schema
from knowledge.graph.base import EntityRow, GraphBackend, RelationRow
from knowledge.models import Entity, EntityState, EntityType, Relation, RelationType
from tests.support import module_rows
from workspaces.actions.workspaces import do_create_workspace
from workspaces.models import Workspace

NEO4J_URL_VARIABLE = "GRAPHLOOM_TEST_NEO4J_URL"
SPOKES = 300
# Spokes with a second edge (to a location of their own): degree 2, ahead of the others.
BUSY_SPOKES = 5


@pytest.fixture(params=["postgres", "neo4j"])
def graph_backend(request: pytest.FixtureRequest) -> Iterator[GraphBackend]:
    if request.param == "postgres":
        from knowledge.graph.postgres import PostgresGraphBackend

        yield PostgresGraphBackend("test", {})
        return
    url = os.environ.get(NEO4J_URL_VARIABLE, "")
    if not url:
        pytest.skip(f"{NEO4J_URL_VARIABLE} is not set")
    from knowledge.graph.neo4j import Neo4jGraphBackend

    backend = Neo4jGraphBackend(
        "test",
        {
            "URL": url,
            "USER": os.environ.get("GRAPHLOOM_TEST_NEO4J_USER") or "neo4j",
            "PASSWORD": os.environ.get("GRAPHLOOM_TEST_NEO4J_PASSWORD") or "",
            "DATABASE": "neo4j",
        },
    )
    backend.ensure_schema()
    try:
        yield backend
    finally:
        backend.close()


def project(backend: GraphBackend, workspace: Workspace) -> None:
    """Rebuild the workspace's projection from the ORM: what the sync does, written here so
    the suite depends on the backend contract only."""
    entities = [
        EntityRow(
            id=e.pk,
            workspace_id=workspace.pk,
            name=e.name,
            type=e.type.name,
            mention_count=e.mention_count,
            community=e.community,
        )
        for e in Entity.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .select_related("type")
        .order_by("pk")
    ]
    relations = [
        RelationRow(
            id=r.pk,
            workspace_id=workspace.pk,
            source=r.source_id,
            target=r.target_id,
            type=r.type.name,
            weight=r.weight,
        )
        for r in Relation.objects.for_workspace(workspace)
        .filter(state=EntityState.ACTIVE)
        .select_related("type")
        .order_by("pk")
    ]
    backend.clear_workspace(workspace_id=workspace.pk)
    backend.upsert_entities(entities)
    backend.upsert_relations(relations)


@dataclass
class Side:
    """One workspace's copy of the shapes: entity ids by name, relation ids by label."""

    workspace: Workspace
    ids: dict[str, int] = field(default_factory=dict)
    relations: dict[str, int] = field(default_factory=dict)

    def __getitem__(self, name: str) -> int:
        return self.ids[name]

    @property
    def pk(self) -> int:
        return self.workspace.pk


@dataclass
class Shapes:
    home: Side
    foreign: Side

    @property
    def ws(self) -> int:
        return self.home.pk

    def __getitem__(self, name: str) -> int:
        return self.home[name]

    def name_of(self, entity_id: int) -> str:
        return {v: k for k, v in self.home.ids.items()}[entity_id]


# name -> (type, mention count)
ENTITIES: dict[str, tuple[str, int]] = {
    # chain c0 -> c1 -> c2 -> c3 -> c4 (part_of), alternating types
    "c0": ("person", 3),
    "c1": ("organization", 1),
    "c2": ("person", 1),
    "c3": ("organization", 1),
    "c4": ("person", 7),
    # cycle y0 -> y1 -> y2 -> y0 (related_to)
    "y0": ("concept", 1),
    "y1": ("concept", 1),
    "y2": ("concept", 1),
    # a self-loop on s0, and s0 -> s1 (uses)
    "s0": ("technology", 1),
    "s1": ("technology", 1),
    # parallel edges: m0 -> m1 works_for and owns, m1 -> m0 related_to
    "m0": ("person", 2),
    "m1": ("organization", 5),
    # no relation at all
    "i0": ("event", 1),
    # the hub and its spokes are added below
    "h": ("organization", 4),
}

RELATIONS: list[tuple[str, str, str, str, float]] = [
    # label, source, target, type, weight
    ("c0-c1", "c0", "c1", "part_of", 1.0),
    ("c1-c2", "c1", "c2", "part_of", 2.0),
    ("c2-c3", "c2", "c3", "part_of", 3.0),
    ("c3-c4", "c3", "c4", "part_of", 4.0),
    ("y0-y1", "y0", "y1", "related_to", 1.0),
    ("y1-y2", "y1", "y2", "related_to", 1.0),
    ("y2-y0", "y2", "y0", "related_to", 1.0),
    ("s0-s0", "s0", "s0", "uses", 1.5),
    ("s0-s1", "s0", "s1", "uses", 1.0),
    ("m0-m1 works_for", "m0", "m1", "works_for", 1.0),
    ("m0-m1 owns", "m0", "m1", "owns", 2.5),
    ("m1-m0 related_to", "m1", "m0", "related_to", 1.0),
]


def spoke(i: int) -> str:
    return f"p{i:03d}"


def _build(workspace: Workspace, *, spokes: int) -> Side:
    do_ensure_default_schema(workspace=workspace)
    side = Side(workspace=workspace)
    entity_types = {t.name: t for t in EntityType.objects.for_workspace(workspace)}
    relation_types = {t.name: t for t in RelationType.objects.for_workspace(workspace)}
    wanted = dict(ENTITIES)
    # Spokes first in id order: the limit tests rely on p000 < p001 < ...
    wanted.update({spoke(i): ("product", 1) for i in range(spokes)})
    wanted.update({f"q{i}": ("location", 1) for i in range(BUSY_SPOKES)})
    # Rows that must never appear: a deleted entity hanging off the chain, a merged one
    # that had an edge to c4.
    wanted.update({"deleted": ("person", 50), "merged": ("person", 50)})
    rows = Entity.objects.bulk_create(
        [
            Entity(
                workspace=workspace,
                name=name,
                canonical_name=name.lower(),
                type=entity_types[kind],
                mention_count=mentions,
                community=1 if name.startswith("c") else None,
                state=EntityState.DELETED if name == "deleted" else EntityState.ACTIVE,
            )
            for name, (kind, mentions) in sorted(wanted.items())
        ]
    )
    side.ids = {row.name: row.pk for row in rows}
    Entity.objects.filter(pk=side.ids["merged"]).update(
        state=EntityState.MERGED, merged_into_id=side.ids["c4"]
    )
    relations = [*RELATIONS]
    relations += [(f"h-{spoke(i)}", "h", spoke(i), "related_to", 1.0) for i in range(spokes)]
    relations += [
        (f"{spoke(i)}-q{i}", spoke(i), f"q{i}", "located_in", 1.0) for i in range(BUSY_SPOKES)
    ]
    inactive = [
        # what deleting an entity leaves: its edges deleted too
        ("c2-deleted", "c2", "deleted", "part_of", 9.0, EntityState.DELETED),
        # what merging leaves: the folded edge merged
        ("merged-c4", "merged", "c4", "related_to", 9.0, EntityState.MERGED),
        # a deleted shortcut and a merged duplicate between active entities
        ("c0-c4 deleted", "c0", "c4", "related_to", 9.0, EntityState.DELETED),
        ("c1-c3 merged", "c1", "c3", "related_to", 9.0, EntityState.MERGED),
    ]
    made = Relation.objects.bulk_create(
        [
            Relation(
                workspace=workspace,
                source_id=side.ids[source],
                target_id=side.ids[target],
                type=relation_types[kind],
                weight=weight,
            )
            for _, source, target, kind, weight in relations
        ]
        + [
            Relation(
                workspace=workspace,
                source_id=side.ids[source],
                target_id=side.ids[target],
                type=relation_types[kind],
                weight=weight,
                state=state,
            )
            for _, source, target, kind, weight, state in inactive
        ]
    )
    labels = [r[0] for r in relations] + [r[0] for r in inactive]
    side.relations = {label: row.pk for label, row in zip(labels, made, strict=True)}
    return side


@pytest.fixture(scope="module")
def shape_rows(django_db_setup, django_db_blocker) -> Iterator[Shapes]:
    """Both workspaces' rows, written once per test module (`module_rows`): building them
    for every test cost the conformance suite most of its time."""
    with module_rows(django_db_blocker):
        home = _build(do_create_workspace(slug="conformance"), spokes=SPOKES)
        # The same names and structure, and a bigger hub: were its rows to leak into the
        # home workspace's answers, they would top them.
        foreign = _build(do_create_workspace(slug="conformance-foreign"), spokes=SPOKES + 20)
        yield Shapes(home=home, foreign=foreign)


@pytest.fixture
def shapes(db, shape_rows: Shapes, graph_backend: GraphBackend) -> Iterator[Shapes]:
    if graph_backend.supports_projection:
        project(graph_backend, shape_rows.home.workspace)
        project(graph_backend, shape_rows.foreign.workspace)
    yield shape_rows
    if graph_backend.supports_projection:
        graph_backend.clear_workspace(workspace_id=shape_rows.home.pk)
        graph_backend.clear_workspace(workspace_id=shape_rows.foreign.pk)
