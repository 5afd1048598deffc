"""gzip for large data answers only (config/compression.py): the bulk graph and exports
come back compressed and decode to exactly the uncompressed bytes; token endpoints and
HTML pages never are (BREACH: a secret next to attacker-chosen text)."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.knowledge.graph_data import make_graph
from tests.support import signed_in
from workspaces.actions.tokens import do_create_api_token

pytestmark = pytest.mark.django_db

GZIP = {"Accept-Encoding": "gzip, deflate, br"}


def streamed(response) -> bytes:
    assert response.status_code == 200
    assert response.streaming
    return b"".join(response.streaming_content)


@pytest.fixture
def graph(alice):
    names = [f"Harbour Company {i:03d}" for i in range(150)]
    relations = [(names[i], names[i + 1], "part_of") for i in range(len(names) - 1)]
    return make_graph(
        alice.workspace, entities=dict.fromkeys(names, "organization"), relations=relations
    )


def test_bulk_graph_is_gzipped_and_decodes_to_the_same_graph(alice, graph):
    client = alice.client()
    url = "/api/v1/workspaces/acme/graph?hubs=500"
    plain = client.get(url)
    packed = client.get(url, headers=GZIP)
    assert plain.status_code == packed.status_code == 200
    assert not plain.has_header("Content-Encoding")
    assert packed["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed["Vary"]
    assert len(packed.content) < len(plain.content) / 3
    assert gzip.decompress(packed.content) == plain.content
    assert len(json.loads(plain.content)["nodes"]) == 150


def test_bulk_graph_post_is_gzipped_too(alice, graph):
    ids = [entity.pk for entity in graph.entities.values()]
    url = "/api/v1/workspaces/acme/graph"
    body = json.dumps({"ids": ids})
    plain = alice.client().post(url, body, content_type="application/json")
    packed = alice.client().post(url, body, content_type="application/json", headers=GZIP)
    assert packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.content) == plain.content


def test_streamed_export_stays_streamed_and_decodes_to_the_same_bytes(alice, graph):
    url = "/api/v1/workspaces/acme/export?format=graphml"
    plain = alice.client().get(url)
    packed = alice.client().get(url, headers=GZIP)
    assert packed["Content-Encoding"] == "gzip"
    assert not packed.has_header("Content-Length")
    unpacked = gzip.decompress(streamed(packed))
    assert unpacked == streamed(plain)
    assert b"Harbour Company 149" in unpacked


def test_entities_csv_export_is_gzipped(alice, graph):
    client = signed_in(alice)
    packed = client.get("/entities/export.csv?ws=acme", headers=GZIP)
    assert packed["Content-Encoding"] == "gzip"
    assert b"Harbour Company 042" in gzip.decompress(streamed(packed))


def test_token_creation_is_never_compressed(alice):
    session = signed_in(alice)
    session.get("/")
    csrf = session.cookies["csrftoken"].value
    # A name the attacker would choose, long enough that size alone would not spare it.
    created = session.post(
        "/api/v1/workspaces/acme/tokens",
        json.dumps({"name": "guess-glm_" + "a" * 90}),
        content_type="application/json",
        headers={"X-CSRFToken": csrf, **GZIP},
    )
    assert created.status_code == 201
    assert created.json()["token"].startswith("glm_")
    assert not created.has_header("Content-Encoding")


def test_token_listing_is_never_compressed_however_long(alice):
    for i in range(30):
        do_create_api_token(workspace=alice.workspace, user=alice.user, name=f"agent-{i:02d}")
    listed = signed_in(alice).get("/api/v1/workspaces/acme/tokens", headers=GZIP)
    assert listed.status_code == 200
    assert len(listed.content) > 2048
    assert not listed.has_header("Content-Encoding")


def test_html_pages_are_never_compressed(alice, graph):
    page = signed_in(alice).get("/entities/?ws=acme", headers=GZIP)
    assert page.status_code == 200
    assert page["Content-Type"].startswith("text/html")
    assert len(page.content) > 2048
    assert b"csrfmiddlewaretoken" in page.content or b"csrf" in page.content.lower()
    assert not page.has_header("Content-Encoding")


def test_small_answers_are_left_alone(alice):
    # A view with no saved layout: a few dozen bytes of JSON from a compressible route.
    response = signed_in(alice).get("/api/v1/workspaces/acme/layouts?view=hubs", headers=GZIP)
    assert response.status_code == 200
    assert len(response.content) < 1024
    assert not response.has_header("Content-Encoding")
