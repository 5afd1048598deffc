"""The MCP tools filter on a document's own date as the API does (`published_from` /
`published_to`, `recency`), through the official MCP client against the live server."""

from __future__ import annotations

from datetime import UTC, datetime

from ingest.models import Document
from tests.agents.conftest import CRANE

QUESTION = "Who repaired crane 7?"


def test_search_filters_on_the_documents_own_date_and_says_it(alice, corpus, session):
    Document.objects.filter(workspace=alice.workspace, text__contains="Crane 7").update(
        published_at=datetime(2021, 3, 4, tzinfo=UTC), published_source="html"
    )

    async def fn(client):
        return [
            await client.call_tool("search", {"query": QUESTION, **arguments})
            for arguments in (
                {"published_from": "2021-03-04", "published_to": "2021-03-04"},
                {"published_from": "2021-03-05"},
                {"published_to": "2021-03-03"},
                {"published_from": "2021-01-01", "recency": 0.2},
                {"recency": 3},
                {"published_from": "2021-03-05", "published_to": "2021-03-04"},
            )
        ]

    that_day, after, before, preferred, too_much, inverted = session(alice, fn)
    assert not that_day.is_error
    chunks = that_day.structured_content["chunks"]
    assert chunks and all(CRANE[:40] in c["text"] for c in chunks)
    assert chunks[0]["published_at"] == "2021-03-04T00:00:00Z"
    assert after.structured_content["chunks"] == []
    assert before.structured_content["chunks"] == []  # the undated weather notes are out too
    assert [c["document_id"] for c in preferred.structured_content["chunks"]] == [
        c["document_id"] for c in chunks
    ]
    assert too_much.is_error and "recency" in too_much.content[0].text
    assert inverted.is_error
    assert "published_from: must not be after published_to." in inverted.content[0].text
