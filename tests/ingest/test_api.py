"""Ingestion over the API: uploads, text, limits, progress, documents, chunks, isolation."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from ingest.actions.sources import do_delete_source
from ingest.models import Document, Source
from tests.support import run_pending
from workspaces.models import Role

pytestmark = pytest.mark.django_db

MARKDOWN = b"# Notes\n\nGraphloom turns documents into graphs. Evidence points at sentences.\n"


def upload(client: Client, slug: str, *files: tuple[str, bytes], **fields: str):
    data = {"files": [SimpleUploadedFile(name, content) for name, content in files], **fields}
    return client.post(f"/api/v1/workspaces/{slug}/sources", data)


def test_uploading_files_creates_a_source_that_processes_to_done(alice):
    client = alice.client()
    response = upload(
        client,
        "acme",
        ("notes.md", MARKDOWN),
        ("page.html", b"<html><body><p>Hello graph.</p></body></html>"),
        tags="a,b",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["kind"] == "upload"
    assert body["status"] == "running"
    assert body["tags"] == ["a", "b"]
    assert len(body["documents"]) == 2
    run_pending(Source.objects.get(pk=body["id"]))
    detail = client.get(f"/api/v1/workspaces/acme/sources/{body['id']}").json()
    assert detail["status"] == "done"
    assert detail["counters"]["done"] == 2
    assert detail["failed"] == []
    document = client.get(f"/api/v1/workspaces/acme/documents/{body['documents'][0]}").json()
    assert document["status"] == "done"
    assert document["chunk_count"] >= 1
    chunks = client.get(f"/api/v1/workspaces/acme/documents/{document['id']}/chunks").json()
    assert chunks["count"] == document["chunk_count"]
    assert chunks["items"][0]["embedded"] is True
    assert chunks["items"][0]["ordinal"] == 0


def test_text_sources_come_as_json(alice):
    response = alice.client().post(
        "/api/v1/workspaces/acme/sources",
        json.dumps({"kind": "text", "title": "Meeting notes", "text": "Ada met Grace at the lab."}),
        content_type="application/json",
    )
    assert response.status_code == 201
    source = Source.objects.get(pk=response.json()["id"])
    assert source.kind == "text"
    run_pending(source)
    assert Document.objects.get(source=source).text.startswith("Ada met Grace")


def test_invalid_json_and_missing_fields_name_the_problem(alice):
    client = alice.client()
    missing = client.post(
        "/api/v1/workspaces/acme/sources",
        json.dumps({"kind": "text"}),
        content_type="application/json",
    )
    assert missing.status_code == 422
    assert "text" in missing.json()["error"]["message"]
    broken = client.post(
        "/api/v1/workspaces/acme/sources", "{not json", content_type="application/json"
    )
    assert broken.status_code == 422
    assert "JSON" in broken.json()["error"]["message"]


def test_oversized_upload_gets_413_and_stores_nothing(alice, settings):
    settings.INGEST_MAX_FILE_BYTES = 1000
    response = upload(alice.client(), "acme", ("big.md", b"x " * 2000))
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert "big.md" in response.json()["error"]["message"]
    assert not Source.objects.exists()


def test_unsupported_type_gets_415_and_stores_nothing(alice):
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    response = upload(alice.client(), "acme", ("ok.md", MARKDOWN), ("photo.png", png))
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"
    assert "photo.png" in response.json()["error"]["message"]
    assert not Source.objects.exists()


def test_reupload_of_identical_file_does_no_work(alice):
    client = alice.client()
    first = upload(client, "acme", ("notes.md", MARKDOWN)).json()
    source = Source.objects.get(pk=first["id"])
    run_pending(source)
    again = client.post(
        f"/api/v1/workspaces/acme/sources/{source.pk}/documents",
        {"files": [SimpleUploadedFile("notes.md", MARKDOWN)]},
    )
    assert again.status_code == 201
    assert again.json()["unchanged"] == first["documents"]
    assert again.json()["status"] == "done"


def test_viewers_read_but_cannot_ingest(make_member):
    viewer = make_member("vic", role=Role.VIEWER)
    client = viewer.client()
    assert upload(client, "acme", ("notes.md", MARKDOWN)).status_code == 403
    assert client.get("/api/v1/workspaces/acme/sources").status_code == 200


def test_sources_of_another_workspace_answer_404_everywhere(alice, bob):
    theirs = upload(bob.client(), "globex", ("notes.md", MARKDOWN)).json()
    document_id = theirs["documents"][0]
    client = alice.client()
    for method, path in [
        ("get", f"sources/{theirs['id']}"),
        ("get", f"sources/{theirs['id']}/documents"),
        ("post", f"sources/{theirs['id']}/reingest"),
        ("post", f"sources/{theirs['id']}/cancel"),
        ("post", f"sources/{theirs['id']}/retry"),
        ("delete", f"sources/{theirs['id']}"),
        ("get", f"documents/{document_id}"),
        ("get", f"documents/{document_id}/chunks"),
    ]:
        response = getattr(client, method)(f"/api/v1/workspaces/acme/{path}")
        assert response.status_code == 404, (method, path)
    assert Source.objects.get(pk=theirs["id"]).status != "deleting"
    assert client.get("/api/v1/workspaces/acme/sources").json()["count"] == 0


def test_failed_documents_are_listed_with_their_errors(alice):
    body = upload(alice.client(), "acme", ("empty.md", b""), ("ok.md", MARKDOWN)).json()
    run_pending(Source.objects.get(pk=body["id"]))
    detail = alice.client().get(f"/api/v1/workspaces/acme/sources/{body['id']}").json()
    assert [f["path"] for f in detail["failed"]] == ["empty.md"]
    assert "empty" in detail["failed"][0]["error"].lower()


def test_cancel_retry_reingest_and_delete(alice):
    client = alice.client()
    body = upload(client, "acme", ("notes.md", MARKDOWN)).json()
    base = f"/api/v1/workspaces/acme/sources/{body['id']}"
    cancelled = client.post(f"{base}/cancel").json()
    assert cancelled["source"]["status"] == "cancelled"
    retried = client.post(f"{base}/retry").json()
    assert retried["queued"] == 1
    run_pending(Source.objects.get(pk=body["id"]))
    assert client.get(base).json()["status"] == "done"
    assert client.post(f"{base}/cancel").status_code == 409
    assert client.post(f"{base}/reingest").json()["queued"] == 0
    deleting = client.delete(base)
    assert deleting.status_code == 202
    assert deleting.json()["status"] == "deleting"
    do_delete_source(source_id=body["id"])  # what the queued task does
    assert client.get(base).status_code == 404


def test_list_endpoints_use_a_bounded_number_of_queries(alice, django_assert_max_num_queries):
    client = alice.client()
    for i in range(5):
        upload(client, "acme", (f"n{i}.md", MARKDOWN + str(i).encode()))
    with django_assert_max_num_queries(6):
        response = client.get("/api/v1/workspaces/acme/sources")
    assert response.json()["count"] == 5
