"""A source's page (explorer/source_detail_views.py): documents, errors, a crawl's pages
and the extraction account, polling only while the source runs, and its actions (cancel,
retry, re-ingest, delete), through Django's test client."""

from __future__ import annotations

import pytest
from django_tasks_db.models import DBTaskResult

from ingest.actions.crawl import do_create_crawl_source, validate_crawl_settings
from ingest.actions.sources import do_delete_source
from ingest.models import CrawlPage, Document, Source
from knowledge.models import SourceExtraction
from tests.explorer.sources_data import HOSTILE, MARKDOWN, make_upload, media_root  # noqa: F401
from tests.support import signed_in

pytestmark = pytest.mark.django_db

HTML = b"<html><head><title>Tides</title></head><body><p>High water at noon.</p></body></html>"


def tasks_named(name: str) -> list[DBTaskResult]:
    return [t for t in DBTaskResult.objects.all() if t.task_path.endswith(f".{name}")]


def test_the_detail_page_shows_documents_errors_pages_and_extraction(alice):
    crawl = do_create_crawl_source(
        workspace=alice.workspace,
        crawl=validate_crawl_settings(url="https://harbour.example/", mode="recursive"),
        name=f"Crawl {HOSTILE}",
    )
    CrawlPage.objects.create(
        workspace=alice.workspace,
        source=crawl,
        url="https://harbour.example/missing",
        url_hash="x",
        depth=1,
        status="failed",
        http_status=404,
        reason="HTTP 404",
    )
    document = Document.objects.create(
        workspace=alice.workspace,
        source=crawl,
        path="https://harbour.example/broken",
        status="failed",
        error=f"Could not parse {HOSTILE}",
    )
    SourceExtraction.objects.create(
        workspace=alice.workspace,
        source=crawl,
        extractor="offline",
        windows_extracted=3,
        windows_cached=2,
        prompt_tokens=0,
    )
    page = signed_in(alice).get(f"/sources/{crawl.pk}/").content.decode()
    assert HOSTILE not in page
    assert "Crawl &lt;img src=x onerror=alert(1)&gt;" in page
    assert "Could not parse &lt;img src=x onerror=alert(1)&gt;" in page
    assert f'href="/documents/{document.pk}/?ws=acme"' in page
    assert "https://harbour.example/missing" in page
    assert "HTTP 404" in page
    assert "<td>404</td>" in page
    assert "Offline extractor" in page
    assert "3 extracted, 2 from cache, 0 skipped" in page
    assert "Pages queued" in page


def test_the_detail_page_polls_only_while_the_source_runs(alice):
    source = make_upload(alice, ("notes.md", MARKDOWN))
    client = signed_in(alice)
    headers = {"HX-Request": "true", "HX-Target": "source-body"}
    running = client.get(f"/sources/{source.pk}/?ws=acme", headers=headers).content.decode()
    assert running.lstrip().startswith('<div id="source-body"')
    assert 'hx-trigger="every 2s"' in running
    Source.objects.filter(pk=source.pk).update(status="done")
    done = client.get(f"/sources/{source.pk}/?ws=acme", headers=headers).content.decode()
    assert "hx-trigger" not in done.split(">", 1)[0]


def test_cancel_retry_and_reingest_call_their_actions_and_say_what_happened(
    alice, django_capture_on_commit_callbacks
):
    source = make_upload(alice, ("notes.md", MARKDOWN), ("tides.html", HTML))
    client = signed_in(alice)
    detail = f"/sources/{source.pk}/?ws=acme"

    def post(action: str) -> str:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(f"/sources/{source.pk}/{action}/?ws=acme")
        assert response.status_code == 302
        assert response["Location"] == detail
        return client.get(detail).content.decode()

    page = post("cancel")
    assert "Cancelled: queued work will not be done" in page
    assert Source.objects.get(pk=source.pk).status == "cancelled"
    assert set(Document.objects.filter(source=source).values_list("status", flat=True)) == {
        "cancelled"
    }
    page = post("retry")
    assert "Retrying 2 documents that failed or were cancelled." in page
    assert Source.objects.get(pk=source.pk).status == "running"
    queued_once = len(tasks_named("process_documents"))
    assert queued_once >= 1
    post("cancel")
    page = post("reingest")
    assert "Re-ingesting: 2 documents queued" in page
    assert Source.objects.get(pk=source.pk).status == "running"
    assert len(tasks_named("process_documents")) > queued_once
    Source.objects.filter(pk=source.pk).update(status="done")
    page = post("cancel")  # the action's refusal is shown, not an error page
    assert "The source is done; there is nothing to cancel." in page


def test_deleting_a_source_asks_for_confirmation_first(alice, django_capture_on_commit_callbacks):
    source = make_upload(alice, ("notes.md", MARKDOWN), name=f"Harbour {HOSTILE}")
    client = signed_in(alice)
    confirm = client.get(f"/sources/{source.pk}/delete/?ws=acme")
    assert confirm.status_code == 200
    page = confirm.content.decode()
    assert "Delete “Harbour &lt;img src=x onerror=alert(1)&gt;”?" in page
    assert f'action="/sources/{source.pk}/delete/?ws=acme"' in page
    assert "<script>" not in page and "onclick" not in page
    assert Source.objects.get(pk=source.pk).status == "running"  # asking changed nothing
    with django_capture_on_commit_callbacks(execute=True):
        deleted = client.post(f"/sources/{source.pk}/delete/?ws=acme")
    assert deleted.status_code == 302
    assert deleted["Location"] == "/?ws=acme"
    assert Source.objects.get(pk=source.pk).status == "deleting"
    assert "in the background" in client.get("/?ws=acme").content.decode()
    assert len(tasks_named("delete_source")) == 1
    do_delete_source(source_id=source.pk)  # what the worker's task does
    assert client.get(f"/sources/{source.pk}/").status_code == 404
