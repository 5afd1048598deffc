"""Entity and relation types in the Django admin: listed per workspace, never added or
deleted there; a rename, an accept or retire and a domain and range go through the
schema actions, so each leaves a logged, undoable `TypeChange`."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledge.actions.curation.types import do_undo_schema_change
from knowledge.actions.schema import do_ensure_default_schema
from knowledge.models import EntityType, RelationType, TypeStatus
from knowledge.models.schema import TypeChange

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(db) -> Client:
    user = User.objects.create_superuser("root", "root@example.org", "not-used-here-1")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def schemas(alice, bob):
    for member in (alice, bob):
        do_ensure_default_schema(workspace=member.workspace)
    EntityType.objects.create(workspace=bob.workspace, name="globex_only")


def test_types_are_listed_by_workspace_and_never_added_or_deleted(admin_client, schemas, alice):
    listing = admin_client.get(
        f"/admin/knowledge/entitytype/?workspace__id__exact={alice.workspace.pk}"
    )
    assert listing.status_code == 200
    assert b"person" in listing.content and b"globex_only" not in listing.content
    assert admin_client.get("/admin/knowledge/entitytype/add/").status_code == 403
    person = EntityType.objects.get(workspace=alice.workspace, name="person")
    assert admin_client.get(f"/admin/knowledge/entitytype/{person.pk}/delete/").status_code == 403


def test_an_admin_rename_goes_through_the_action_and_is_logged(admin_client, schemas, alice):
    gadget = EntityType.objects.get(workspace=alice.workspace, name="product")
    page = admin_client.post(f"/admin/knowledge/entitytype/{gadget.pk}/change/", {"name": "Goods"})
    assert page.status_code == 302
    assert EntityType.objects.get(pk=gadget.pk).name == "goods"  # the action's clean name
    change = TypeChange.objects.get(workspace=alice.workspace)
    assert (change.action, change.type_name, change.into) == ("rename", "product", "goods")
    assert change.actor is not None and change.actor.username == "root"
    do_undo_schema_change(workspace=alice.workspace, change_id=change.pk)
    assert EntityType.objects.get(pk=gadget.pk).name == "product"


def test_admin_retire_and_accept_actions_are_logged_and_refusals_reported(
    admin_client, schemas, alice
):
    ws = alice.workspace
    ids = list(
        EntityType.objects.filter(workspace=ws, name__in=["event", "concept"]).values_list(
            "pk", flat=True
        )
    )
    page = admin_client.post(
        "/admin/knowledge/entitytype/",
        {"action": "retire_selected", "_selected_action": ids},
        follow=True,
    )
    assert b"fallback" in page.content  # concept refused, event retired
    assert EntityType.objects.get(workspace=ws, name="event").status == TypeStatus.RETIRED
    assert EntityType.objects.get(workspace=ws, name="concept").status == TypeStatus.ACTIVE
    admin_client.post(
        "/admin/knowledge/entitytype/", {"action": "accept_selected", "_selected_action": ids}
    )
    assert list(
        TypeChange.objects.filter(workspace=ws).order_by("pk").values_list("action", "type_name")
    ) == [("retire", "event"), ("accept", "concept"), ("accept", "event")]


def test_an_admin_domain_and_range_go_through_the_action(admin_client, schemas, alice, bob):
    ws = alice.workspace
    works_for = RelationType.objects.get(workspace=ws, name="works_for")
    person = EntityType.objects.get(workspace=ws, name="person")
    organization = EntityType.objects.get(workspace=ws, name="organization")
    form = admin_client.get(f"/admin/knowledge/relationtype/{works_for.pk}/change/")
    assert form.status_code == 200
    # Only this workspace's entity types are offered.
    assert b"globex_only" not in form.content
    page = admin_client.post(
        f"/admin/knowledge/relationtype/{works_for.pk}/change/",
        {"name": "works_for", "domain": [person.pk], "range": [organization.pk]},
    )
    assert page.status_code == 302
    assert list(works_for.domain.values_list("name", flat=True)) == ["person"]
    assert list(works_for.range.values_list("name", flat=True)) == ["organization"]
    change = TypeChange.objects.get(workspace=ws, action="domain")
    assert change.before == {"domain": [], "range": []}
    assert change.summary == "Set works_for: person → organization"
