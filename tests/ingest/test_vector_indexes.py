"""A workspace too large to compare exactly and too small a share of the database gets an
HNSW index of its own chunk vectors and entity-name vectors (ingest/actions/
vector_indexes.py), built by the `vector_indexes` upkeep job (knowledge/hooks.py), which
its searches then walk instead of the shared indexes.

Sizes are scaled down with VECTOR_EXACT_MAX_ROWS (10,000 in production, 40 here). The
builds are CONCURRENTLY, as in production, so these tests commit (transaction=True).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from django.db import OperationalError, connection, transaction
from django.test.utils import CaptureQueriesContext

from ingest import selectors
from ingest.actions.vector_indexes import do_create_workspace_vector_index
from ingest.models import Chunk
from ingest.selectors import vector_indexes
from ingest.vector_tables import CHUNK_VECTORS
from knowledge.hooks import maintain_vector_indexes
from knowledge.models import ENTITY_VECTORS, Entity, EntityType
from knowledge.retrieval.signals.vector import vector_signals
from knowledge.retrieval.types import QueryVector
from knowledge.selectors.matching import nearest_by_embedding
from tests.vector_rows import fill_vectors
from workspaces.actions.workspaces import (
    do_create_workspace,
    do_delete_workspace,
    do_request_workspace_deletion,
)
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db(transaction=True)

DIM = 384
MODEL = "test-vectors"
BOUND = 40
K = 10


def _fill(workspace: Workspace, vectors: np.ndarray) -> list[int]:
    """Chunks with `vectors`, and active entities of one type with the same vectors."""
    ids: list[int] = fill_vectors(workspace, vectors, vectors, model=MODEL)["chunks"]
    return ids


def _own_indexes() -> list[Any]:
    return vector_indexes(CHUNK_VECTORS)[1] + vector_indexes(ENTITY_VECTORS)[1]


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def tenants(settings) -> Iterator[dict[str, Any]]:
    """A big tenant (most of the chunks), a medium one above the bound, a small one below."""
    settings.VECTOR_EXACT_MAX_ROWS = BOUND
    settings.VECTOR_WORKSPACE_INDEX_MAX_SHARE = 0.5
    rng = np.random.default_rng(7)
    big, medium, small = (do_create_workspace(slug=s) for s in ("big", "medium", "small"))
    _fill(big, _unit(rng, 300))
    medium_vectors = _unit(rng, 60)
    medium_ids = _fill(medium, medium_vectors)
    _fill(small, _unit(rng, 10))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_chunk")
        cursor.execute("ANALYZE knowledge_entity")
    selectors._own_indexes.clear()  # searches read the catalog again at most once a minute
    yield {"big": big, "medium": medium, "ids": medium_ids, "vectors": medium_vectors}
    with connection.cursor() as cursor:
        for index in _own_indexes():
            cursor.execute(f"DROP INDEX IF EXISTS {index.name}")


def _walks(workspace: Workspace, query: np.ndarray) -> dict[str, tuple[str, list[str]]]:
    """For the chunk walk ("c") and the entity walk ("e") of a search of `workspace`: the
    plan, as the search sends it, with sorting priced out (at 1M chunks the planner walks
    an index for a workspace of 20,000 rows, bench/vector_recall.py; in a database this
    small it would sort), and the statements the search sent before it."""
    with CaptureQueriesContext(connection) as captured:
        vector_signals(workspace.pk, QueryVector(model=MODEL, values=query.tolist()), K, None, None)
    sent = [q["sql"] for q in captured]
    walks = {}
    for alias in ("c", "e"):
        at = next(
            i for i, sql in enumerate(sent) if f"({alias}.embedding::vector({DIM})) <=>" in sql
        )
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT set_config('enable_sort', 'off', true)")
            cursor.execute(f"EXPLAIN (FORMAT JSON) {sent[at]}")
            walks[alias] = (json.dumps(cursor.fetchone()[0]), sent[:at])
    return walks


def test_a_medium_workspace_gets_its_own_indexes_and_its_searches_walk_them(tenants):
    outcome = maintain_vector_indexes()
    assert (outcome.kind, outcome.message) == (
        "ok",
        "2 workspace vector index(es) built, 0 dropped, 2 in place",
    )
    medium = tenants["medium"].pk
    chunks_own = f"chunk_embedding_hnsw_{DIM}_ws{medium}"
    names_own = f"entity_embedding_hnsw_{DIM}_ws{medium}"
    assert outcome.details["built"] == [chunks_own, names_own]
    assert [(i.name, i.workspace_id, i.valid) for i in _own_indexes()] == [
        (chunks_own, medium, True),
        (names_own, medium, True),
    ]
    query = _unit(np.random.default_rng(8), 1)[0]
    # The medium workspace's walks are its own indexes, with the larger candidate list a
    # walk of a workspace's own rows needs for questions far from all of them; the big
    # tenant's walks are the shared indexes', with the shared indexes' list.
    walks = _walks(tenants["medium"], query)
    assert f'"Index Name": "{chunks_own}"' in walks["c"][0]
    assert f'"Index Name": "{names_own}"' in walks["e"][0]
    assert "set_config('hnsw.ef_search', '600', true)" in walks["c"][1][-1]
    assert not any("ef_search" in sql for sql in walks["e"][1][len(walks["c"][1]) + 1 :])
    walks = _walks(tenants["big"], query)
    assert f'"Index Name": "chunk_embedding_hnsw_{DIM}"' in walks["c"][0]
    assert f'"Index Name": "entity_embedding_hnsw_{DIM}"' in walks["e"][0]
    assert not any("'600'" in sql for sql in walks["e"][1])
    # Walking its own rows only, the search finds the workspace's true nearest chunks and
    # names, and consolidation its nearest name.
    chunks, names = vector_signals(
        medium, QueryVector(model=MODEL, values=query.tolist()), K, None, None
    )
    order = np.argsort(-(tenants["vectors"] @ query), kind="stable")[:K]
    assert [pk for pk, _ in chunks] == [tenants["ids"][i] for i in order]
    assert [Entity.objects.get(pk=pk).name for pk, _ in names] == [f"Name {i}" for i in order]
    # Consolidation's nearest name walks the workspace's index with the same list.
    near = tenants["vectors"][3] + 0.02 * _unit(np.random.default_rng(9), 1)[0]
    entity_type = EntityType.objects.filter(workspace=medium).order_by("name")[0]
    with CaptureQueriesContext(connection) as captured:
        match = nearest_by_embedding(tenants["medium"], entity_type, near.tolist(), model=MODEL)
    assert match is not None and match[0].name == "Name 3"
    assert any("set_config('hnsw.ef_search', '600', true)" in q["sql"] for q in captured)
    # A second run finds everything in place.
    assert maintain_vector_indexes().message == (
        "0 workspace vector index(es) built, 0 dropped, 2 in place"
    )


def test_an_interrupted_build_is_rebuilt_and_a_shrunk_workspace_loses_its_index(tenants):
    medium = tenants["medium"]
    # A build waits for the writes in flight when it starts; one is held open past the
    # build's statement timeout, so the build is cancelled half-way, as a stopped worker's.
    writer = connection.get_new_connection(connection.get_connection_params())
    writer.autocommit = False
    with writer.cursor() as held:
        held.execute(
            "UPDATE ingest_chunk SET ordinal = ordinal WHERE workspace_id = %s", [medium.pk]
        )
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = '1s'")
        try:
            with pytest.raises(OperationalError):
                do_create_workspace_vector_index(workspace_id=medium.pk, dimension=DIM)
        finally:
            cursor.execute("RESET statement_timeout")
            writer.rollback()
            writer.close()
    # A cancelled CREATE INDEX CONCURRENTLY leaves an invalid index behind.
    assert [i.valid for i in _own_indexes()] == [False]
    outcome = maintain_vector_indexes()
    assert outcome.message == "2 workspace vector index(es) built, 1 dropped, 2 in place"
    assert [i.valid for i in _own_indexes()] == [True, True]
    # Down to half the bound (and below), the workspace is compared exactly again.
    Chunk.objects.filter(workspace=medium, ordinal__gte=BOUND // 2).delete()
    outcome = maintain_vector_indexes()
    assert outcome.message == "0 workspace vector index(es) built, 1 dropped, 1 in place"
    assert [i.name for i in _own_indexes()] == [f"entity_embedding_hnsw_{DIM}_ws{medium.pk}"]


def test_an_index_built_with_another_ef_construction_is_built_again(tenants, settings):
    settings.VECTOR_WORKSPACE_INDEX_EF_CONSTRUCTION = 64
    maintain_vector_indexes()
    assert [i.ef_construction for i in _own_indexes()] == [64, 64]
    settings.VECTOR_WORKSPACE_INDEX_EF_CONSTRUCTION = 200
    outcome = maintain_vector_indexes()
    assert outcome.message == "2 workspace vector index(es) built, 2 dropped, 2 in place"
    assert [(i.ef_construction, i.valid) for i in _own_indexes()] == [(200, True), (200, True)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE relname = %s",
            [f"chunk_embedding_hnsw_{DIM}_ws{tenants['medium'].pk}"],
        )
        assert cursor.fetchone()[0] == ["ef_construction=200"]
    # Built with the value configured: kept as it is.
    outcome = maintain_vector_indexes()
    assert outcome.message == "0 workspace vector index(es) built, 0 dropped, 2 in place"


def test_turned_off_the_job_drops_the_workspace_indexes(tenants, settings):
    maintain_vector_indexes()
    assert len(_own_indexes()) == 2
    settings.VECTOR_WORKSPACE_INDEX_MAX_SHARE = 0
    outcome = maintain_vector_indexes()
    assert (outcome.kind, outcome.message) == (
        "skipped",
        "VECTOR_WORKSPACE_INDEX_MAX_SHARE is 0: no workspace indexes (2 dropped)",
    )
    assert _own_indexes() == []


def test_deleting_a_workspace_drops_its_own_indexes(tenants):
    maintain_vector_indexes()
    medium, big = tenants["medium"], tenants["big"]
    assert {i.workspace_id for i in _own_indexes()} == {medium.pk}
    do_request_workspace_deletion(workspace=medium, actor=None, in_background=False)
    assert do_delete_workspace(workspace_id=medium.pk) is True
    assert _own_indexes() == []
    assert Chunk.objects.filter(workspace=big).count() == 300
