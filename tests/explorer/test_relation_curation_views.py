"""Relation curation in the browser (explorer/curation_views.py): the relation panel's
controls and the entity panel's "Add a relation", through Django's test client.

Editors change the relation exactly as the action does and get the refreshed panel with an
Undo button and the `graphloom:graph-changed` trigger; viewers see no controls and are
refused (403) every write; another workspace's relations are missing (404); errors show
next to their control.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from knowledge.models import CurationEvent, Relation
from knowledge.models.curation import RelationNote
from tests.knowledge.graph_data import make_graph
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
SCRIPT = "<script>alert(1)</script>"


@pytest.fixture
def editor(make_member):
    return make_member("erin", workspace="acme", role=Role.EDITOR)


@pytest.fixture
def viewer(make_member, editor):
    return make_member("vic", workspace="acme", role=Role.VIEWER)


@pytest.fixture
def built(editor):
    return make_graph(
        editor.workspace,
        entities={"Google": "organization", "Alphabet": "organization", "Larry Page": "person"},
        relations=[("Larry Page", "Google", "works_for"), ("Google", "Alphabet", "part_of")],
    )


@pytest.fixture
def works_for(built) -> Relation:
    return Relation.objects.get(type__name="works_for")


def url(action: str, relation_id: int) -> str:
    name = "curation_relation_controls" if action == "controls" else f"curation_relation_{action}"
    return reverse(f"explorer:{name}", args=[relation_id])


def events() -> list[str]:
    return list(CurationEvent.objects.order_by("pk").values_list("action", flat=True))


def assert_relation_panel(response, relation: Relation) -> str:
    assert response.status_code == 200
    html = response.content.decode()
    assert f'data-panel-relation="{relation.pk}"' in html
    assert 'id="relation-curation-controls"' in html
    assert "Loading the curation tools" not in html
    return html


def test_the_relation_panel_loads_controls_for_editors_and_none_for_viewers(
    editor, viewer, works_for
):
    panel = reverse("explorer:relation_panel", args=[works_for.pk])
    editors = signed_in(editor).get(panel, headers=HTMX).content.decode()
    assert f'hx-get="{url("controls", works_for.pk)}?ws=acme"' in editors
    viewers = signed_in(viewer).get(panel, headers=HTMX).content.decode()
    assert "curation" not in viewers
    assert "hx-post" not in viewers

    html = signed_in(editor).get(url("controls", works_for.pk)).content.decode()
    for action in ("retype", "reverse", "describe", "delete"):
        assert f'hx-post="{url(action, works_for.pk)}?ws=acme"' in html
    assert '<option value="works_for" selected>works_for</option>' in html
    assert '<option value="related_to" >related_to</option>' in html


def test_viewers_are_refused_every_relation_write_and_nothing_changes(viewer, built, works_for):
    client = signed_in(viewer)
    for action, data in {
        "retype": {"type": "related_to"},
        "reverse": {},
        "describe": {"description": "x"},
        "delete": {},
        "undo": {"event": 1},
    }.items():
        assert client.post(url(action, works_for.pk), data, headers=HTMX).status_code == 403
    assert client.get(url("controls", works_for.pk)).status_code == 403
    add = reverse("explorer:curation_relation_add", args=[built.entities["Google"].pk])
    assert client.post(add, {"target": built.entities["Alphabet"].pk}).status_code == 403
    assert events() == []
    assert Relation.objects.get(pk=works_for.pk).type.name == "works_for"


def test_another_workspaces_relation_is_missing(editor, bob):
    theirs = make_graph(
        bob.workspace,
        entities={"Initech": "organization", "Bill": "person"},
        relations=[("Bill", "Initech", "works_for")],
    )
    relation = Relation.objects.get(workspace=bob.workspace)
    client = signed_in(editor)
    for action in ("retype", "reverse", "describe", "delete", "undo"):
        assert client.post(url(action, relation.pk), {"type": "related_to"}).status_code == 404
    assert client.get(url("controls", relation.pk)).status_code == 404
    assert Relation.objects.get(pk=relation.pk).state == "active"
    assert theirs.entities["Bill"].pk == relation.source_id
    assert events() == []


def test_each_control_changes_the_relation_and_offers_its_undo(editor, works_for):
    client = signed_in(editor)
    retyped = client.post(url("retype", works_for.pk), {"type": "related_to"}, headers=HTMX)
    html = assert_relation_panel(retyped, works_for)
    assert Relation.objects.get(pk=works_for.pk).type.name == "related_to"
    event = CurationEvent.objects.get()
    assert f'name="event" value="{event.pk}"' in html
    assert json.loads(retyped["HX-Trigger"])["graphloom:graph-changed"]["entity"] == (
        works_for.source_id
    )

    undone = client.post(url("undo", works_for.pk), {"event": event.pk}, headers=HTMX)
    assert_relation_panel(undone, works_for)
    assert Relation.objects.get(pk=works_for.pk).type.name == "works_for"

    client.post(url("reverse", works_for.pk), headers=HTMX)
    client.post(url("describe", works_for.pk), {"description": SCRIPT}, headers=HTMX)
    deleted = client.post(url("delete", works_for.pk), headers=HTMX)
    html = assert_relation_panel(deleted, works_for)
    relation = Relation.objects.get(pk=works_for.pk)
    assert (relation.source.name, relation.state, relation.description) == (
        "Google", "deleted", SCRIPT,
    )  # fmt: skip
    assert SCRIPT not in html
    assert "&lt;script&gt;" in html
    assert events() == [
        "relation_retype", "relation_undo", "relation_reverse", "relation_edit",
        "relation_delete",
    ]  # fmt: skip


def test_an_error_shows_next_to_its_control_and_changes_nothing(editor, works_for):
    client = signed_in(editor)
    response = client.post(url("retype", works_for.pk), {"type": "nonsense"}, headers=HTMX)
    html = assert_relation_panel(response, works_for)  # 200: htmx would not swap a 422
    assert 'id="curation-error-retype"' in html
    assert "No active or proposed relation type" in html
    assert "HX-Trigger" not in response
    plain = client.post(url("retype", works_for.pk), {"type": "nonsense"})
    assert plain.status_code == 422
    assert events() == []


def test_add_a_relation_from_the_entity_panel_and_undo_it(editor, built):
    google, alphabet = built.entities["Google"], built.entities["Alphabet"]
    client = signed_in(editor)
    controls = client.get(reverse("explorer:curation_controls", args=[google.pk])).content.decode()
    assert f'hx-post="{reverse("explorer:curation_relation_add", args=[google.pk])}?ws=acme"' in (
        controls
    )
    targets = client.get(
        reverse("explorer:curation_merge_targets", args=[google.pk]),
        {"q": "Alph", "for": "relation"},
    )
    assert f'value="{alphabet.pk}"' in targets.content.decode()

    added = client.post(
        reverse("explorer:curation_relation_add", args=[google.pk]),
        {"target": alphabet.pk, "direction": "in", "type": "owns", "reason": "Parent company."},
        headers=HTMX,
    )
    assert added.status_code == 200
    relation = Relation.objects.get(type__name="owns")
    assert (relation.source_id, relation.target_id) == (alphabet.pk, google.pk)
    assert RelationNote.objects.get(relation=relation).reason == "Parent company."
    event = CurationEvent.objects.get(action="relation_add")
    html = added.content.decode()
    undo = reverse("explorer:curation_relation_add_undo", args=[google.pk])
    assert f'hx-post="{undo}?ws=acme"' in html
    assert f'name="event" value="{event.pk}"' in html

    client.post(undo, {"event": event.pk}, headers=HTMX)
    assert not Relation.objects.filter(type__name="owns").exists()
    again = client.post(
        reverse("explorer:curation_relation_add", args=[google.pk]),
        {"target": google.pk, "type": "owns"},
        headers=HTMX,
    )
    assert "two different entities" in again.content.decode()
