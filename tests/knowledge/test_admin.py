"""Curation in the Django admin goes through the same actions (events, rules)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledge.models import CurationEvent, Entity, MergeSuggestion
from tests.knowledge.actions.curation.curation_data import FIRST, WORLD


@pytest.fixture
def admin_client(db) -> Client:
    user = User.objects.create_superuser("root", "root@example.org", "not-used-here-1")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def graph(llm, ingest_text):
    llm.responder = WORLD
    ingest_text(FIRST)
    return {e.name: e for e in Entity.objects.all()}


def test_entity_pages_show_evidence_and_history(admin_client, graph):
    listing = admin_client.get("/admin/knowledge/entity/?q=google")
    assert listing.status_code == 200
    assert b"Google" in listing.content
    page = admin_client.get(f"/admin/knowledge/entity/{graph['Google'].pk}/change/")
    assert page.status_code == 200
    content = page.content.decode().lower()
    assert "evidence (mentions)" in content
    assert "history" in content


def test_merge_selected_asks_for_the_survivor_then_merges(admin_client, graph):
    ids = [str(graph["Google"].pk), str(graph["Alphabet"].pk)]
    confirm = admin_client.post(
        "/admin/knowledge/entity/", {"action": "merge_selected", "_selected_action": ids}
    )
    assert confirm.status_code == 200
    assert b"Keep" in confirm.content
    done = admin_client.post(
        "/admin/knowledge/entity/",
        {"action": "merge_selected", "_selected_action": ids, "apply": "yes",
         "survivor": str(graph["Alphabet"].pk)},
    )  # fmt: skip
    assert done.status_code == 302
    assert Entity.objects.get(pk=graph["Google"].pk).merged_into_id == graph["Alphabet"].pk
    event = CurationEvent.objects.get(action="merge")
    assert event.actor is not None
    assert event.actor.username == "root"


def test_delete_and_restore_actions_and_suggestion_decisions(admin_client, graph, alice):
    brin = graph["Sergey Brin"]
    admin_client.post(
        "/admin/knowledge/entity/",
        {"action": "delete_selected_entities", "_selected_action": [str(brin.pk)]},
    )
    assert Entity.objects.get(pk=brin.pk).state == "deleted"
    admin_client.post(
        "/admin/knowledge/entity/",
        {"action": "restore_selected_entities", "_selected_action": [str(brin.pk)]},
    )
    assert Entity.objects.get(pk=brin.pk).state == "active"

    a, b = sorted([graph["Google"].pk, graph["Alphabet"].pk])
    suggestion = MergeSuggestion.objects.create(
        workspace=alice.workspace, entity_a_id=a, entity_b_id=b, score=0.8, reasons=["x"]
    )
    admin_client.post(
        "/admin/knowledge/mergesuggestion/",
        {"action": "reject", "_selected_action": [str(suggestion.pk)]},
    )
    suggestion.refresh_from_db()
    assert suggestion.status == "rejected"
    assert admin_client.get("/admin/knowledge/curationevent/").status_code == 200


def test_editing_name_and_type_in_the_admin_is_a_rename_and_a_retype(admin_client, graph):
    google = graph["Google"]
    url = f"/admin/knowledge/entity/{google.pk}/change/"
    page = admin_client.get(url)
    form = page.context["adminform"].form
    product = google.type.__class__.objects.get(workspace=google.workspace, name="product")
    data = {name: value for name, value in form.initial.items() if value is not None}
    data.update({"name": "Google LLC", "type": str(product.pk)})
    for inline in page.context["inline_admin_formsets"]:
        prefix = inline.formset.prefix
        data.update({f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"})
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content[:2000]

    google.refresh_from_db()
    assert (google.name, google.type.name) == ("Google LLC", "product")
    assert google.type_curated
    actions = set(CurationEvent.objects.filter(entity=google).values_list("action", flat=True))
    assert {"rename", "retype"} <= actions
