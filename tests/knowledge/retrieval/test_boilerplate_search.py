"""Boilerplate chunks (text a source repeats on its pages: ingest/boilerplate.py) are never
search results: neither the keyword nor the vector signal returns them, so hybrid retrieval
does not either, and both queries keep using their indexes."""

from __future__ import annotations

import re

import pytest
from django.contrib.postgres.search import SearchQuery
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from ingest.actions.sources import do_add_file, do_create_source, do_start_source
from ingest.embeddings import get_embedder
from ingest.models import Chunk, Source
from knowledge.retrieval import hybrid_search
from knowledge.retrieval.signals.keyword import keyword_signal
from knowledge.retrieval.signals.vector import vector_signals
from knowledge.retrieval.types import QueryVector
from tests.ingest.test_boilerplate import markdown_page
from tests.support import run_pending

pytestmark = pytest.mark.django_db

# Mostly the footer's words, with one word of the content ("founded") so that something
# is found.
QUERY = "Samantha Whitfield founded the Initech Documentation Portal in Cleveland"


@pytest.fixture
def portal(alice) -> Source:
    """Six pages sharing a menu, a notice and a footer (boilerplate from the third on)."""
    source = do_create_source(workspace=alice.workspace, kind="upload", name="portal")
    for i in range(6):
        do_add_file(source=source, path=f"topic-{i}.md", chunks=[markdown_page(i)])
    do_start_source(source=source, enqueue=False)
    run_pending(source)
    flagged = Chunk.objects.filter(document__source=source, boilerplate=True)
    # What the searches below must not return does match the query.
    footer = SearchQuery("Samantha Whitfield Initech Cleveland", search_type="websearch")
    assert flagged.filter(search_vector=footer).exists()
    assert flagged.filter(embedding__isnull=False).count() == flagged.count() > 0
    return source


def query_vector() -> QueryVector:
    embedder = get_embedder()
    return QueryVector(model=embedder.model_id, values=embedder.encode([QUERY])[0])


def test_no_signal_and_no_search_returns_boilerplate(alice, portal):
    boilerplate = set(Chunk.objects.filter(boilerplate=True).values_list("pk", flat=True))
    keyword = keyword_signal(alice.workspace.pk, QUERY, 50, None)
    vector, _ = vector_signals(alice.workspace.pk, query_vector(), 50, None, None)
    assert keyword and vector
    assert not {pk for pk, _ in keyword} & boilerplate
    assert not {pk for pk, _ in vector} & boilerplate
    result = hybrid_search(workspace=alice.workspace, query=QUERY, limit=20)
    assert result.chunks
    assert not {hit.id for hit in result.chunks} & boilerplate
    assert all("Samantha Whitfield" not in hit.text for hit in result.chunks)
    # Restricted to the source, the same.
    scoped = hybrid_search(workspace=alice.workspace, query=QUERY, limit=20, sources=[portal.pk])
    assert not {hit.id for hit in scoped.chunks} & boilerplate


def indexes_used(sql: str) -> set[str]:
    """The indexes in the plan of `sql` (sequential scans off: the test tables are tiny)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_chunk")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    return set(re.findall(r"(?:Index Scan|Index Only Scan|Bitmap Index Scan) on (\w+)", plan))


def test_both_signals_keep_the_plans_they_had(alice, portal):
    """The filter adds a condition to the rows the indexes yield, nothing else: each plan
    uses the indexes it uses without it. (On a real corpus: docs/operations.md.)"""
    with CaptureQueriesContext(connection) as keyword_queries:
        keyword_signal(alice.workspace.pk, QUERY, 50, None)
    keyword_sql = next(q["sql"] for q in keyword_queries if "ts_rank_cd" in q["sql"])
    with CaptureQueriesContext(connection) as vector_queries:
        vector_signals(alice.workspace.pk, query_vector(), 50, None, None)
    vector_sql = next(
        q["sql"] for q in vector_queries if "FROM ingest_chunk" in q["sql"] and "<=>" in q["sql"]
    )
    for sql in (keyword_sql, vector_sql):
        assert "NOT c.boilerplate" in sql
        unfiltered = sql.replace(" AND NOT c.boilerplate", "")
        assert indexes_used(sql) == indexes_used(unfiltered) != set()
