"""A small workspace next to a larger one whose vectors crowd its neighbourhood still gets
its true nearest chunks, entities and names (issue 20).

The HNSW indexes are shared by all workspaces: walking one from the query reaches the
larger workspace's rows first, and drops them. Here the larger workspace's vectors are all
closer to the query than any of the small one's, so the first rows an index walk reads are
never the small workspace's. The database of the test is far smaller than the benchmark's
(bench/vector_recall.py: 1M chunks, where a walk reads at most 20,000 vectors), so the
walk's bound is scaled down with it (hnsw.max_scan_tuples, VECTOR_MAX_SCAN_TUPLES), and
the crowd is larger than the 40 rows an index scan without iterative scan reads. The
expected answers are computed here, in numpy, not by the database.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from django.db import connection

from knowledge.retrieval.signals.vector import vector_signals
from knowledge.retrieval.types import QueryVector
from knowledge.selectors.matching import nearest_by_embedding, nearest_by_embeddings
from tests.support import module_rows
from tests.vector_rows import fill_vectors
from workspaces.actions.workspaces import do_create_workspace

pytestmark = pytest.mark.django_db

DIM = 384
MODEL = "test-vectors"
CROWD = 1500  # rows of the larger workspace, all nearer the query than the small one's
SMALL = 30
SCAN_BOUND = 100  # a walk's bound at this size (20,000 of 1M in the benchmark)
K = 10


def _around(centre: np.ndarray, cos: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n unit vectors at about `cos` from `centre` (random noise is nearly orthogonal in
    384-d, so its norm sets the angle)."""
    noise = rng.standard_normal((n, DIM)) * ((1 / cos**2 - 1) ** 0.5 / DIM**0.5)
    vectors = centre + noise
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def crowd_rows(django_db_setup, django_db_blocker) -> Iterator[dict[str, Any]]:
    """The query, the small workspace, its rows' ids and vectors, beside a crowd: written
    once for the module (`module_rows`: 3,000 vectors into the HNSW indexes)."""
    with module_rows(django_db_blocker):
        yield _crowd()


@pytest.fixture
def crowded(crowd_rows: dict[str, Any], settings) -> dict[str, Any]:
    settings.VECTOR_MAX_SCAN_TUPLES = SCAN_BOUND
    return crowd_rows


def _crowd() -> dict[str, Any]:
    rng = np.random.default_rng(20)
    query = rng.standard_normal(DIM)
    query /= np.linalg.norm(query)
    crowd = do_create_workspace(slug="crowd")
    fill_vectors(
        crowd, _around(query, 0.97, CROWD, rng), _around(query, 0.97, CROWD, rng), model=MODEL
    )
    small = do_create_workspace(slug="small")
    chunk_vectors = _around(query, 0.88, SMALL, rng)
    name_vectors = _around(query, 0.9, SMALL, rng)
    ids = fill_vectors(small, chunk_vectors, name_vectors, model=MODEL)
    with connection.cursor() as cursor:
        # As autovacuum would: the planner knows how the rows split between workspaces.
        cursor.execute("ANALYZE ingest_chunk")
        cursor.execute("ANALYZE knowledge_entity")
        # The plan a large database gets: at 1M chunks the planner walks the HNSW index
        # for a workspace of 20,000 (bench/vector_recall.py); in a database this small it
        # would read the workspace's rows and sort them, so sorting is priced out here
        # (for this module's transaction). An exact comparison, which only a sort can
        # answer, still sorts.
        cursor.execute("SELECT set_config('enable_sort', 'off', true)")
        # The walk's bound of this module's transaction, for code that sets none of its own.
        cursor.execute("SELECT set_config('hnsw.max_scan_tuples', %s, true)", [str(SCAN_BOUND)])
    return {
        "query": query,
        "small": small,
        "ids": ids,
        "chunk_vectors": chunk_vectors,
        "name_vectors": name_vectors,
    }


def _exact(ids: list[int], vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    order = np.argsort(-(vectors @ query), kind="stable")
    return [ids[i] for i in order[:k]]


# The small workspace's 30 rows are compared exactly (the default bound), or the index is
# walked for them and the short walk redone exactly (a bound of 0 rows).
@pytest.mark.parametrize("exact_max_rows", [10_000, 0])
def test_small_workspace_gets_its_true_neighbours(crowded, settings, exact_max_rows):
    settings.VECTOR_EXACT_MAX_ROWS = exact_max_rows
    query, small, ids = crowded["query"], crowded["small"], crowded["ids"]
    chunks, entities = vector_signals(
        small.pk, QueryVector(model=MODEL, values=query.tolist()), K, None, None
    )
    assert [pk for pk, _ in chunks] == _exact(ids["chunks"], crowded["chunk_vectors"], query, K)
    assert [pk for pk, _ in entities] == _exact(ids["entities"], crowded["name_vectors"], query, K)
    # Consolidation's nearest name of the type (similar enough to be offered for review).
    match = nearest_by_embedding(small, ids["type"], query.tolist(), model=MODEL)
    assert match is not None
    assert match[0].pk == _exact(ids["entities"], crowded["name_vectors"], query, 1)[0]


@pytest.mark.parametrize("exact_max_rows", [10_000, 0])
def test_nearest_names_of_a_batch_are_each_vector_s_own(crowded, settings, exact_max_rows):
    """Consolidation asks for a window's new names in one statement: each vector still gets
    the nearest name it gets alone (exactly its true nearest when compared exactly), and a
    vector near none of them gets none."""
    settings.VECTOR_EXACT_MAX_ROWS = exact_max_rows
    query, small, ids = crowded["query"], crowded["small"], crowded["ids"]
    rng = np.random.default_rng(21)
    far = rng.standard_normal(DIM)
    far /= np.linalg.norm(far)
    near = _around(query, 0.97, 3, rng)
    asked = [near[0], far, query, near[1], near[2]]
    matches = nearest_by_embeddings(small, [(ids["type"], v.tolist()) for v in asked], model=MODEL)
    alone = [nearest_by_embedding(small, ids["type"], v.tolist(), model=MODEL) for v in asked]
    assert [m and m[0].pk for m in matches] == [m and m[0].pk for m in alone]
    assert matches[1] is None
    assert sum(m is not None for m in matches) == 4
    if exact_max_rows:
        for vector, match in zip(asked, matches, strict=True):
            if match is not None:
                nearest = _exact(ids["entities"], crowded["name_vectors"], vector, 1)[0]
                assert match[0].pk == nearest
