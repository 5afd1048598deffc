"""The sources screens in a real browser with a real worker: files dropped on the page are
processed to done while the list follows them, a crawl of a real local website started from
the form shows its pages, a pasted note (processed in this process) is followed to done and
its page lists what it gave, and the document page marks a passage while running nothing it
shows."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from ingest.actions.sources import do_create_upload_source
from ingest.models import Document, Source
from tests.browser.conftest import screenshot
from tests.fork_server import ForkedProcess
from tests.ingest.crawl_site import CrawlSite
from tests.support import run_pending, start_worker, stop_process
from workspaces.models import Role

# Ingestion runs the whole pipeline in the worker (parse, chunk, embed, extract); this only
# bounds a hung test, nothing asserts on how long it took.
PROCESSING = 180_000

HARBOUR = """# Harbour Town

Ada Lovelace met Charles Babbage at the Harbour Town lighthouse.
The lighthouse keeper, Grace Hopper, showed them the tide tables.
"""


@pytest.fixture
def crawl_worker(transactional_db, settings) -> Iterator[ForkedProcess]:
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
    row.get_by_role("link", name="harbour.md, tides.txt", exact=True).click()
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


@pytest.mark.slow(reason="the pasted note goes through the whole pipeline (embeddings, extraction)")
def test_a_pasted_note_becomes_a_source_the_list_follows_to_done(
    page, sign_in, make_member, settings
):
    settings.INGEST_MAX_PASTE_CHARS = 400
    ada = make_member("ada", workspace="lab", role=Role.EDITOR)
    sign_in(ada)
    page.goto("/")
    form = page.locator("#paste-form")
    # Too long: said by the page before anything is sent.
    form.get_by_label("Title").fill("Too long")
    form.get_by_label("Text").fill("x" * 401)
    form.get_by_role("button", name="Add note").click()
    too_long = form.locator("[data-paste-too-long]")
    expect(too_long).to_have_text(
        "The text is 401 characters; at most 400 can be pasted at once. "
        "Split it, or upload it as a file."
    )
    expect(form.get_by_label("Text")).to_be_focused()
    assert Source.objects.count() == 0

    form.get_by_label("Text").fill(HARBOUR)
    form.get_by_label("Title").fill("Harbour Town")
    form.get_by_label("Tags").fill("harbour, notes")
    form.get_by_role("button", name="Add note").click()
    expect(page.locator("#paste-panel [data-pasted]")).to_contain_text(
        "Added the note Harbour Town; processing has started."
    )
    # The list refreshed itself: the note is there, running, with its tags.
    row = page.locator("#source-list tbody tr").first
    expect(row).to_contain_text("Harbour Town")
    expect(row.locator("td.tags a.tag")).to_have_text(["harbour", "notes"])
    source = Source.objects.get()
    assert (source.kind, source.origin) == ("text", "paste")
    run_pending(source)  # the worker's work, in this process
    expect(row.locator("[data-status]")).to_have_text("Done", timeout=PROCESSING)
    expect(row.locator("[data-documents]")).to_have_text("1")
    expect(row.locator("[data-entities]")).not_to_have_text("0")
    screenshot(page, "sources-paste")
    row.get_by_role("link", name="Harbour Town", exact=True).click()
    entities = page.locator("#source-entities tbody tr")
    expect(entities.first).to_be_visible()
    expect(page.locator("#source-entities")).to_contain_text("Ada Lovelace")
    screenshot(page, "source-gave")


def test_a_dropped_or_chosen_file_is_dated_by_its_modification_time(page, sign_in, make_member):
    """The page's script sends each file's File.lastModified with it: the document's date
    until its content states one (no worker: the date is set when the file is stored)."""
    ada = make_member("ada", workspace="lab", role=Role.EDITOR)
    sign_in(ada)
    page.goto("/")
    march = 1709632800000  # 2024-03-05T10:00:00Z, in milliseconds as File.lastModified is
    files = page.evaluate_handle(
        """([markdown, march]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([markdown], "harbour.md", { lastModified: march }));
            transfer.items.add(new File(["The tide turned."], "tides.txt", { lastModified: march + 86400000 }));
            return transfer;
        }""",
        [HARBOUR, march],
    )
    page.dispatch_event("[data-dropzone]", "drop", {"dataTransfer": files})
    expect(page.locator(".upload-result")).to_contain_text("Uploaded 2 files as")
    dated = dict(
        Document.objects.filter(workspace=ada.workspace).values_list("path", "published_at")
    )
    assert {path: moment and moment.isoformat() for path, moment in dated.items()} == {
        "harbour.md": "2024-03-05T10:00:00+00:00",
        "tides.txt": "2024-03-06T10:00:00+00:00",
    }
    assert set(
        Document.objects.filter(workspace=ada.workspace).values_list("published_source", flat=True)
    ) == {"file"}
    # Chosen in the dialog instead of dropped: the same.
    page.set_input_files(
        "#upload-files",
        files=[
            {"name": "notes.md", "mimeType": "text/markdown", "buffer": b"# Notes\n\nA note.\n"}
        ],
    )
    page.locator("#upload-panel button[type=submit]").click()
    expect(page.locator(".upload-result")).to_contain_text("Uploaded 1 file as")
    notes = Document.objects.get(workspace=ada.workspace, path="notes.md")
    assert notes.published_source == "file" and notes.published_at is not None
    document = Document.objects.get(workspace=ada.workspace, path="harbour.md")
    page.goto(f"/documents/{document.pk}/")
    expect(page.locator("#document-date")).to_have_text("5 March 2024")
    expect(page.locator(".document-dates")).to_contain_text("(File modification time)")
