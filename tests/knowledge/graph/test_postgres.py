"""What only the Postgres backend promises on top of the conformance suite: its statement
counts, its edge cap, and that a path search leaves the session's settings as it found them."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from knowledge.graph import postgres
from knowledge.graph.postgres import PostgresGraphBackend
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


def test_a_neighbourhood_is_two_statements_whatever_its_size(
    graph_backend, shapes: Shapes, django_assert_num_queries
):
    with django_assert_num_queries(2):
        small = graph_backend.neighborhood(workspace_id=shapes.ws, seeds=[shapes["c0"]])
    with django_assert_num_queries(2):
        large = graph_backend.neighborhood(
            workspace_id=shapes.ws, seeds=[shapes["h"], shapes["c0"]], hops=3, limit=1000
        )

    assert len(small.nodes) == 2
    assert len(large.nodes) > 300


def test_a_path_search_costs_a_statement_per_level_plus_five(
    graph_backend, shapes: Shapes, django_assert_num_queries
):
    # the ends, 4 levels (c0 -> c1, c4 -> c3, c1 -> c2, c3 meets c2), the path's nodes and
    # edges, the setting changed and put back
    with django_assert_num_queries(9):
        path = graph_backend.shortest_path(
            workspace_id=shapes.ws, source=shapes["c0"], target=shapes["c4"]
        )

    assert path is not None
    assert path.length == 4


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
