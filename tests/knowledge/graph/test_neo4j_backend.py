"""The Neo4j backend: lazy and safe without a server; the projection with one.

What runs everywhere: the handler builds the backend without connecting, an unreachable
server fails fast with a message free of credentials, options are validated, and the
Cypher text builders keep every query inside one workspace. What needs a server
(GRAPHLOOM_TEST_NEO4J_URL, _USER, _PASSWORD; e.g. `docker compose --profile neo4j up
neo4j`) is skipped with that reason: writes and reads round-trip, re-pointed relations
move, deletes detach, clears stay in their workspace, and a rebuild from Postgres answers
like Postgres. The shared read semantics are the conformance suite's (test_conformance.py).
"""

from __future__ import annotations

import os
import random
import re
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from knowledge.graph import get_graph_backend
from knowledge.graph import neo4j as cypher
from knowledge.graph.base import (
    EntityRow,
    GraphBackendError,
    GraphStats,
    RelationRow,
    build_stats,
)
from knowledge.graph.neo4j import (
    Neo4jGraphBackend,
    edges_query,
    expand_query,
    shortest_path_query,
)
from tests.knowledge.graph.projection import (
    NEO4J_BACKEND,
    PASSWORD,
    forget_graph_backends,
    unreachable_neo4j,
)

NEO4J_URL = os.environ.get("GRAPHLOOM_TEST_NEO4J_URL", "")
needs_server = pytest.mark.skipif(not NEO4J_URL, reason="GRAPHLOOM_TEST_NEO4J_URL is not set")


@pytest.fixture
def graph_config(settings) -> Iterator[Callable[..., None]]:
    def use(**backends: dict[str, Any]) -> None:
        settings.GRAPH_BACKENDS = backends
        forget_graph_backends()

    yield use
    forget_graph_backends()


# --- without a server ------------------------------------------------------------------------


def test_the_handler_builds_the_backend_from_settings_without_connecting(graph_config):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.3)
        port = listener.getsockname()[1]
        graph_config(
            default={
                "BACKEND": NEO4J_BACKEND,
                "OPTIONS": {"URL": f"bolt://127.0.0.1:{port}", "PASSWORD": PASSWORD},
            }
        )

        backend = get_graph_backend()

        assert isinstance(backend, Neo4jGraphBackend)
        assert backend.supports_projection
        assert backend.database == "neo4j"
        assert backend.batch_size == 1000
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody knocked
        assert PASSWORD not in repr(backend)
        backend.close()  # closing a backend that never connected is fine


def test_an_unreachable_server_fails_fast_with_a_message_free_of_credentials(graph_config):
    graph_config(default=unreachable_neo4j())
    backend = get_graph_backend()
    calls: list[Callable[[], object]] = [
        lambda: backend.hubs(workspace_id=1),
        lambda: backend.neighborhood(workspace_id=1, seeds=[1], hops=2),
        lambda: backend.upsert_entities(
            [EntityRow(id=1, workspace_id=1, name="Ada", type="person")]
        ),
        lambda: backend.clear_workspace(workspace_id=1),
    ]
    for call in calls:
        started = time.monotonic()
        with pytest.raises(GraphBackendError) as failure:
            call()
        assert time.monotonic() - started < 5
        message = str(failure.value)
        assert message.startswith(f"Neo4j at {backend.options['URL']} (database neo4j): ")
        assert "server unavailable" in message
        assert "\n" not in message
        assert PASSWORD not in message


def test_the_health_check_reports_instead_of_raising(graph_config):
    graph_config(
        down=unreachable_neo4j(),
        misconfigured={"BACKEND": NEO4J_BACKEND, "OPTIONS": {"URL": "http://localhost:7474"}},
    )
    down = get_graph_backend("down").check()
    assert down["ok"] is False
    assert down["backend"] == "neo4j"
    assert "server unavailable" in down["error"]
    assert PASSWORD not in down["error"]
    misconfigured = get_graph_backend("misconfigured").check()
    assert misconfigured["ok"] is False
    assert "configuring the driver failed" in misconfigured["error"]


def test_a_password_echoed_anywhere_in_an_error_is_blotted_out():
    backend = Neo4jGraphBackend("x", {"PASSWORD": PASSWORD})
    error = backend._error("reading hubs", ValueError(f"bad token {PASSWORD}\nsecond line"))
    assert str(error) == (
        "Neo4j at bolt://localhost:7687 (database neo4j): reading hubs failed: "
        "ValueError: bad token *** second line"
    )


def test_bad_options_are_a_configuration_error(graph_config):
    graph_config(default={"BACKEND": NEO4J_BACKEND, "OPTIONS": {"BATCH_SIZE": "many"}})
    with pytest.raises(ImproperlyConfigured, match="BATCH_SIZE"):
        get_graph_backend()


def test_every_query_stays_inside_one_workspace():
    built = [
        expand_query(direction, typed=typed)
        for direction in ("out", "in", "both")
        for typed in (True, False)
    ] + [
        edges_query(typed=True),
        edges_query(typed=False),
        shortest_path_query(4, typed=True),
        shortest_path_query(4, typed=False),
    ]
    constants = [
        value
        for name, value in vars(cypher).items()
        if name.isupper() and isinstance(value, str) and re.search(r"\b(MATCH|MERGE)\b", value)
    ]
    assert len(constants) >= 12
    for query in built + constants:
        assert "workspace_id" in query, query


def test_expansion_follows_the_direction_and_the_type_filter():
    assert "(a)-[r:REL]->(b:Entity)" in expand_query("out", typed=False)
    assert "(a)<-[r:REL]-(b:Entity)" in expand_query("in", typed=False)
    assert "(a)-[r:REL]-(b:Entity)" in expand_query("both", typed=False)
    assert "r.type IN $types" in expand_query("both", typed=True)
    assert "$types" not in expand_query("both", typed=False)
    with pytest.raises(ValueError, match="direction"):
        expand_query("sideways", typed=False)  # type: ignore[arg-type]


def test_the_path_bound_is_the_only_text_put_into_a_query_and_must_be_an_integer():
    assert "shortestPath((a)-[:REL*..3]-(b))" in shortest_path_query(3, typed=False)
    assert "r.type IN $types" in shortest_path_query(3, typed=True)
    with pytest.raises(ValueError, match="max_hops"):
        shortest_path_query(0, typed=False)
    with pytest.raises(ValueError, match="invalid literal"):
        shortest_path_query("2]-(b)) DETACH DELETE b //", typed=False)  # type: ignore[arg-type]


def test_stats_bucket_degrees_and_average_them_over_entities():
    stats = build_stats(
        {"person": 3, "concept": 4}, {"works_for": 5}, {0: 1, 1: 2, 2: 1, 3: 2, 9: 1}
    )
    assert stats == GraphStats(
        entities=7,
        relations=5,
        entities_by_type={"concept": 4, "person": 3},
        relations_by_type={"works_for": 5},
        degree_distribution={"0": 1, "1": 2, "2-3": 3, "8-15": 1},
        max_degree=9,
        mean_degree=(0 + 2 + 2 + 6 + 9) / 7,
    )
    assert build_stats({}, {}, {}) == GraphStats()


# --- with a server ---------------------------------------------------------------------------


@pytest.fixture
def neo4j() -> Iterator[Neo4jGraphBackend]:
    if not NEO4J_URL:
        pytest.skip("GRAPHLOOM_TEST_NEO4J_URL is not set")
    backend = Neo4jGraphBackend(
        "test",
        {
            "URL": NEO4J_URL,
            "USER": os.environ.get("GRAPHLOOM_TEST_NEO4J_USER", "neo4j"),
            "PASSWORD": os.environ.get("GRAPHLOOM_TEST_NEO4J_PASSWORD", ""),
            "BATCH_SIZE": 2,  # several batches even for these small graphs
        },
    )
    yield backend
    backend.close()


@pytest.fixture
def workspace_ids(neo4j) -> Iterator[Callable[[], int]]:
    """Fresh workspace ids far from any real one; their projections are removed after."""
    used: list[int] = []

    def new() -> int:
        used.append(random.randint(10**12, 10**13))
        return used[-1]

    yield new
    for ws in used:
        neo4j.clear_workspace(workspace_id=ws)


def entity(ws: int, pk: int, kind: str = "person", mentions: int = 0) -> EntityRow:
    return EntityRow(id=ws + pk, workspace_id=ws, name=f"n{pk}", type=kind, mention_count=mentions)


def relation(ws: int, pk: int, source: int, target: int, kind: str = "rel") -> RelationRow:
    return RelationRow(
        id=ws + pk, workspace_id=ws, source=ws + source, target=ws + target, type=kind, weight=0.5
    )


@needs_server
def test_schema_is_created_once_and_idempotently(neo4j):
    neo4j.ensure_schema()
    neo4j.ensure_schema()
    with neo4j._session() as session:
        names = {r["name"] for r in session.run("SHOW CONSTRAINTS YIELD name")}
        indexes = {r["name"] for r in session.run("SHOW INDEXES YIELD name")}
    assert "graphloom_entity_id" in names
    assert {"graphloom_entity_workspace", "graphloom_rel_id"} <= indexes


@needs_server
def test_a_projection_round_trips_through_every_read(neo4j, workspace_ids):
    ws = workspace_ids()
    # 1 -> 2 -> 3 -> 4, 1 -> 5 (a concept), 2 -> 2 (a self-loop)
    people = [entity(ws, 1, mentions=5), entity(ws, 2), entity(ws, 3), entity(ws, 4)]
    neo4j.upsert_entities([*people, entity(ws, 5, "concept")])
    neo4j.upsert_relations(
        [
            relation(ws, 11, 1, 2, "knows"),
            relation(ws, 12, 2, 3, "knows"),
            relation(ws, 13, 3, 4, "likes"),
            relation(ws, 14, 1, 5, "knows"),
            relation(ws, 15, 2, 2, "knows"),
        ]
    )
    one, two, three, four, five = (ws + i for i in range(1, 6))

    everything = neo4j.subgraph(workspace_id=ws, ids=[one, two, three, four, five, 999])
    assert [n.id for n in everything.nodes] == [one, two, three, four, five]
    assert {n.id: n.degree for n in everything.nodes} == {
        one: 2,
        two: 3,
        three: 2,
        four: 1,
        five: 1,
    }
    assert len(everything.edges) == 5

    near = neo4j.neighborhood(workspace_id=ws, seeds=[one], hops=2)
    assert [(n.id, n.depth) for n in near.nodes] == [(one, 0), (two, 1), (five, 1), (three, 2)]
    assert not near.truncated
    assert {e.id for e in near.edges} == {ws + 11, ws + 12, ws + 14, ws + 15}

    walked = neo4j.neighborhood(
        workspace_id=ws, seeds=[four], hops=3, relation_types=["knows"], direction="in"
    )
    assert [n.id for n in walked.nodes] == [four]
    backwards = neo4j.neighborhood(workspace_id=ws, seeds=[three], hops=3, direction="in")
    assert [(n.id, n.depth) for n in backwards.nodes] == [(three, 0), (two, 1), (one, 2)]
    people = neo4j.neighborhood(workspace_id=ws, seeds=[five], hops=3, entity_types=["person"])
    assert five in [n.id for n in people.nodes]  # the seed stays, whatever its type
    assert {n.id for n in people.nodes} == {five, one, two, three}
    cut = neo4j.neighborhood(workspace_id=ws, seeds=[one], hops=3, limit=2)
    assert [n.id for n in cut.nodes] == [one, two]  # depth 1: higher degree first
    assert cut.truncated

    path = neo4j.shortest_path(workspace_id=ws, source=one, target=four)
    assert path is not None
    assert [(n.id, n.depth) for n in path.nodes] == [(one, 0), (two, 1), (three, 2), (four, 3)]
    assert [e.id for e in path.edges] == [ws + 11, ws + 12, ws + 13]
    assert neo4j.shortest_path(workspace_id=ws, source=one, target=four, max_hops=2) is None
    assert (
        neo4j.shortest_path(workspace_id=ws, source=one, target=four, relation_types=["knows"])
        is None
    )
    alone = neo4j.shortest_path(workspace_id=ws, source=two, target=two)
    assert alone is not None
    assert [n.id for n in alone.nodes] == [two]
    assert alone.edges == []

    assert [n.id for n in neo4j.hubs(workspace_id=ws, limit=2)] == [two, one]
    assert [n.id for n in neo4j.hubs(workspace_id=ws, entity_type="concept")] == [five]

    stats = neo4j.stats(workspace_id=ws)
    assert (stats.entities, stats.relations) == (5, 5)
    assert stats.entities_by_type == {"person": 4, "concept": 1}
    assert stats.relations_by_type == {"knows": 4, "likes": 1}
    assert stats.degree_distribution == {"1": 2, "2-3": 3}
    assert stats.max_degree == 3


@needs_server
def test_nothing_crosses_workspaces(neo4j, workspace_ids):
    ours, theirs = workspace_ids(), workspace_ids()
    neo4j.upsert_entities([entity(ours, 1), entity(theirs, 1)])
    neo4j.upsert_relations([relation(theirs, 11, 1, 1)])
    assert neo4j.subgraph(workspace_id=ours, ids=[theirs + 1]).nodes == []
    assert neo4j.neighborhood(workspace_id=ours, seeds=[theirs + 1]).nodes == []
    assert neo4j.shortest_path(workspace_id=ours, source=theirs + 1, target=theirs + 1) is None
    neo4j.delete_entities(workspace_id=ours, ids=[theirs + 1])
    neo4j.clear_workspace(workspace_id=ours)
    assert neo4j.stats(workspace_id=theirs).entities == 1
    assert neo4j.stats(workspace_id=theirs).relations == 1


@needs_server
def test_a_repointed_relation_moves_instead_of_doubling(neo4j, workspace_ids):
    ws = workspace_ids()
    neo4j.upsert_entities([entity(ws, 1), entity(ws, 2), entity(ws, 3)])
    neo4j.upsert_relations([relation(ws, 11, 1, 2)])
    neo4j.upsert_relations([relation(ws, 11, 1, 3)])
    edges = neo4j.subgraph(workspace_id=ws, ids=[ws + 1, ws + 2, ws + 3]).edges
    assert [(e.id, e.source, e.target) for e in edges] == [(ws + 11, ws + 1, ws + 3)]


@needs_server
def test_deleting_entities_detaches_their_relations(neo4j, workspace_ids):
    ws = workspace_ids()
    neo4j.upsert_entities([entity(ws, 1), entity(ws, 2), entity(ws, 3)])
    neo4j.upsert_relations([relation(ws, 11, 1, 2), relation(ws, 12, 2, 3)])
    neo4j.delete_entities(workspace_id=ws, ids=[ws + 2])
    neo4j.delete_relations(workspace_id=ws, ids=[ws + 12])  # gone already: no error
    stats = neo4j.stats(workspace_id=ws)
    assert (stats.entities, stats.relations) == (2, 0)


@needs_server
def test_a_relation_to_a_missing_entity_creates_it_bare(neo4j, workspace_ids):
    ws = workspace_ids()
    neo4j.upsert_relations([relation(ws, 11, 1, 2)])
    nodes = neo4j.subgraph(workspace_id=ws, ids=[ws + 1, ws + 2]).nodes
    assert [(n.id, n.name, n.type, n.degree) for n in nodes] == [
        (ws + 1, "", "", 1),
        (ws + 2, "", "", 1),
    ]
    neo4j.upsert_entities([entity(ws, 1)])
    assert neo4j.subgraph(workspace_id=ws, ids=[ws + 1]).nodes[0].name == "n1"


@needs_server
def test_a_rebuild_from_postgres_answers_like_postgres(alice, neo4j, settings):
    from knowledge.actions.schema import do_ensure_default_schema
    from knowledge.graph.sync import do_sync_workspace
    from knowledge.models import Entity, EntityType, Relation, RelationType

    forget_graph_backends()
    settings.GRAPH_BACKENDS = {
        "default": {"BACKEND": NEO4J_BACKEND, "OPTIONS": {**neo4j.options, "BATCH_SIZE": 2}}
    }
    try:
        ws = alice.workspace
        do_ensure_default_schema(workspace=ws)
        person = EntityType.objects.get(workspace=ws, name="person")
        works_for = RelationType.objects.get(workspace=ws, name="works_for")
        people = [
            Entity.objects.create(workspace=ws, name=n, canonical_name=n.lower(), type=person)
            for n in ("Ada", "Bob", "Cy")
        ]
        Relation.objects.create(workspace=ws, source=people[0], target=people[1], type=works_for)
        report = do_sync_workspace(workspace=ws)
        assert (report.entities, report.relations) == (3, 1)
        backend = get_graph_backend()
        near = backend.neighborhood(workspace_id=ws.pk, seeds=[people[0].pk])
        assert [n.name for n in near.nodes] == ["Ada", "Bob"]
        assert [e.type for e in near.edges] == ["works_for"]
    finally:
        get_graph_backend().clear_workspace(workspace_id=alice.workspace.pk)
        forget_graph_backends()
