"""Saved layouts of the explorer's views (explorer/layout_api.py, explorer/layouts.py):
what the page stores when a layout settles and reads back on the next load, through the
JSON API with real tokens and the real database."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from django.test import Client

from explorer.models import MAX_LAYOUT_NODES, MAX_VIEW_KEY, SavedLayout
from knowledge.models import Entity, EntityState
from tests.knowledge.graph_data import make_graph
from workspaces.actions.workspaces import do_delete_workspace, do_request_workspace_deletion
from workspaces.models import Role

VIEW = "hubs=150&types=person"


def url(slug: str, view: str = VIEW) -> str:
    return f"/api/v1/workspaces/{slug}/layouts?view={quote(view, safe='')}"


def put(client, slug: str, body: object, view: str = VIEW):
    return client.put(url(slug, view), data=json.dumps(body), content_type="application/json")


@pytest.fixture
def ada(alice):
    """Three entities of acme, by name."""
    built = make_graph(
        alice.workspace,
        entities={"Ada Lovelace": "person", "Ada King": "person", "Analytical Engine": "thing"},
        relations=[("Ada Lovelace", "Analytical Engine", "related_to")],
    )
    return {name: entity.pk for name, entity in built.entities.items()}


# --- reading and saving ----------------------------------------------------------------------


def test_a_view_nobody_saved_answers_an_empty_layout(alice):
    response = alice.client().get(url("acme"))
    assert response.status_code == 200
    assert response.json() == {
        "view": VIEW,
        "saved_at": None,
        "count": 0,
        "nodes": [],
        "x": [],
        "y": [],
    }


def test_a_saved_layout_reads_back_rounded_to_hundredths(alice, ada):
    nodes = [ada["Ada Lovelace"], ada["Ada King"], ada["Analytical Engine"]]
    body = {"nodes": nodes, "x": [12.3456, -0.004, 999.996], "y": [-7.891, 0, 3]}

    saved = put(alice.client(), "acme", body)

    assert saved.status_code == 200, saved.content
    assert saved.json()["count"] == 3 and saved.json()["view"] == VIEW
    read = alice.client().get(url("acme")).json()
    assert read["nodes"] == nodes
    assert read["x"] == [12.35, -0.0, 1000.0]
    assert read["y"] == [-7.89, 0.0, 3.0]
    assert read["count"] == 3 and read["saved_at"] == saved.json()["saved_at"]


def test_saving_again_replaces_the_layout_of_that_view_only(alice, ada):
    client = alice.client()
    lovelace, king = ada["Ada Lovelace"], ada["Ada King"]
    put(client, "acme", {"nodes": [lovelace, king], "x": [1, 2], "y": [3, 4]})
    put(client, "acme", {"nodes": [king], "x": [5], "y": [6]}, view="c=3")
    put(client, "acme", {"nodes": [king], "x": [7.5], "y": [8.25]})

    assert client.get(url("acme")).json() | {"saved_at": None} == {
        "view": VIEW,
        "saved_at": None,
        "count": 1,
        "nodes": [king],
        "x": [7.5],
        "y": [8.25],
    }
    assert client.get(url("acme", "c=3")).json()["x"] == [5.0]
    assert SavedLayout.objects.filter(workspace=alice.workspace).count() == 2


def test_entities_that_are_not_active_in_the_workspace_are_dropped(alice, bob, ada):
    foreign = make_graph(bob.workspace, entities={"Charles Babbage": "person"})
    babbage = foreign.entities["Charles Babbage"].pk
    Entity.objects.filter(pk=ada["Ada King"]).update(state=EntityState.MERGED)
    nodes = [ada["Ada Lovelace"], babbage, ada["Ada King"], 10**12]

    saved = put(alice.client(), "acme", {"nodes": nodes, "x": [1, 2, 3, 4], "y": [5, 6, 7, 8]})

    assert saved.json()["count"] == 1
    read = alice.client().get(url("acme")).json()
    assert (read["nodes"], read["x"], read["y"]) == ([ada["Ada Lovelace"]], [1.0], [5.0])


def test_deleting_forgets_the_layout_and_is_idempotent(alice, ada):
    client = alice.client()
    put(client, "acme", {"nodes": [ada["Ada King"]], "x": [1], "y": [2]})

    assert client.delete(url("acme")).status_code == 204
    assert client.get(url("acme")).json()["count"] == 0
    assert client.delete(url("acme")).status_code == 204


def test_a_layout_of_the_most_nodes_round_trips(alice, ada):
    """Bounds are about the request, not the workspace: unknown ids are dropped after the
    whole list passed validation, so this measures the biggest body the page may send."""
    nodes = list(range(1, MAX_LAYOUT_NODES + 1))
    coordinates = [round(-99999.99 + i * 1.37, 2) for i in range(MAX_LAYOUT_NODES)]
    body = {"nodes": nodes, "x": coordinates, "y": coordinates}

    saved = put(alice.client(), "acme", body)

    assert saved.status_code == 200, saved.content
    assert saved.json()["count"] == len([n for n in ada.values() if n <= MAX_LAYOUT_NODES])


# --- bounds --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"nodes": [1, 2], "x": [1.0], "y": [1.0, 2.0]}, "equally long"),
        ({"nodes": [1, 1], "x": [1.0, 2.0], "y": [1.0, 2.0]}, "more than once"),
        ({"nodes": [-1], "x": [1.0], "y": [1.0]}, "positive"),
        ({"nodes": [0], "x": [1.0], "y": [1.0]}, "positive"),
        ({"nodes": [1], "x": [1e7], "y": [1.0]}, "within"),
        ({"nodes": [1], "x": [1.0], "y": [-1e7]}, "within"),
    ],
    ids=["lengths", "repeated", "negative", "zero", "far-x", "far-y"],
)
def test_a_malformed_layout_is_refused_with_the_reason(alice, ada, body, says):
    response = put(alice.client(), "acme", body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid"
    assert says in response.json()["error"]["message"]
    assert not SavedLayout.objects.exists()


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_coordinates_are_refused(alice, ada, literal):
    # Python's json reads these literals; JavaScript's JSON.stringify writes null instead.
    body = f'{{"nodes": [{ada["Ada King"]}], "x": [{literal}], "y": [1]}}'
    response = alice.client().put(url("acme"), data=body, content_type="application/json")
    assert response.status_code == 422
    assert "finite" in response.json()["error"]["message"]


def test_null_coordinates_and_fractional_ids_are_refused(alice, ada):
    for body in ({"nodes": [1], "x": [None], "y": [1]}, {"nodes": [1.5], "x": [1], "y": [1]}):
        response = put(alice.client(), "acme", body)
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "invalid"


def test_more_nodes_than_a_layout_holds_are_refused(alice, ada):
    n = MAX_LAYOUT_NODES + 1
    response = put(
        alice.client(), "acme", {"nodes": list(range(1, n + 1)), "x": [0] * n, "y": [0] * n}
    )
    assert response.status_code == 422
    assert "at most 100,000 nodes" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "view", ["", "x" * (MAX_VIEW_KEY + 1), "hubs=1\nseeds=2"], ids=["empty", "long", "control"]
)
def test_a_bad_view_key_is_refused_by_every_method(alice, ada, view):
    client = alice.client()
    body = {"nodes": [ada["Ada King"]], "x": [1], "y": [1]}
    for response in (
        client.get(url("acme", view)),
        put(client, "acme", body, view),
        client.delete(url("acme", view)),
    ):
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "invalid"


def test_the_longest_view_key_is_accepted(alice, ada):
    view = "v" * MAX_VIEW_KEY
    assert (
        put(
            alice.client(), "acme", {"nodes": [ada["Ada King"]], "x": [1], "y": [1]}, view
        ).status_code
        == 200
    )
    assert alice.client().get(url("acme", view)).json()["count"] == 1


def test_a_body_over_the_upload_limit_answers_413(alice, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = {"nodes": list(range(1, 301)), "x": [1.5] * 300, "y": [2.5] * 300}
    response = put(alice.client(), "acme", body)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert not SavedLayout.objects.exists()


# --- who may ------------------------------------------------------------------------------------


def test_viewers_read_layouts_but_only_editors_write_them(make_member, alice, ada):
    editor = make_member("erin", workspace="acme", role=Role.EDITOR)
    viewer = make_member("vic", workspace="acme", role=Role.VIEWER)
    body = {"nodes": [ada["Ada King"]], "x": [1], "y": [2]}

    assert put(editor.client(), "acme", body).status_code == 200
    assert viewer.client().get(url("acme")).json()["nodes"] == [ada["Ada King"]]
    refused = put(viewer.client(), "acme", {**body, "x": [9]})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert viewer.client().delete(url("acme")).status_code == 403
    assert alice.client().get(url("acme")).json()["x"] == [1.0]


def test_another_workspaces_layouts_are_invisible(alice, bob, ada):
    put(alice.client(), "acme", {"nodes": [ada["Ada King"]], "x": [1], "y": [2]})
    stranger = bob.client()

    assert stranger.get(url("acme")).status_code == 404
    assert (
        put(stranger, "acme", {"nodes": [ada["Ada King"]], "x": [5], "y": [5]}).status_code == 404
    )
    assert stranger.delete(url("acme")).status_code == 404
    assert stranger.get(url("globex")).json()["count"] == 0  # same key, own workspace: empty
    assert alice.client().get(url("acme")).json()["x"] == [1.0]


def test_no_credentials_answer_401(db):
    assert Client().get(url("acme")).status_code == 401


def test_deleting_a_workspace_deletes_its_layouts(alice, bob, ada):
    put(alice.client(), "acme", {"nodes": [ada["Ada King"]], "x": [1], "y": [2]})
    theirs = make_graph(bob.workspace, entities={"Charles Babbage": "person"})
    put(
        bob.client(),
        "globex",
        {"nodes": [theirs.entities["Charles Babbage"].pk], "x": [1], "y": [2]},
    )

    do_request_workspace_deletion(workspace=alice.workspace, actor=alice.user)
    assert do_delete_workspace(workspace_id=alice.workspace.pk) is True

    assert not SavedLayout.objects.filter(workspace_id=alice.workspace.pk).exists()
    assert SavedLayout.objects.filter(workspace=bob.workspace).count() == 1
