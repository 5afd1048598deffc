"""A source's page (explorer/source_detail_views.py): documents, errors, a crawl's pages
and the extraction account, polling only while the source runs, and its actions (cancel,
retry, re-ingest, delete), through Django's test client."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django_tasks_db.models import DBTaskResult

from ingest.actions.crawl import (
    do_create_crawl_source,
    do_set_refresh_every,
    validate_crawl_settings,
)
from ingest.actions.sources import do_delete_source, do_refresh_source_progress
from ingest.models import CrawlPage, Document, Source
from knowledge.models import SourceExtraction
from tests.explorer.sources_data import HOSTILE, MARKDOWN, make_upload, media_root  # noqa: F401
from tests.support import signed_in
from workspaces.models import Role

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


def test_a_crawl_s_page_shows_its_last_and_next_run_and_sets_its_schedule(alice, make_member):
    crawl = do_create_crawl_source(
        workspace=alice.workspace,
        crawl=validate_crawl_settings(url="https://harbour.example/", mode="recursive"),
    )
    CrawlPage.objects.filter(source=crawl).update(status="ingested", run_change="added")
    for path, change in [("/a", "changed"), ("/b", "unchanged"), ("/c", "unchanged")]:
        CrawlPage.objects.create(
            workspace=alice.workspace, source=crawl, url=f"https://harbour.example{path}",
            url_hash=path, status="ingested", run_change=change,
        )  # fmt: skip
    CrawlPage.objects.create(
        workspace=alice.workspace, source=crawl, url="https://harbour.example/d",
        url_hash="/d", status="failed", run_change="removed", reason="HTTP 410: gone",
    )  # fmt: skip
    Source.objects.filter(pk=crawl.pk).update(status="running")
    do_refresh_source_progress(source_id=crawl.pk)  # the run ends: its changes are recorded
    do_set_refresh_every(source=crawl, every=24 * 3600)
    client = signed_in(alice)
    url = f"/sources/{crawl.pk}/schedule/?ws=acme"

    page = client.get(f"/sources/{crawl.pk}/?ws=acme").content.decode()
    assert 'id="schedule-form"' in page
    assert 'value="1d"' in page
    for shown in ("1 added", "1 changed", "1 removed", "2 unchanged", "(every 1d)"):
        assert shown in page, shown
    assert "data-run-missing" not in page

    refused = client.post(url, {"refresh_every": "10m"})
    assert refused.status_code == 422
    form = refused.content.decode()
    assert "At least 1h between re-crawls" in form
    assert 'aria-invalid="true"' in form
    assert Source.objects.get(pk=crawl.pk).refresh_every == 24 * 3600

    saved = client.post(url, {"refresh_every": "2w"})
    assert saved.status_code == 302
    assert saved["Location"] == f"/sources/{crawl.pk}/?ws=acme"
    crawl.refresh_from_db()
    assert crawl.refresh_every == 14 * 24 * 3600
    assert crawl.next_run_at is not None and crawl.finished_at is not None
    assert crawl.next_run_at == crawl.finished_at + timedelta(weeks=2)
    assert "Re-crawled every 2w; next run" in client.get(saved["Location"]).content.decode()

    client.post(url, {"refresh_every": ""})
    crawl.refresh_from_db()
    assert (crawl.refresh_every, crawl.next_run_at) == (None, None)
    assert "not scheduled" in client.get(f"/sources/{crawl.pk}/?ws=acme").content.decode()

    viewer = signed_in(make_member("vera", workspace="acme", role=Role.VIEWER))
    seen = viewer.get(f"/sources/{crawl.pk}/?ws=acme").content.decode()
    assert 'id="schedule-form"' not in seen
    assert "Not re-crawled on a schedule." in seen
    assert viewer.post(url, {"refresh_every": "1d"}).status_code == 403
    upload = make_upload(alice, ("notes.md", MARKDOWN))
    assert 'id="schedule"' not in client.get(f"/sources/{upload.pk}/").content.decode()
    refused = client.post(f"/sources/{upload.pk}/schedule/", {"refresh_every": "1d"}, follow=True)
    assert "only crawls (url, sitemap, crawl) can be re-crawled" in refused.content.decode()
    assert Source.objects.get(pk=upload.pk).refresh_every is None
