"""Sources and documents in the Django admin: visible per workspace, never edited by form;
the admin's actions go through the ingest actions (the same status changes and tasks as the
UI)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django_tasks_db.models import DBTaskResult

from ingest.actions.sources import do_create_upload_source
from ingest.models import Document, Source, SourceStatus

pytestmark = pytest.mark.django_db

NOTES = b"# Harbour notes\n\nThe lighthouse keeper met the harbour master at dawn.\n"


@pytest.fixture
def admin_client(db) -> Client:
    user = User.objects.create_superuser("root", "root@example.org", "not-used-here-1")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def sources(alice, bob) -> dict[str, Source]:
    made = {}
    for member, name in ((alice, "Acme notes"), (bob, "Globex notes")):
        source, _ = do_create_upload_source(
            workspace=member.workspace, files=[("notes.md", [NOTES])], name=name, enqueue=False
        )
        made[name] = source
    return made


def test_sources_and_documents_are_listed_filtered_by_workspace_and_never_edited(
    admin_client, sources, alice
):
    listing = admin_client.get(f"/admin/ingest/source/?workspace__id__exact={alice.workspace.pk}")
    assert listing.status_code == 200
    assert b"Acme notes" in listing.content and b"Globex notes" not in listing.content
    source = sources["Acme notes"]
    page = admin_client.get(f"/admin/ingest/source/{source.pk}/change/")
    assert page.status_code == 200 and b"notes.md" in page.content
    assert admin_client.get("/admin/ingest/source/add/").status_code == 403
    document = Document.objects.get(source=source)
    assert admin_client.get(f"/admin/ingest/document/{document.pk}/change/").status_code == 200
    before = Source.objects.values().get(pk=source.pk)
    admin_client.post(f"/admin/ingest/source/{source.pk}/change/", {"name": "Renamed"})
    assert Source.objects.values().get(pk=source.pk) == before


def test_deleting_from_the_admin_hands_the_deletion_to_the_worker(
    admin_client, sources, django_capture_on_commit_callbacks
):
    source = sources["Acme notes"]
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/ingest/source/",
            {"action": "delete_sources", "_selected_action": [str(source.pk)]},
        )
    assert response.status_code == 302
    assert Source.objects.get(pk=source.pk).status == SourceStatus.DELETING
    assert Source.objects.get(pk=sources["Globex notes"].pk).status != SourceStatus.DELETING
    deletions = [t for t in DBTaskResult.objects.all() if t.task_path.endswith(".delete_source")]
    assert [t.args_kwargs["args"] for t in deletions] == [[source.pk]]


def test_a_refused_action_is_reported_and_the_others_still_run(admin_client, sources):
    finished, other = sources["Acme notes"], sources["Globex notes"]
    Source.objects.filter(pk=finished.pk).update(status=SourceStatus.DONE)
    Source.objects.filter(pk=other.pk).update(status=SourceStatus.RUNNING)
    response = admin_client.post(
        "/admin/ingest/source/",
        {"action": "cancel", "_selected_action": [str(finished.pk), str(other.pk)]},
        follow=True,
    )
    text = response.content.decode()
    assert "nothing to cancel" in text
    assert "1 source(s) cancelled" in text
    assert Source.objects.get(pk=other.pk).status == SourceStatus.CANCELLED
    assert Source.objects.get(pk=finished.pk).status == SourceStatus.DONE
