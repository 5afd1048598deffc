"""pgvector on the suite's database: the extension from the first migration, HNSW in plans."""

from __future__ import annotations

import random

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_first_migration_installed_the_vector_extension():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
    assert tuple(int(x) for x in version.split(".")[:2]) >= (0, 7)


def test_hnsw_cosine_index_is_built_and_chosen_by_the_planner():
    rng = random.Random(7)
    rows = [[rng.uniform(-1, 1) for _ in range(384)] for _ in range(3000)]
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE hnsw_probe (id bigserial PRIMARY KEY, embedding vector(384))")
        cursor.executemany(
            "INSERT INTO hnsw_probe (embedding) VALUES (%s::vector)", [(str(v),) for v in rows]
        )
        cursor.execute(
            "CREATE INDEX hnsw_probe_embedding ON hnsw_probe USING hnsw (embedding vector_cosine_ops)"
        )
        cursor.execute("ANALYZE hnsw_probe")
        query = "SELECT id FROM hnsw_probe ORDER BY embedding <=> %s::vector LIMIT 5"
        cursor.execute("EXPLAIN " + query, [str(rows[0])])
        plan = "\n".join(line for (line,) in cursor.fetchall())
        cursor.execute(query, [str(rows[0])])
        nearest = [row[0] for row in cursor.fetchall()]
    assert "Index Scan using hnsw_probe_embedding" in plan, plan
    assert nearest[0] == 1  # the query vector itself is its own nearest neighbour
