"""Relation curation over the API: editors curate, viewers read and get 403 on every write,
another workspace's ids are 404, answers carry the event and the relation."""

from __future__ import annotations

import json

import pytest

from ingest.models import Chunk
from knowledge.actions.curation.relations import do_delete_relation
from knowledge.models import CurationEvent, Entity, Relation
from knowledge.models.curation import RelationNote
from tests.knowledge.actions.curation.test_relations import TEXT, WORLD, edge
from workspaces.models import Role

BASE = "/api/v1/workspaces/acme"


def send(client, method, url, body=None):
    return getattr(client, method)(
        url, data=json.dumps(body or {}), content_type="application/json"
    )


@pytest.fixture
def graph(llm, ingest_text):
    llm.responder = WORLD
    ingest_text(TEXT)
    return {e.name: e for e in Entity.objects.all()}


@pytest.fixture
def editor(make_member, alice):
    return make_member("erin", workspace="acme", role=Role.EDITOR)


@pytest.fixture
def viewer(make_member, alice):
    return make_member("vic", workspace="acme", role=Role.VIEWER)


def test_an_editor_retypes_describes_reverses_deletes_and_undoes(editor, graph):
    client = editor.client()
    relation = edge("Ada Lovelace", "Charles Babbage", "works_for")
    url = f"{BASE}/relations/{relation.pk}"

    patched = send(client, "patch", url, {"type": "related_to", "description": "Colleagues."})
    assert patched.status_code == 200
    body = patched.json()
    assert body["event"]["action"] == "relation_edit"
    assert body["event"]["relation_id"] == relation.pk
    assert body["event"]["actor"] == "erin"
    assert body["relation"]["type"] == "related_to"
    assert body["relation"]["description"] == "Colleagues."
    assert body["relation"]["source"]["name"] == "Ada Lovelace"

    reversed_ = send(client, "post", f"{url}/reverse")
    assert reversed_.status_code == 200
    assert reversed_.json()["relation"]["source"]["name"] == "Charles Babbage"

    deleted = client.delete(url)
    assert deleted.status_code == 200
    assert deleted.json()["relation"]["state"] == "deleted"
    undone = send(client, "post", f"{BASE}/curation-events/{deleted.json()['event']['id']}/undo")
    assert undone.status_code == 200
    assert undone.json()["event"]["action"] == "relation_undo"
    assert undone.json()["relation"]["state"] == "active"

    # The retype is older than the reverse that still stands: refused, saying which.
    retype = CurationEvent.objects.get(action="relation_retype")
    refused = send(client, "post", f"{BASE}/curation-events/{retype.pk}/undo")
    assert refused.status_code == 409
    assert str(reversed_.json()["event"]["id"]) in refused.json()["error"]["message"]
    nothing = send(client, "patch", url, {})
    assert nothing.status_code == 422


def test_an_editor_adds_a_relation_with_a_reason_and_a_span(editor, graph):
    client = editor.client()
    chunk = Chunk.objects.first()
    assert chunk is not None
    body = {
        "source_id": graph["Ada Lovelace"].pk,
        "target_id": graph["Analytical Engine"].pk,
        "type": "related_to",
        "description": "Wrote about it.",
        "reason": "Her notes.",
        "chunk_id": chunk.pk,
        "char_start": chunk.char_start,
        "char_end": chunk.char_start + 5,
    }
    added = send(client, "post", f"{BASE}/relations", body)
    assert added.status_code == 200
    relation = added.json()["relation"]
    assert (relation["source"]["id"], relation["target"]["id"], relation["type"]) == (
        graph["Ada Lovelace"].pk, graph["Analytical Engine"].pk, "related_to",
    )  # fmt: skip
    note = RelationNote.objects.get(relation_id=relation["id"])
    assert (note.actor, note.reason) == (editor.user, "Her notes.")

    again = send(client, "post", f"{BASE}/relations", body)
    assert again.status_code == 409
    assert str(relation["id"]) in again.json()["error"]["message"]
    self_loop = send(client, "post", f"{BASE}/relations", {**body, "target_id": body["source_id"]})
    assert self_loop.status_code == 422
    outside = send(
        client, "post", f"{BASE}/relations",
        {**body, "type": "works_for", "char_end": chunk.char_end + 1},
    )  # fmt: skip
    assert outside.status_code == 422
    unknown = send(client, "post", f"{BASE}/relations", {**body, "type": "invented"})
    assert unknown.status_code == 422


def test_a_viewer_reads_relations_but_every_write_is_403(viewer, graph):
    client = viewer.client()
    relation = edge("Ada Lovelace", "Charles Babbage", "works_for")
    url = f"{BASE}/relations/{relation.pk}"
    event = do_delete_relation(workspace=viewer.workspace, relation_id=relation.pk)
    assert client.get(url).status_code == 200
    assert client.get(f"{BASE}/relations").status_code == 200
    writes = [
        send(client, "patch", url, {"description": "x"}),
        client.delete(url),
        send(client, "post", f"{url}/reverse"),
        send(
            client,
            "post",
            f"{BASE}/relations",
            {
                "source_id": graph["London"].pk,
                "target_id": graph["Ada Lovelace"].pk,
                "type": "related_to",
            },
        ),
        send(client, "post", f"{BASE}/curation-events/{event.pk}/undo"),
    ]
    assert [w.status_code for w in writes] == [403] * 5
    assert Relation.objects.get(pk=relation.pk).state == "deleted"
    assert CurationEvent.objects.count() == 1


def test_another_workspaces_relations_entities_and_events_are_404(bob, graph, alice):
    client = bob.client()
    relation = edge("Ada Lovelace", "Charles Babbage", "works_for")
    event = do_delete_relation(workspace=alice.workspace, relation_id=relation.pk)
    theirs = f"/api/v1/workspaces/globex/relations/{relation.pk}"
    answers = [
        client.get(theirs),
        send(client, "patch", theirs, {"description": "x"}),
        client.delete(theirs),
        send(client, "post", f"{theirs}/reverse"),
        send(
            client,
            "post",
            "/api/v1/workspaces/globex/relations",
            {
                "source_id": graph["London"].pk,
                "target_id": graph["Ada Lovelace"].pk,
                "type": "related_to",
            },
        ),
        send(client, "post", f"/api/v1/workspaces/globex/curation-events/{event.pk}/undo"),
    ]
    assert [a.status_code for a in answers] == [404] * 6
    assert all(a.json()["error"]["code"] == "not_found" for a in answers)
    assert Relation.objects.get(pk=relation.pk).state == "deleted"
