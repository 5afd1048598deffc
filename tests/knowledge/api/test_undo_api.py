"""`POST …/curation-events/{id}/undo` undoes any curation event (entity decisions answer the
entity, relation changes the relation), 409 names the later event in the way, `cascade`
undoes both; viewers get 403, another workspace's events 404. `GET …/curation-events`
filters by entity."""

from __future__ import annotations

import pytest

from knowledge.actions.curation.entities import do_rename_entity
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.models import CurationEvent, Entity
from tests.knowledge.graph_data import make_graph
from workspaces.models import Role

pytestmark = pytest.mark.django_db

BASE = "/api/v1/workspaces/acme"


@pytest.fixture
def entities(alice) -> dict[str, Entity]:
    built = make_graph(
        alice.workspace,
        entities={"Google": "organization", "Alphabet": "organization"},
        relations=[("Google", "Alphabet", "part_of")],
    )
    return built.entities


@pytest.fixture
def editor(make_member, alice):
    return make_member("erin", workspace="acme", role=Role.EDITOR)


@pytest.fixture
def viewer(make_member, alice):
    return make_member("vic", workspace="acme", role=Role.VIEWER)


def test_an_entity_decision_is_undone_and_answers_the_entity(editor, entities):
    google = entities["Google"]
    rename = do_rename_entity(workspace=editor.workspace, entity_id=google.pk, name="Googol")

    response = editor.client().post(f"{BASE}/curation-events/{rename.pk}/undo")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["event"]["action"] == "restore"
    assert body["event"]["actor"] == "erin"
    assert body["relation"] is None
    assert body["entity"]["id"] == google.pk
    assert body["entity"]["name"] == "Google"
    again = editor.client().post(f"{BASE}/curation-events/{rename.pk}/undo")
    assert again.status_code == 409
    assert "undone already" in again.json()["error"]["message"]


def test_a_later_event_in_the_way_is_named_and_cascade_undoes_both(editor, entities):
    google, alphabet = entities["Google"], entities["Alphabet"]
    rename = do_rename_entity(workspace=editor.workspace, entity_id=google.pk, name="Googol")
    merge = do_merge_entities(
        workspace=editor.workspace, survivor_id=google.pk, merged_ids=[alphabet.pk]
    )
    client = editor.client()

    refused = client.post(f"{BASE}/curation-events/{rename.pk}/undo")
    assert refused.status_code == 409
    assert f"event {merge.pk}" in refused.json()["error"]["message"]

    both = client.post(f"{BASE}/curation-events/{rename.pk}/undo?cascade=true")
    assert both.status_code == 200, both.content
    assert both.json()["entity"]["name"] == "Google"
    assert Entity.objects.get(pk=alphabet.pk).state == "active"
    assert CurationEvent.objects.get(pk=merge.pk).undone_by_id is not None


def test_a_viewer_gets_403_and_a_stranger_404(viewer, bob, entities):
    rename = do_rename_entity(
        workspace=viewer.workspace, entity_id=entities["Google"].pk, name="Googol"
    )

    assert viewer.client().post(f"{BASE}/curation-events/{rename.pk}/undo").status_code == 403
    theirs = bob.client().post(f"/api/v1/workspaces/globex/curation-events/{rename.pk}/undo")
    assert theirs.status_code == 404
    assert bob.client().post(f"{BASE}/curation-events/{rename.pk}/undo").status_code == 404
    assert CurationEvent.objects.get(pk=rename.pk).undone_by_id is None


def test_the_event_list_of_an_entity_includes_the_merge_that_absorbed_it(alice, entities):
    google, alphabet = entities["Google"], entities["Alphabet"]
    merge = do_merge_entities(
        workspace=alice.workspace, survivor_id=alphabet.pk, merged_ids=[google.pk]
    )
    do_rename_entity(workspace=alice.workspace, entity_id=alphabet.pk, name="Alpha")

    listed = alice.client().get(f"{BASE}/curation-events?entity={google.pk}").json()

    assert [item["id"] for item in listed["items"]] == [merge.pk]
