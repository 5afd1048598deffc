"""Relation curation in the Django admin goes through the relation actions (events)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledge.models import CurationEvent, Relation, RelationType
from tests.knowledge.actions.curation.test_relations import TEXT, WORLD


@pytest.fixture
def admin_client(db) -> Client:
    user = User.objects.create_superuser("root", "root@example.org", "not-used-here-1")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def relations(llm, ingest_text):
    llm.responder = WORLD
    ingest_text(TEXT)
    return {(r.source.name, r.type.name, r.target.name): r for r in Relation.objects.all()}


def test_relation_admin_actions_delete_and_reverse_through_curation_events(admin_client, relations):
    works_for = relations[("Ada Lovelace", "works_for", "Charles Babbage")]
    located_in = relations[("Ada Lovelace", "located_in", "London")]
    listing = admin_client.get("/admin/knowledge/relation/")
    assert b"Delete selected relations (logged)" in listing.content
    assert b"Reverse selected" in listing.content

    admin_client.post(
        "/admin/knowledge/relation/",
        {"action": "delete_selected_relations", "_selected_action": [str(located_in.pk)]},
    )
    admin_client.post(
        "/admin/knowledge/relation/",
        {"action": "reverse_selected", "_selected_action": [str(works_for.pk)]},
    )

    assert Relation.objects.get(pk=located_in.pk).state == "deleted"
    works_for.refresh_from_db()
    assert works_for.source.name == "Charles Babbage"
    events = {e.action: e for e in CurationEvent.objects.select_related("actor")}
    assert set(events) == {"relation_delete", "relation_reverse"}
    assert events["relation_delete"].relation_id == located_in.pk
    assert all(e.actor is not None and e.actor.username == "root" for e in events.values())


def test_relation_change_form_saves_through_retype_and_edit(admin_client, relations):
    relation = relations[("Ada Lovelace", "works_for", "Charles Babbage")]
    related_to = RelationType.objects.get(workspace=relation.workspace, name="related_to")
    page = admin_client.get(f"/admin/knowledge/relation/{relation.pk}/change/")
    assert page.status_code == 200

    saved = admin_client.post(
        f"/admin/knowledge/relation/{relation.pk}/change/",
        {"type": str(related_to.pk), "description": "Colleagues.",
         **_empty_inlines()},
    )  # fmt: skip

    assert saved.status_code == 302, saved.content[:2000]
    relation.refresh_from_db()
    assert (relation.type.name, relation.description) == ("related_to", "Colleagues.")
    assert relation.description_curated
    assert sorted(CurationEvent.objects.values_list("action", flat=True)) == [
        "relation_edit",
        "relation_retype",
    ]


def _empty_inlines() -> dict[str, str]:
    """The management forms of the change page's read-only inlines (notes, history)."""
    form: dict[str, str] = {}
    for prefix in ("notes", "curation_events"):
        form |= {f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0",
                 f"{prefix}-MIN_NUM_FORMS": "0", f"{prefix}-MAX_NUM_FORMS": "0"}  # fmt: skip
    return form
