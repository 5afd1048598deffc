"""Pages that need a browser (issue 41, item 4), end to end against a real local website:
a near-empty JavaScript page is flagged on its document and counted on its source; a crawl
with `render` loads it in the real headless Chromium, whose requests go through the
crawler's own fetcher (same origin only, robots.txt obeyed); without Chromium, `render` is
refused by the API, the command and the crawl form."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from django.core.management import CommandError, call_command

from ingest.actions.crawl import do_create_crawl_source, do_run_crawl, do_start_crawl
from ingest.actions.crawl.request import validate_crawl_settings
from ingest.actions.pipeline import do_process_documents
from ingest.models import CrawlPage, Document, Source
from tests.ingest.crawl_site import TIMETABLE, CrawlSite, html_page, spa_pages
from tests.support import needs_chromium, signed_in
from workspaces.errors import InvalidInput

pytestmark = pytest.mark.django_db


@pytest.fixture
def crawl_settings(settings):
    settings.CRAWL_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.CRAWL_TIMEOUT_SECONDS = 5.0
    settings.CRAWL_RENDER_TIMEOUT_SECONDS = 20.0
    settings.CRAWL_JS_MIN_PAGE_BYTES = 4096
    settings.CRAWL_JS_MAX_TEXT_CHARS = 200
    return settings


@pytest.fixture
def other() -> Iterator[CrawlSite]:
    """Another origin (another port): the rendered page must never reach it."""
    with CrawlSite(crawl_delay=None) as running:
        yield running


@pytest.fixture
def site(other) -> Iterator[CrawlSite]:
    with CrawlSite(crawl_delay=None) as running:
        # Another host name for the same server is another origin too.
        other_host = f"http://localhost:{running.port}"
        running.pages = {
            "/": html_page(
                "Harbour", ["Welcome to the harbour's pages."], [("/timetable", "Timetable")]
            ),
            **spa_pages(other.base_url, more_script=f'fetch("{other_host}/leak");'.encode()),
        }
        yield running


def crawl(workspace, url: str, **options) -> Source:
    config = validate_crawl_settings(url=url, **{"mode": "recursive", "rate": 50, **options})
    source = do_create_crawl_source(workspace=workspace, crawl=config)
    do_start_crawl(source=source, enqueue=False)
    do_run_crawl(source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids))
    source.refresh_from_db()
    return source


def document_at(source: Source, url: str) -> Document:
    return Document.objects.get(source=source, path=url)


def test_a_near_empty_javascript_page_is_flagged_and_counted(alice, site, crawl_settings):
    source = crawl(alice.workspace, site.url("/"))

    shell = document_at(source, site.url("/timetable"))
    home = document_at(source, site.url("/"))
    assert shell.needs_javascript and not shell.rendered
    assert not home.needs_javascript
    assert source.counters["needs_javascript"] == 1
    page = CrawlPage.objects.get(source=source, url=site.url("/timetable"))
    assert page.reason.startswith("needs JavaScript: single-page-app shell: empty #root")
    assert not site.requests_to("/static/app.js")  # nothing ran without `render`

    client = signed_in(alice)
    listing = client.get(f"/sources/{source.pk}/?ws=acme").content.decode()
    assert 'id="counter-needs-javascript"' in listing
    assert f'data-needs-javascript="{shell.pk}">this page seems to need JavaScript' in listing
    assert f'data-needs-javascript="{home.pk}"' not in listing
    shown = client.get(f"/documents/{shell.pk}/?ws=acme").content.decode()
    assert 'id="document-needs-javascript"' in shown
    assert "This page seems to need JavaScript" in shown
    assert 'id="document-needs-javascript"' not in (
        client.get(f"/documents/{home.pk}/?ws=acme").content.decode()
    )


@needs_chromium
def test_render_reads_the_text_a_script_writes_through_the_crawlers_own_fetcher(
    alice, site, other, crawl_settings
):
    source = crawl(alice.workspace, site.url("/"), render=True)

    shell = document_at(source, site.url("/timetable"))
    assert shell.needs_javascript and shell.rendered
    assert all(sentence in shell.text for sentence in TIMETABLE), shell.text
    page = CrawlPage.objects.get(source=source, url=site.url("/timetable"))
    assert page.reason.startswith("rendered in Chromium (1 requests, ")
    # The page itself was fetched once, by the plain fetcher; the script through it too.
    assert len(site.requests_to("/timetable")) == 1
    (script,) = site.requests_to("/static/app.js")
    assert script.headers["user-agent"] == crawl_settings.CRAWL_USER_AGENT
    # No other origin's request left the browser; robots.txt held for the script's fetch.
    assert other.log == []
    assert not site.requests_to("/leak")
    assert not site.requests_to("/private/")
    assert source.counters["needs_javascript"] == 1

    # A new round with the same page bytes renders nothing again.
    site.clear_log()
    do_start_crawl(source=source, enqueue=False)
    do_run_crawl(source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids))
    assert not site.requests_to("/static/app.js")
    assert CrawlPage.objects.get(pk=page.pk).run_change == "unchanged"


def test_a_page_that_cannot_be_rendered_keeps_its_fetched_html_and_says_why(
    alice, site, crawl_settings
):
    """Chromium gone between asking for the crawl and running it: the crawl goes on."""
    pytest.importorskip("playwright.sync_api")
    config = replace(
        validate_crawl_settings(url=site.url("/"), mode="recursive", rate=50), render=True
    )
    source = do_create_crawl_source(workspace=alice.workspace, crawl=config)
    crawl_settings.CRAWL_CHROMIUM = "/nonexistent/chromium"
    do_start_crawl(source=source, enqueue=False)
    do_run_crawl(source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids))

    shell = document_at(source, site.url("/timetable"))
    assert shell.needs_javascript and not shell.rendered
    page = CrawlPage.objects.get(source=source, url=site.url("/timetable"))
    assert page.reason.startswith("needs JavaScript; not rendered: Chromium did not start")
    assert page.status == "ingested"
    assert document_at(source, site.url("/")).status == "done"


@pytest.fixture
def no_chromium(settings):
    settings.CRAWL_CHROMIUM = "/nonexistent/chromium"
    return settings


def test_render_without_chromium_is_refused_everywhere(alice, no_chromium):
    with pytest.raises(InvalidInput, match=r"^render: no Chromium at '/nonexistent/chromium'"):
        validate_crawl_settings(url="https://docs.example.org/", mode="single", render=True)
    # The same crawl without `render` is fine.
    assert not validate_crawl_settings(url="https://docs.example.org/", mode="single").render

    api = alice.client().post(
        "/api/v1/workspaces/acme/sources",
        {"kind": "crawl", "url": "https://docs.example.org/", "render": True},
        content_type="application/json",
    )
    assert api.status_code == 422, api.content
    assert api.json()["error"]["message"].startswith("render: no Chromium at")

    with pytest.raises(CommandError) as refused:
        call_command("crawl", "https://docs.example.org/", "--workspace", "acme", "--render")
    assert refused.value.returncode == 2
    assert "render: no Chromium" in str(refused.value)

    form = signed_in(alice).post(
        "/sources/crawl/?ws=acme",
        {"mode": "recursive", "url": "https://docs.example.org/", "render_javascript": "on"},
        headers={"HX-Request": "true", "HX-Target": "crawl-form"},
    )
    body = form.content.decode()
    assert 'id="id_render_javascript_error"' in body
    assert "No Chromium at" in body
    assert not Source.objects.exists()
