"""The History page (explorer/history_views.py): every curation event of the workspace, the
machine's too (automatic merges with their reasons, the LLM's verdicts), filterable by
person, action, entity and date; editors undo from it (refusals name the later event and
offer "Undo both"), viewers see no button and get 403. The entity panel's history offers
the same Undo for every decision."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from knowledge.actions.curation.block import do_mark_not_same
from knowledge.actions.curation.entities import do_add_alias, do_rename_entity
from knowledge.actions.curation.merge import do_merge_entities
from knowledge.models import CurationEvent, Entity, MergeSuggestion
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
def entities(editor) -> dict[str, Entity]:
    return make_graph(
        editor.workspace,
        entities={
            "Google": "organization",
            "Alphabet": "organization",
            "Larry Page": "person",
            "Sergey Brin": "person",
        },
        relations=[("Larry Page", "Google", "founded")],
    ).entities


@pytest.fixture
def decisions(editor, entities):
    """A person's rename and alias, consolidation's merge (with its reasons) and the LLM
    review's "different" verdict."""
    ws, e = editor.workspace, entities
    rename = do_rename_entity(
        workspace=ws, entity_id=e["Google"].pk, name="Googol", actor=editor.user
    )
    alias = do_add_alias(workspace=ws, entity_id=e["Larry Page"].pk, name="LP", actor=editor.user)
    low, high = sorted((e["Larry Page"].pk, e["Sergey Brin"].pk))
    MergeSuggestion.objects.create(
        workspace=ws, entity_a_id=low, entity_b_id=high, score=0.7, reasons=["fuzzy"],
        llm_verdict="different", llm_reason=f"Two founders {SCRIPT}",
    )  # fmt: skip
    verdict = do_mark_not_same(workspace=ws, entity_id=low, other_id=high)
    merge = do_merge_entities(
        workspace=ws, merged_ids=[e["Alphabet"].pk, e["Google"].pk], automatic=True,
        reasons=["fuzzy name 0.91", "llm: same (one company)"],
    )  # fmt: skip
    return {"rename": rename, "alias": alias, "verdict": verdict, "merge": merge}


def page(client, **params):
    params.setdefault("ws", "acme")
    return client.get(reverse("explorer:history"), params)


def shown(response) -> list[int]:
    """The event ids the page lists, in order."""
    html = response.content.decode()
    return [int(part.split('"')[0]) for part in html.split('data-event-id="')[1:]]


def undo_url(event: CurationEvent) -> str:
    return reverse("explorer:history_undo", args=[event.pk]) + "?ws=acme"


def test_every_event_is_listed_newest_first_with_the_machines_reasons(editor, decisions):
    response = page(signed_in(editor))

    assert response.status_code == 200
    order = ["merge", "verdict", "alias", "rename"]
    assert shown(response) == [decisions[name].pk for name in order]
    html = response.content.decode()
    assert "fuzzy name 0.91" in html and "llm: same (one company)" in html
    assert "LLM verdict: <strong>different</strong>" in html
    assert SCRIPT not in html and "&lt;script&gt;" in html
    assert html.count(">Undo<") == 4


def test_the_filters_narrow_by_person_action_entity_and_date(editor, entities, decisions):
    client = signed_in(editor)

    assert shown(page(client, actor="erin")) == [decisions["alias"].pk, decisions["rename"].pk]
    assert shown(page(client, actor="machine")) == [
        decisions["merge"].pk,
        decisions["verdict"].pk,
    ]
    assert shown(page(client, action="rename")) == [decisions["rename"].pk]
    google = entities["Google"].pk
    assert shown(page(client, entity=google)) == [decisions["merge"].pk, decisions["rename"].pk]
    today = timezone.localdate()
    assert len(shown(page(client, since=today.isoformat(), until=today.isoformat()))) == 4
    tomorrow = (today + timedelta(days=1)).isoformat()
    assert shown(page(client, since=tomorrow)) == []
    assert shown(page(client, until=(today - timedelta(days=1)).isoformat())) == []
    assert shown(page(client, event=decisions["alias"].pk)) == [decisions["alias"].pk]
    bad = page(client, since="yesterday", entity="Google")
    assert bad.status_code == 200
    assert "is not a date" in bad.content.decode()
    assert len(shown(bad)) == 4


def test_undo_from_the_page_refuses_naming_the_later_event_then_undoes_both(editor, decisions):
    client = signed_in(editor)
    rename, merge = decisions["rename"], decisions["merge"]

    refused = client.post(undo_url(rename), headers=HTMX)

    assert refused.status_code == 200
    html = refused.content.decode()
    assert f"event {merge.pk}" in html
    assert f"event={merge.pk}" in html  # a link to it
    assert 'name="cascade" value="1"' in html
    assert CurationEvent.objects.get(pk=rename.pk).undone_by_id is None

    both = client.post(undo_url(rename), {"cascade": "1"}, headers=HTMX)

    assert "Done: Undid: Renamed" in both.content.decode()
    assert CurationEvent.objects.get(pk=merge.pk).undone_by_id is not None
    assert Entity.objects.get(pk=rename.entity_id).name == "Google"
    assert Entity.objects.get(pk=rename.entity_id).state == "active"


def test_undo_of_the_llms_verdict_lifts_it(editor, decisions):
    verdict = decisions["verdict"]

    response = signed_in(editor).post(undo_url(verdict), headers=HTMX)

    assert "Done:" in response.content.decode()
    assert CurationEvent.objects.get(pk=verdict.pk).undone_by_id is not None


def test_a_viewer_sees_the_history_without_buttons_and_gets_403(viewer, decisions):
    client = signed_in(viewer)

    response = page(client)
    assert len(shown(response)) == 4
    assert ">Undo<" not in response.content.decode()
    assert client.post(undo_url(decisions["alias"]), headers=HTMX).status_code == 403
    assert CurationEvent.objects.get(pk=decisions["alias"].pk).undone_by_id is None


def test_another_workspaces_event_is_404(bob, decisions):
    client = signed_in(bob)

    response = client.post(
        reverse("explorer:history_undo", args=[decisions["alias"].pk]) + "?ws=globex",
        headers=HTMX,
    )

    assert response.status_code == 404
    assert shown(client.get(reverse("explorer:history"), {"ws": "globex"})) == []


def test_the_entity_panel_history_undoes_any_decision(editor, entities):
    larry = entities["Larry Page"]
    alias = do_add_alias(
        workspace=editor.workspace, entity_id=larry.pk, name="LP", actor=editor.user
    )
    client = signed_in(editor)
    controls = client.get(
        reverse("explorer:curation_controls", args=[larry.pk]) + "?ws=acme", headers=HTMX
    )
    assert reverse("explorer:curation_undo", args=[larry.pk]) in controls.content.decode()

    response = client.post(
        reverse("explorer:curation_undo", args=[larry.pk]) + "?ws=acme",
        {"event": alias.pk},
        headers=HTMX,
    )

    assert response.status_code == 200
    assert "Undid: Added alias" in response.content.decode()
    assert Entity.objects.get(pk=larry.pk).aliases == []
