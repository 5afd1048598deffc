"""The sources screens in a real browser with a real worker: files dropped on the page are
processed to done while the list follows them, a crawl of a real local website started from
the form shows its pages, and the document page marks a passage while running nothing it
shows."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from ingest.actions.sources import do_create_upload_source
from ingest.models import Document
from tests.browser.conftest import screenshot
from tests.ingest.crawl_site import CrawlSite
from tests.support import start_worker, stop_process
from workspaces.models import Role

# Ingestion runs the whole pipeline in the worker (parse, chunk, embed, extract); this only
# bounds a hung test, nothing asserts on how long it took.
PROCESSING = 180_000

HARBOUR = """# Harbour Town

Ada Lovelace met Charles Babbage at the Harbour Town lighthouse.
The lighthouse keeper, Grace Hopper, showed them the tide tables.
"""


@pytest.fixture
def crawl_worker(transactional_db, settings) -> Iterator[subprocess.Popen]:
    """A worker allowed to reach the local test site (loopback is refused by default)."""
    process = start_worker(
        "browser-crawl",
        GRAPHLOOM_MEDIA_ROOT=str(settings.MEDIA_ROOT),
        GRAPHLOOM_CRAWL_ALLOWED_NETWORKS="127.0.0.0/8",
        GRAPHLOOM_CRAWL_TIMEOUT_SECONDS="5",
    )
    yield process
    stop_process(process)


@pytest.mark.slow(reason="uploads processed by a real worker")
def test_dropped_files_are_uploaded_and_the_list_follows_them_to_done(
    page, sign_in, make_member, worker
):
    ada = make_member("ada", workspace="lab", role=Role.EDITOR)
    sign_in(ada)
    page.goto("/")
    files = page.evaluate_handle(
        """([markdown]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([markdown], "harbour.md", { type: "text/markdown" }));
            transfer.items.add(new File(["The tide turned at noon."], "tides.txt", { type: "text/plain" }));
            transfer.items.add(new File([""], "empty.txt", { type: "text/plain" }));
            return transfer;
        }""",
        [HARBOUR],
    )
    page.dispatch_event("[data-dropzone]", "dragover", {"dataTransfer": files})
    page.dispatch_event("[data-dropzone]", "drop", {"dataTransfer": files})
    result = page.locator(".upload-result")
    expect(result).to_contain_text("Uploaded 2 files as")
    expect(result).to_contain_text("empty.txt: The file is empty.")
    # The list refreshed itself after the upload and polls until the source is done.
    expect(page.locator("#source-list .system-status")).to_contain_text("Background worker: ok")
    row = page.locator("#source-list tbody tr").first
    expect(row).to_contain_text("harbour.md, tides.txt")
    expect(row.locator("[data-status]")).to_have_text("Done", timeout=PROCESSING)
    expect(row.locator("[data-progress-label]")).to_have_text("2 documents")
    expect(row.locator("progress")).to_have_attribute("value", "2")
    screenshot(page, "sources-list")
    row.get_by_role("link").click()
    expect(page.get_by_role("heading", name="harbour.md, tides.txt")).to_be_visible()
    expect(page.locator("table.documents tbody tr")).to_have_count(2)


@pytest.mark.slow(reason="a crawl through the page, in Chromium")
def test_a_crawl_started_from_the_form_shows_its_pages(page, sign_in, make_member, crawl_worker):
    ada = make_member("ada", workspace="lab", role=Role.EDITOR)
    sign_in(ada)
    with CrawlSite(n_pages=5, crawl_delay=None) as site:
        page.goto("/")
        form = page.locator("#crawl-form")
        form.get_by_label("URL", exact=True).fill("ftp://example.org/")
        form.get_by_label("Max pages").fill("0")
        form.get_by_role("button", name="Start crawl").click()
        expect(form.locator("#id_url_error")).to_contain_text("is not an http(s) URL")
        expect(form.locator("#id_max_pages_error")).to_contain_text("greater than or equal to 1")
        expect(form.get_by_label("URL", exact=True)).to_have_attribute("aria-invalid", "true")
        screenshot(page, "crawl-form-errors")

        form.get_by_label("URL", exact=True).fill(site.url("/"))
        form.get_by_label("Max pages").fill("10")
        form.get_by_label("Max depth").fill("3")
        form.get_by_label("Rate (requests per second)").fill("0")
        form.get_by_label("Same-site recursive").check()
        form.get_by_label("Name", exact=True).fill("Harbour archive")
        form.get_by_role("button", name="Start crawl").click()
        # The rate limit off is for the workspace's admins only (issue 41); ada edits.
        expect(form.get_by_role("alert").first).to_contain_text(
            "Only a workspace admin may start this crawl: rate 0 turns the rate limit off"
        )
        form.get_by_label("Rate (requests per second)").fill("50")
        form.get_by_role("button", name="Start crawl").click()

        expect(page).to_have_url(re.compile(r"/sources/\d+/\?ws=lab$"))
        expect(page.get_by_role("heading", name="Harbour archive")).to_be_visible()
        status = page.locator("#source-body [data-status]").first
        expect(status).to_have_text("Done", timeout=PROCESSING)
        pages = page.locator("table.pages tbody tr")
        expect(pages).to_have_count(5)
        expect(pages.filter(has_text=site.url("/p/1"))).to_contain_text("Ingested")
        expect(pages.first.locator("td").nth(3)).to_have_text("200")
        expect(page.locator("table.documents tbody tr")).to_have_count(5)
        screenshot(page, "source-detail")


def test_the_document_page_marks_the_passage_and_runs_nothing_it_shows(page, sign_in, make_member):
    ada = make_member("ada", workspace="lab", role=Role.VIEWER)
    hostile = "<img src=x onerror=\"document.title='owned'\">"
    text = "\n".join(["Filler line about tides."] * 120 + [f"Ada met {hostile} here."])
    _source, added = do_create_upload_source(
        workspace=ada.workspace, files=[("log.md", [b"x"])], enqueue=False
    )
    Document.objects.filter(pk=added[0].document.pk).update(
        title=f"Log {hostile}", text=text, status="done"
    )
    dialogs: list[str] = []

    def on_dialog(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    sign_in(ada)
    start = text.index("Ada met")
    end = text.index(" here.")
    page.goto(f"/documents/{added[0].document.pk}/?start={start}&end={end}")
    mark = page.locator("mark#highlight")
    expect(mark).to_have_text(f"Ada met {hostile}")
    expect(mark).to_be_in_viewport()
    expect(mark).to_be_focused()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Log {hostile}")
    expect(page.locator("img")).to_have_count(0)
    assert page.title() != "owned"
    assert dialogs == []
    screenshot(page, "document-highlight")
