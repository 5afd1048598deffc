"""The explorer's compact bulk payload (`format=columns` on `GET`/`POST …/graph`): parallel
arrays that decode to exactly the object shape (which stays the default), fewer bytes, and
gzip'd on the wire like the object shape."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

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


def rows(data: dict[str, Any]) -> dict[str, Any]:
    """The columns back into the object shape, as the explorer's api.js does: a node field
    per column, types and edge ends looked up by index."""
    n, e = data["nodes"], data["edges"]
    nodes = [{field: column[i] for field, column in n.items()} for i in range(len(n["id"]))]
    for node in nodes:
        if "type" in node:
            node["type"] = data["types"][node["type"]]
    edges = [
        {
            "id": e["id"][j],
            "source": n["id"][e["source"][j]],
            "target": n["id"][e["target"][j]],
            "type": data["relation_types"][e["type"][j]],
            "weight": e["weight"][j],
        }
        for j in range(len(e["id"]))
    ]
    return {"nodes": nodes, "edges": edges, "truncated": data["truncated"], "count": data["count"]}


def test_columns_decode_to_the_same_hubs_and_edges_as_the_default_shape(lab):
    member, _ = lab
    client = signed_in(member)
    for hubs in (0, 2, 100):
        objects = client.get(f"{GRAPH}?hubs={hubs}").json()
        columns = client.get(f"{GRAPH}?hubs={hubs}&format=columns").json()
        assert columns["format"] == "columns" and "format" not in objects
        assert isinstance(columns["nodes"]["id"], list)
        assert rows(columns) == objects
    everything = client.get(f"{GRAPH}?hubs=100&format=columns").json()
    assert sorted(everything["types"]) == ["concept", "location", "organization", "person"]
    assert sorted(everything["relation_types"]) == ["located_in", "works_for"]


def test_posted_ids_in_columns_keep_only_edges_touching_and_the_ids_only_answer(lab):
    member, built = lab
    client = signed_in(member)
    ada, acme, paris = (built.entities[n].pk for n in ("Ada", "Acme", "Paris"))
    body = {"ids": [ada, acme, paris], "touching": [paris]}
    objects = client.post(GRAPH, body, content_type="application/json").json()
    columns = client.post(
        GRAPH, {**body, "format": "columns"}, content_type="application/json"
    ).json()
    assert rows(columns) == objects
    assert len(columns["edges"]["id"]) == 1
    matching = {"ids": [ada, acme], "edges": False, "types": ["person"]}
    only = client.post(
        GRAPH, {**matching, "format": "columns"}, content_type="application/json"
    ).json()
    assert only["nodes"] == {"id": [ada]} and only["edges"]["id"] == []
    assert rows(only) == client.post(GRAPH, matching, content_type="application/json").json()


def test_an_unknown_format_is_refused_with_the_api_error_shape(lab):
    member, built = lab
    client = signed_in(member)
    response = client.get(f"{GRAPH}?hubs=2&format=rows")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid"
    body = {"ids": [built.entities["Ada"].pk], "format": "csv"}
    assert client.post(GRAPH, body, content_type="application/json").status_code == 422


def test_columns_are_smaller_and_gzipped_on_both_bulk_reads(make_member):
    member = make_member("cy", workspace="big", role=Role.VIEWER)
    names = {f"Entity number {i}": ("person" if i % 2 else "organization") for i in range(300)}
    relations = [
        (f"Entity number {i}", f"Entity number {(i * 7 + 1) % 300}", "part_of") for i in range(300)
    ]
    graph = make_graph(member.workspace, entities=names, relations=relations)
    client = signed_in(member)
    url = "/api/v1/workspaces/big/graph"
    objects = client.get(f"{url}?hubs=300").content
    response = client.get(f"{url}?hubs=300&format=columns", HTTP_ACCEPT_ENCODING="gzip")
    assert response["Content-Encoding"] == "gzip"
    columns = gzip.decompress(response.content)
    assert len(columns) < 0.6 * len(objects)
    assert rows(json.loads(columns)) == json.loads(objects)
    ids = [entity.pk for entity in graph.entities.values()]
    posted = client.post(
        url, {"ids": ids, "format": "columns"}, content_type="application/json",
        HTTP_ACCEPT_ENCODING="gzip",
    )  # fmt: skip
    assert posted["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(posted.content))["format"] == "columns"
