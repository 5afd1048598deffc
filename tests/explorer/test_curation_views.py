"""Curation in the browser (explorer/curation_views.py): every control of the entity panel,
driven through Django's test client against real graphs (the review page's own tests are
in test_review_views.py).

Each editor action must change the graph exactly as its curation action does and answer
with the refreshed entity panel plus the `graphloom:graph-changed` trigger; viewers are
refused (403) and change nothing; another workspace's entities are missing (404); errors
are shown to the person; hostile names render as text.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.models import (
    CurationAction,
    CurationEvent,
    Entity,
    Mention,
)
from tests.knowledge.graph_data import make_graph
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
SCRIPT = "<script>alert(1)</script>"
ATTRIBUTE = '" onmouseover="x'


@pytest.fixture
def editor(make_member):
    return make_member("erin", workspace="acme", role=Role.EDITOR)


@pytest.fixture
def viewer(make_member, editor):
    return make_member("vic", workspace="acme", role=Role.VIEWER)


@pytest.fixture
def graph(editor):
    built = make_graph(
        editor.workspace,
        entities={
            "Google": "organization",
            "Alphabet": "organization",
            "Larry Page": "person",
            "Sergey Brin": "person",
        },
        relations=[
            ("Larry Page", "Google", "founded"),
            ("Sergey Brin", "Google", "founded"),
            ("Google", "Alphabet", "part_of"),
        ],
    )
    return built.entities


def url(action: str, entity_id: int) -> str:
    return reverse(f"explorer:curation_{action}", args=[entity_id])


def post(client: Client, action: str, entity_id: int, data: dict | None = None, **kwargs):
    return client.post(url(action, entity_id), data or {}, headers=HTMX, **kwargs)


def graph_changed(response) -> dict:
    return json.loads(response["HX-Trigger"])["graphloom:graph-changed"]


def fresh(entity: Entity) -> Entity:
    return Entity.objects.select_related("type").get(pk=entity.pk)


def events() -> list[str]:
    return list(CurationEvent.objects.order_by("pk").values_list("action", flat=True))


def assert_panel_of(response, entity: Entity) -> str:
    """The answer is the entity panel of `entity` with the curation controls in it."""
    assert response.status_code == 200
    html = response.content.decode()
    assert f'data-panel-entity="{entity.pk}"' in html
    assert 'id="curation-controls"' in html
    assert "Loading the curation tools" not in html
    return html


# --- The controls in the panel -------------------------------------------------------


def test_the_panel_loads_curation_controls_for_editors_and_none_for_viewers(editor, viewer, graph):
    google = graph["Google"]
    panel = reverse("explorer:entity_panel", args=[google.pk])
    editors = signed_in(editor).get(panel, headers=HTMX).content.decode()
    assert f'hx-get="{url("controls", google.pk)}?ws=acme"' in editors
    viewers = signed_in(viewer).get(panel, headers=HTMX).content.decode()
    assert "curation" not in viewers
    assert "hx-post" not in viewers

    controls = signed_in(editor).get(url("controls", google.pk))
    assert controls.status_code == 200
    html = controls.content.decode()
    for action in ("rename", "retype", "alias_add", "merge", "split"):
        assert f'hx-post="{url(action, google.pk)}?ws=acme"' in html
    assert f'hx-get="{url("delete", google.pk)}?ws=acme"' in html
    assert '<option value="organization" selected>organization</option>' in html
    assert '<option value="person" >person</option>' in html
    assert "<mark>Google</mark> appears here." in html  # the mentions offered for a split


def test_viewers_are_refused_every_curation_request_and_nothing_changes(viewer, graph):
    client = signed_in(viewer)
    google, alphabet = graph["Google"], graph["Alphabet"]
    mention = Mention.objects.get(entity=google)
    posts = {
        "rename": {"name": "Evil"},
        "retype": {"type": "person"},
        "alias_add": {"alias": "Goog"},
        "alias_remove": {"alias": "Google"},
        "merge": {"target": alphabet.pk},
        "unmerge": {"event": 1},
        "delete": {},
        "restore": {},
        "split": {"mention": mention.pk, "name": "Other"},
    }
    for action, data in posts.items():
        assert post(client, action, google.pk, data).status_code == 403, action
    for action in ("controls", "delete", "merge_targets"):
        assert client.get(url(action, google.pk)).status_code == 403, action
    assert client.get(reverse("explorer:review")).status_code == 403
    assert client.post(reverse("explorer:review_accept", args=[1])).status_code == 403
    assert client.post(reverse("explorer:review_reject", args=[1])).status_code == 403
    assert events() == []
    assert fresh(google).name == "Google"
    assert fresh(google).state == fresh(alphabet).state == "active"


def test_another_workspaces_entity_is_missing(editor, bob, graph):
    theirs = make_graph(bob.workspace, entities={"Initech": "organization"}).entities["Initech"]
    client = signed_in(editor)
    assert post(client, "rename", theirs.pk, {"name": "Mine now"}).status_code == 404
    assert post(client, "delete", theirs.pk).status_code == 404
    assert client.get(url("controls", theirs.pk)).status_code == 404
    assert client.get(url("merge_targets", theirs.pk), {"q": "Ini"}).status_code == 404
    # As a merge target, too: shown as an error in the panel, nothing merged.
    google = graph["Google"]
    answer = post(client, "merge", google.pk, {"target": theirs.pk})
    assert "not found" in answer.content.decode() or "No entity" in answer.content.decode()
    assert fresh(theirs).name == "Initech"
    assert fresh(theirs).state == fresh(google).state == "active"
    assert events() == []


def test_rename_changes_the_name_and_answers_with_the_panel_and_a_graph_change(editor, graph):
    google = graph["Google"]
    response = post(signed_in(editor), "rename", google.pk, {"name": "Google Research"})
    html = assert_panel_of(response, google)
    assert fresh(google).name == "Google Research"
    assert "Google" in fresh(google).aliases
    assert events() == [CurationAction.RENAME]
    assert "Renamed &#x27;Google&#x27; to &#x27;Google Research&#x27;" in html
    assert graph_changed(response) == {"entity": google.pk, "removed": []}


def test_rename_to_an_empty_name_shows_the_error_next_to_the_control(editor, graph):
    google = graph["Google"]
    client = signed_in(editor)
    response = post(client, "rename", google.pk, {"name": "   "})
    html = assert_panel_of(response, google)  # 200: htmx would not swap a 422
    assert 'id="curation-error-rename"' in html
    assert "An entity needs a name." in html
    assert "HX-Trigger" not in response
    assert fresh(google).name == "Google"
    assert events() == []
    plain = client.post(url("rename", google.pk), {"name": ""})
    assert plain.status_code == 422
    assert "An entity needs a name." in plain.content.decode()


def test_retype_sets_an_active_type_and_refuses_an_unknown_one(editor, graph):
    google = graph["Google"]
    client = signed_in(editor)
    response = post(client, "retype", google.pk, {"type": "product"})
    assert_panel_of(response, google)
    assert fresh(google).type.name == "product"
    assert fresh(google).type_curated
    assert graph_changed(response)["entity"] == google.pk
    wrong = post(client, "retype", google.pk, {"type": "nonsense"})
    assert "No usable entity type &#x27;nonsense&#x27;" in wrong.content.decode()
    assert client.post(url("retype", google.pk), {"type": "nonsense"}).status_code == 422
    assert fresh(google).type.name == "product"
    assert events() == [CurationAction.RETYPE]


def test_aliases_are_added_and_removed(editor, graph):
    google = graph["Google"]
    client = signed_in(editor)
    added = post(client, "alias_add", google.pk, {"alias": "Goog"})
    html = assert_panel_of(added, google)
    assert fresh(google).aliases == ["Goog"]
    assert f'hx-post="{url("alias_remove", google.pk)}?ws=acme"' in html
    assert 'name="alias" value="Goog"' in html
    removed = post(client, "alias_remove", google.pk, {"alias": "Goog"})
    assert_panel_of(removed, google)
    assert fresh(google).aliases == []
    assert events() == [CurationAction.ALIAS_ADD, CurationAction.ALIAS_REMOVE]
    # Another entity's alias already: a conflict, shown by the control.
    post(client, "alias_add", graph["Alphabet"].pk, {"alias": "Goog"})
    clash = post(client, "alias_add", google.pk, {"alias": "Goog"})
    assert 'id="curation-error-aliases"' in clash.content.decode()
    assert "is an alias of &#x27;Alphabet&#x27; already" in clash.content.decode()
    assert client.post(url("alias_add", google.pk), {"alias": "Goog"}).status_code == 409
    missing = post(client, "alias_remove", google.pk, {"alias": "Nope"})
    assert "has no alias" in missing.content.decode()


def test_merge_then_undo_from_the_panel_restores_both(editor, graph):
    google, alphabet = graph["Google"], graph["Alphabet"]
    client = signed_in(editor)
    response = post(client, "merge", google.pk, {"target": alphabet.pk, "keep": "this"})
    html = assert_panel_of(response, google)
    assert fresh(alphabet).state == "merged"
    assert fresh(alphabet).merged_into_id == google.pk
    assert Mention.objects.filter(entity=google).count() == 2
    assert graph_changed(response) == {"entity": google.pk, "removed": [alphabet.pk]}
    merge = CurationEvent.objects.get(action=CurationAction.MERGE)
    assert "Undo merge" in html
    assert f'name="event" value="{merge.pk}"' in html

    # The history of the survivor lists the merge with its undo button.
    controls = client.get(url("controls", google.pk)).content.decode()
    assert f'hx-post="{url("unmerge", google.pk)}?ws=acme"' in controls
    assert f'name="event" value="{merge.pk}"' in controls

    undone = post(client, "unmerge", google.pk, {"event": merge.pk})
    assert_panel_of(undone, google)
    assert fresh(alphabet).state == "active"
    assert Mention.objects.filter(entity=alphabet).count() == 1
    assert Mention.objects.filter(entity=google).count() == 1
    merge.refresh_from_db()
    assert merge.undone_by is not None
    assert graph_changed(undone) == {"entity": google.pk, "removed": []}
    again = post(client, "unmerge", google.pk, {"event": merge.pk})
    assert "was undone already" in again.content.decode()


def test_merge_keeping_the_target_shows_the_target_and_a_merged_entity_offers_undo(editor, graph):
    google, alphabet = graph["Google"], graph["Alphabet"]
    client = signed_in(editor)
    response = post(client, "merge", google.pk, {"target": alphabet.pk, "keep": "target"})
    assert_panel_of(response, alphabet)
    assert fresh(google).state == "merged"
    assert graph_changed(response) == {"entity": alphabet.pk, "removed": [google.pk]}
    # The merged one's panel says where it went and undoes the merge that absorbed it.
    merged = client.get(url("controls", google.pk)).content.decode()
    assert "was merged into" in merged
    assert "“Alphabet”" in merged
    merge = CurationEvent.objects.get(action=CurationAction.MERGE)
    assert f'name="event" value="{merge.pk}"' in merged
    assert_panel_of(post(client, "unmerge", google.pk, {"event": merge.pk}), google)
    assert fresh(google).state == "active"


def test_merging_an_entity_with_itself_or_nothing_is_an_error(editor, graph):
    google = graph["Google"]
    client = signed_in(editor)
    itself = post(client, "merge", google.pk, {"target": google.pk})
    html = assert_panel_of(itself, google)
    assert 'id="curation-error-merge"' in html
    assert "Merging needs at least two different entities." in html
    assert "HX-Trigger" not in itself
    nothing = post(client, "merge", google.pk, {})
    assert "Choose the entity to merge with." in nothing.content.decode()
    assert client.post(url("merge", google.pk), {"target": google.pk}).status_code == 422
    assert events() == []


def test_the_merge_typeahead_finds_other_active_entities(editor, graph):
    google, alphabet = graph["Google"], graph["Alphabet"]
    client = signed_in(editor)
    found = client.get(url("merge_targets", google.pk), {"q": "alph"}).content.decode()
    assert f'name="target" value="{alphabet.pk}"' in found
    assert f'value="{google.pk}"' not in found
    itself = client.get(url("merge_targets", google.pk), {"q": "goo"}).content.decode()
    assert 'name="target"' not in itself
    assert "No other active entity matches" in itself
    contains = client.get(url("merge_targets", google.pk), {"q": "page"}).content.decode()
    assert f'value="{graph["Larry Page"].pk}"' in contains


def test_delete_asks_first_then_deletes_and_restore_brings_it_back(editor, graph):
    brin = graph["Sergey Brin"]
    client = signed_in(editor)
    asked = client.get(url("delete", brin.pk), headers=HTMX)
    assert asked.status_code == 200
    html = asked.content.decode()
    assert "Delete “Sergey Brin”?" in html
    assert "1 relation," in html
    assert f'hx-post="{url("delete", brin.pk)}?ws=acme"' in html
    assert fresh(brin).state == "active"
    assert events() == []

    deleted = post(client, "delete", brin.pk)
    html = assert_panel_of(deleted, brin)
    assert fresh(brin).state == "deleted"
    assert graph_changed(deleted) == {"entity": None, "removed": [brin.pk]}
    assert f'hx-post="{url("restore", brin.pk)}?ws=acme"' in html
    again = post(client, "delete", brin.pk)
    assert "is deleted" in again.content.decode()

    restored = post(client, "restore", brin.pk)
    assert_panel_of(restored, brin)
    assert fresh(brin).state == "active"
    assert graph_changed(restored) == {"entity": brin.pk, "removed": []}
    assert events() == [CurationAction.DELETE, CurationAction.RESTORE]


def test_split_moves_the_chosen_mentions_to_a_new_entity(editor, graph):
    google = graph["Google"]
    # A second mention of Google (in "Larry Page founded Google."), to split off.
    first = Mention.objects.get(entity=google)
    start = first.chunk.text.find("founded Google") + len("founded ")
    second = Mention.objects.create(
        workspace=editor.workspace, entity=google, chunk=first.chunk, run=first.run,
        surface_form="Google", extracted_type="organization",
        char_start=start, char_end=start + len("Google"),
    )  # fmt: skip
    client = signed_in(editor)
    response = post(
        client,
        "split",
        google.pk,
        {"mention": [second.pk], "name": "Google Search", "type": "product"},
    )
    html = assert_panel_of(response, google)
    new = Entity.objects.get(name="Google Search")
    assert new.type.name == "product"
    assert list(Mention.objects.filter(entity=new)) == [second]
    assert list(Mention.objects.filter(entity=google)) == [first]
    assert "into &#x27;Google Search&#x27;" in html
    assert graph_changed(response)["entity"] == google.pk

    nothing = post(client, "split", google.pk, {"name": "Other"})
    assert "Choose one or more mentions" in nothing.content.decode()
    unnamed = post(client, "split", google.pk, {"mention": [first.pk], "name": " "})
    assert "The new entity needs a name." in unnamed.content.decode()
    assert events() == [CurationAction.SPLIT]


def test_hostile_names_render_as_text_in_the_controls(editor, graph):
    hostile = make_graph(
        editor.workspace, entities={SCRIPT: "person", ATTRIBUTE: "person"}, title=SCRIPT
    ).entities
    client = signed_in(editor)
    for entity in hostile.values():
        post(client, "alias_add", entity.pk, {"alias": f"{SCRIPT} alias"})
        html = client.get(url("controls", entity.pk)).content.decode()
        assert SCRIPT not in html
        assert ATTRIBUTE not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    typeahead = client.get(url("merge_targets", graph["Google"].pk), {"q": "script"})
    assert SCRIPT not in typeahead.content.decode()
    assert ATTRIBUTE not in typeahead.content.decode()
    failed = post(client, "rename", hostile[ATTRIBUTE].pk, {"name": SCRIPT})
    assert SCRIPT not in failed.content.decode()
    assert ATTRIBUTE not in failed.content.decode()
