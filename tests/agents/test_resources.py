"""Resources by URI: an entity, and a span of a document's text (returned as data in a
JSON field), through the official client against the live server."""

from __future__ import annotations

import json

from ingest.models import Document
from tests.agents.conftest import ingest


def test_entity_and_document_span_resources_are_read_by_uri(alice, corpus, session):
    crane = corpus.entities["Crane 7"]
    document = Document.objects.get(source=corpus.crane)
    start = document.text.index("Crane 7 was repaired")
    end = start + len("Crane 7 was repaired by Mirela Ostrova")

    async def fn(client):
        templates = (await client.list_resource_templates()).resource_templates
        listed = (await client.list_resources()).resources
        entity = await client.read_resource(f"graphloom://entities/{crane}")
        span = await client.read_resource(f"graphloom://documents/{document.pk}/span/{start}-{end}")
        return templates, listed, entity, span

    templates, listed, entity, span = session(alice, fn)
    assert [t.uri_template for t in templates] == [
        "graphloom://entities/{entity_id}",
        "graphloom://documents/{document_id}/span/{start}-{end}",
    ]
    assert f"graphloom://entities/{crane}" in {str(r.uri) for r in listed}
    [content] = entity.contents
    assert content.mime_type == "application/json"
    data = json.loads(content.text)
    assert (data["id"], data["name"]) == (crane, "Crane 7")
    assert data["evidence"]
    [content] = span.contents
    data = json.loads(content.text)
    assert data["text"] == "Crane 7 was repaired by Mirela Ostrova"
    assert (data["char_start"], data["char_end"], data["truncated"]) == (start, end, False)
    assert data["document_id"] == document.pk and "data" in data["note"]


def test_a_long_span_is_cut_and_says_where_to_read_on(alice, corpus, session, settings):
    settings.MCP_MAX_RESULT_CHARS = 1000
    long_text = "Tide table. " * 400
    source = ingest(alice, long_text, "Tides")
    document = Document.objects.get(source=source)

    async def fn(client):
        uri = f"graphloom://documents/{document.pk}/span/0-{len(document.text)}"
        return await client.read_resource(uri)

    data = json.loads(session(alice, fn).contents[0].text)
    assert data["truncated"] is True
    assert len(data["text"]) < len(document.text)
    assert data["char_end"] == len(data["text"])
    assert f"(read from {data['char_end']} on)" in data["truncation"]
