"""The explorer's bulk loads as an API endpoint (`GET`/`POST /workspaces/{slug}/graph`):
hubs with the edges among them, given ids, filters, compact JSON, the API's error shape,
the same authentication as any API read (a session needs the CSRF header to post)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.knowledge.graph_data import make_graph, make_lab_graph
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

GRAPH = "/api/v1/workspaces/lab/graph"


@pytest.fixture
def lab(make_member):
    """A viewer of workspace "lab" with a small graph: Ada works for Acme, Acme is in Paris."""
    member = make_member("ada", workspace="lab", role=Role.VIEWER)
    return member, make_lab_graph(member.workspace)


def test_bulk_graph_gives_the_hubs_and_the_edges_among_them_compactly(lab):
    member, built = lab
    response = signed_in(member).get(f"{GRAPH}?hubs=2")
    assert response.status_code == 200
    assert b", " not in response.content and b": " not in response.content
    data = response.json()
    # Acme (degree 2) first, then Ada or Paris (degree 1, more mentions or lower id).
    ids = {n["id"] for n in data["nodes"]}
    assert built.entities["Acme"].pk in ids and len(ids) == 2
    assert data["truncated"] is True and data["count"] == 4
    node = data["nodes"][0]
    assert set(node) == {"id", "name", "type", "degree", "mention_count", "community"}
    assert all(e["source"] in ids and e["target"] in ids for e in data["edges"])
    assert len(data["edges"]) == 1
    everything = signed_in(member).get(f"{GRAPH}?hubs=100").json()
    assert len(everything["nodes"]) == 4 and len(everything["edges"]) == 2
    assert everything["truncated"] is False


def test_bulk_graph_applies_type_and_degree_filters(lab):
    member, built = lab
    client = signed_in(member)
    people = client.get(f"{GRAPH}?hubs=10&types=person,location").json()
    assert {n["name"] for n in people["nodes"]} == {"Ada", "Paris"}
    assert people["edges"] == []
    connected = client.get(f"{GRAPH}?hubs=10&min_degree=1").json()
    assert {n["name"] for n in connected["nodes"]} == {"Ada", "Acme", "Paris"}
    assert client.get(f"{GRAPH}?hubs=10&source={built.source.pk}").json()["count"] == 4
    assert client.get(f"{GRAPH}?hubs=10&seen_before=2000-01-01").json()["nodes"] == []
    assert client.get(f"{GRAPH}?hubs=10&seen_after=2000-01-01").json()["count"] == 4


def test_bulk_graph_posted_ids_leave_out_other_workspaces_and_can_keep_edges_touching(lab, bob):
    member, built = lab
    theirs = make_graph(bob.workspace, entities={"Zed": "person"})
    client = signed_in(member)
    ada, acme, paris = (built.entities[n].pk for n in ("Ada", "Acme", "Paris"))
    body = {"ids": [ada, acme, paris, theirs.entities["Zed"].pk], "touching": [paris]}
    data = client.post(GRAPH, body, content_type="application/json").json()
    assert {n["id"] for n in data["nodes"]} == {ada, acme, paris}
    assert [(e["source"], e["target"]) for e in data["edges"]] == [(acme, paris)]
    only = client.post(
        GRAPH,
        {"ids": [ada, acme, theirs.entities["Zed"].pk], "edges": False, "types": ["person"]},
        content_type="application/json",
    ).json()
    assert only["nodes"] == [{"id": ada}] and only["edges"] == []


def test_bulk_graph_refuses_bad_input_with_the_api_error_shape(lab):
    member, _ = lab
    client = signed_in(member)
    for url in (
        f"{GRAPH}?hubs=-1",
        f"{GRAPH}?hubs=abc",
        f"{GRAPH}?hubs=999999",
        f"{GRAPH}?seen_after=yesterday",
        f"{GRAPH}?source=0",
    ):
        response = client.get(url)
        assert response.status_code == 422, url
        assert response.json()["error"]["code"] == "invalid"
    for body in ('{"ids": "1,x"}', '{"ids": [true]}', "[1, 2]"):
        response = client.post(GRAPH, body, content_type="application/json")
        assert response.status_code == 422, body
    # A body that is not JSON at all is refused like everywhere in the API.
    response = client.post(GRAPH, "not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"


def test_bulk_graph_posts_need_the_csrf_token(lab):
    member, built = lab
    client = Client(enforce_csrf_checks=True)
    client.force_login(member.user)
    response = client.post(
        GRAPH,
        json.dumps({"ids": [built.entities["Ada"].pk]}),
        content_type="application/json",
    )
    assert response.status_code == 403


def test_bulk_graph_answers_bearer_tokens_and_hides_other_workspaces(lab, bob):
    member, _ = lab
    assert member.client().get(f"{GRAPH}?hubs=2").status_code == 200
    assert bob.client().get(f"{GRAPH}?hubs=2").status_code == 404
    assert Client().get(f"{GRAPH}?hubs=2").status_code == 401
