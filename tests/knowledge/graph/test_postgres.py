"""What only the Postgres backend promises on top of the conformance suite: one statement per
query whatever its size, its edge cap, and that a path search leaves the session's settings
as it found them."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from knowledge.graph import postgres
from knowledge.graph.postgres import PostgresGraphBackend
from knowledge.models import Entity, EntityType, Relation, RelationType
from tests.knowledge.graph.conftest import Shapes


@pytest.fixture
def graph_backend() -> PostgresGraphBackend:
    """The shapes of conftest.py, in Postgres only."""
    return PostgresGraphBackend("test", {})


def parallel_setting() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        row = cursor.fetchone()
    assert row is not None
    return str(row[0])


def test_a_neighbourhood_is_one_statement_whatever_its_size(
    graph_backend, shapes: Shapes, django_assert_num_queries
):
    with django_assert_num_queries(1):
        small = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["c0"]])
    with django_assert_num_queries(1):
        large = graph_backend.neighborhood(
            workspace_id=shapes.ws, seeds=[shapes["h"], shapes["c0"]], hops=3, limit=1000
        )

    assert len(small.nodes) == 2
    assert len(large.nodes) > 300


def test_a_path_search_is_one_statement_whatever_its_length(
    graph_backend, shapes: Shapes, django_assert_num_queries
):
    # 4 levels (c0 -> c1, c4 -> c3, c1 -> c2, c3 meets c2) and the path's rows, in the server
    with django_assert_num_queries(1):
        path = graph_backend.shortest_path(
            workspace_id=shapes.ws, source=shapes["c0"], target=shapes["c4"]
        )

    assert path is not None
    assert path.length == 4


def test_a_paths_edge_is_the_smallest_id_relation_either_way_next_to_a_hub(
    graph_backend, shapes: Shapes
):
    # x -> h first, then h -> x: the hop's edge is looked up among the edges of its
    # lower-degree end (x, degree 2, against the hub's 302), in both directions
    workspace = shapes.home.workspace
    kind = EntityType.objects.get(workspace=workspace, name="person")
    x = Entity.objects.create(workspace=workspace, name="x", canonical_name="x", type=kind)
    owns = RelationType.objects.get(workspace=workspace, name="owns")
    first = Relation.objects.create(workspace=workspace, source=x, target_id=shapes["h"], type=owns)
    Relation.objects.create(workspace=workspace, source_id=shapes["h"], target=x, type=owns)

    for source, target in ((shapes["h"], x.pk), (x.pk, shapes["h"])):
        path = graph_backend.shortest_path(workspace_id=shapes.ws, source=source, target=target)

        assert path is not None
        assert [n.id for n in path.nodes] == [source, target]
        assert [(e.id, e.source, e.target) for e in path.edges] == [(first.pk, x.pk, shapes["h"])]
        assert path.nodes[0].degree + path.nodes[1].degree == 2 + 302


def test_edges_past_the_cap_are_left_out_and_said_so(graph_backend, shapes, monkeypatch):
    monkeypatch.setattr(postgres, "EDGES_PER_NODE", 1)

    result = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["m0"]], limit=2)

    assert len(result.nodes) == 2
    assert result.edges == sorted(result.edges, key=lambda e: e.id)
    assert len(result.edges) == 2  # of the 3 parallel edges
    assert result.truncated


def test_a_path_search_puts_the_parallel_workers_setting_back(graph_backend, shapes: Shapes):
    with connection.cursor() as cursor:
        cursor.execute("SET max_parallel_workers_per_gather = 3")

    graph_backend.shortest_path(workspace_id=shapes.ws, source=shapes["c0"], target=shapes["c4"])
    assert parallel_setting() == "3"

    with transaction.atomic():
        graph_backend.shortest_path(
            workspace_id=shapes.ws, source=shapes["y0"], target=shapes["c4"], max_hops=6
        )
        assert parallel_setting() == "3"
