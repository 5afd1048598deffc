"""Whether a workspace is small enough for exact vector comparison is counted on every
search until it is found too large; that answer is then kept a while (counting 10,000 rows
of a large workspace cost every search 2-4 ms), and the ranking is the same either way."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ingest.models import Chunk, Document, Source
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.models import Entity, EntityType
from knowledge.retrieval.signals import vector
from knowledge.retrieval.signals.vector import vector_signals
from knowledge.retrieval.types import QueryVector
from workspaces.actions.workspaces import do_create_workspace

pytestmark = pytest.mark.django_db

DIM = 384
MODEL = "test-vectors"
ROWS = 6


@pytest.fixture
def filled() -> dict[str, Any]:
    """A workspace of ROWS chunks and ROWS active entities with random vectors, and a query."""
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((2 * ROWS + 1, DIM))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    workspace = do_create_workspace(slug="counted")
    source = Source.objects.create(workspace=workspace, kind="upload", name="vectors")
    document = Document.objects.create(workspace=workspace, source=source, path="v.txt")
    Chunk.objects.bulk_create(
        Chunk(
            workspace=workspace, document=document, ordinal=i, text=f"chunk {i}",
            char_start=0, char_end=8, token_count=2, content_hash=f"h-{i}",
            embedding=vectors[i].tolist(), embedding_model=MODEL, embedding_dim=DIM,
        )
        for i in range(ROWS)
    )  # fmt: skip
    do_ensure_default_schema(workspace=workspace)
    entity_type = EntityType.objects.filter(workspace=workspace).order_by("name").first()
    assert entity_type is not None
    Entity.objects.bulk_create(
        Entity(
            workspace=workspace, type=entity_type, name=f"Name {i}", canonical_name=f"name {i}",
            embedding=vectors[ROWS + i].tolist(), embedding_model=MODEL, embedding_dim=DIM,
        )
        for i in range(ROWS)
    )  # fmt: skip
    return {"workspace": workspace, "query": QueryVector(MODEL, vectors[-1].tolist())}


def _search(filled: dict[str, Any]) -> tuple[Any, list[str]]:
    """The vector signals, and the statements that counted the workspace's rows."""
    with CaptureQueriesContext(connection) as captured:
        found = vector_signals(filled["workspace"].pk, filled["query"], 5, None, None)
    counts = [q["sql"] for q in captured.captured_queries if "count(*)" in q["sql"]]
    return found, counts


def test_a_large_workspace_is_counted_once_then_remembered(filled, settings, monkeypatch):
    settings.VECTOR_EXACT_MAX_ROWS = ROWS - 1  # both tables are "too many" to compare
    first, counted = _search(filled)
    assert len(counted) == 1
    assert "ingest_chunk" in counted[0]
    assert "knowledge_entity" in counted[0]
    second, counted = _search(filled)
    assert counted == []
    assert second == first
    assert [pk for pk, _ in first[0]] != []
    # Once the answer is older than LARGE_TTL_SECONDS it is counted again.
    monkeypatch.setattr(vector, "LARGE_TTL_SECONDS", 0.0)
    third, counted = _search(filled)
    assert len(counted) == 1
    assert third == first


def test_a_small_workspace_is_counted_on_every_search(filled, settings):
    settings.VECTOR_EXACT_MAX_ROWS = ROWS  # few enough: compared exactly, never remembered
    first, counted = _search(filled)
    assert len(counted) == 1
    second, counted = _search(filled)
    assert len(counted) == 1
    assert second == first


def test_only_the_table_found_large_is_remembered(filled, settings):
    settings.VECTOR_EXACT_MAX_ROWS = ROWS - 1
    Entity.objects.filter(workspace=filled["workspace"], name="Name 0").update(state="deleted")
    _search(filled)  # chunks: 6 > 5, remembered; active entities: 5, counted again
    _, counted = _search(filled)
    assert len(counted) == 1
    assert "knowledge_entity" in counted[0]
    assert "ingest_chunk" not in counted[0]
