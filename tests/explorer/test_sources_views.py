"""The sources list (explorer/sources_views.py): live progress, uploads and crawls. A
source's page and the document page have their own files (test_source_detail_views.py,
test_document_views.py)."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django_tasks_db.models import DBTaskResult

from ingest.models import CrawlPage, Document, Source
from knowledge.models import SourceExtraction
from tests.explorer.sources_data import HOSTILE, MARKDOWN, make_upload, media_root  # noqa: F401
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HTML = b"<html><head><title>Tides</title></head><body><p>High water at noon.</p></body></html>"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
HTMX_LIST = {"HX-Request": "true", "HX-Target": "source-list"}


def tasks_named(name: str) -> list[DBTaskResult]:
    return [t for t in DBTaskResult.objects.all() if t.task_path.endswith(f".{name}")]


# --- The list ---------------------------------------------------------------------------


def test_the_list_shows_the_current_workspaces_sources_only(alice, bob):
    make_upload(alice, ("notes.md", MARKDOWN), name="Acme harbour notes")
    theirs = make_upload(bob, ("secret.md", MARKDOWN), name="Globex secrets")
    their_document = Document.objects.get(source=theirs)
    client = signed_in(alice)
    page = client.get("/").content.decode()
    assert "Acme harbour notes" in page
    assert "Globex secrets" not in page
    assert client.get(f"/sources/{theirs.pk}/").status_code == 404
    assert client.get(f"/documents/{their_document.pk}/").status_code == 404
    assert client.post(f"/sources/{theirs.pk}/cancel/").status_code == 404
    assert client.post(f"/sources/{theirs.pk}/delete/").status_code == 404
    assert Source.objects.get(pk=theirs.pk).status == "running"
    # A workspace alice is not a member of is missing too.
    assert client.get("/?ws=globex").status_code == 404


def test_the_list_keeps_the_dashboards_worker_and_llm_status(alice, settings):
    page = signed_in(alice).get("/").content.decode()
    assert 'Background worker: <strong class="state-missing">missing</strong>' in page
    assert "no LLM configured — the offline extractor will be used" in page
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:9/v1", "tiny"
    assert "Extraction: LLM configured" in signed_in(alice).get("/").content.decode()


def test_the_list_polls_while_a_source_runs_and_stops_once_all_are_finished(alice):
    source = make_upload(alice, ("notes.md", MARKDOWN))
    client = signed_in(alice)
    running = client.get("/?ws=acme", headers=HTMX_LIST)
    body = running.content.decode()
    assert body.lstrip().startswith('<section id="source-list"')  # the partial alone
    assert 'hx-trigger="every 2s, sources-changed from:body"' in body
    assert 'hx-get="/?ws=acme"' in body
    assert "0 of 1 document" in body
    Source.objects.filter(pk=source.pk).update(
        status="done", counters={"documents": 1, "done": 1, "pending": 0}
    )
    finished = client.get("/?ws=acme", headers=HTMX_LIST).content.decode()
    assert "every 2s" not in finished
    assert 'hx-trigger="sources-changed from:body"' in finished
    assert re.search(r'<progress max="1" value="1"', finished)


def test_the_list_and_page_show_progress_inside_a_document_while_a_slice_runs(alice):
    source = make_upload(alice, ("guide.md", MARKDOWN))
    Source.objects.filter(pk=source.pk).update(
        status="running",
        activity={
            "stage": "embedding",
            "done": 128,
            "total": 480,
            "unit": "chunks",
            "document": HOSTILE,
            "at": "2026-11-28T01:00:00+00:00",
        },
    )
    client = signed_in(alice)
    for url in ("/?ws=acme", f"/sources/{source.pk}/?ws=acme"):
        body = client.get(url).content.decode()
        assert "Embedding 128 of 480 chunks of &lt;img src=x onerror=alert(1)&gt;" in body
        assert HOSTILE not in body
    api = client.get(f"/api/v1/workspaces/acme/sources/{source.pk}").json()
    assert api["activity"]["stage"] == "embedding" and api["activity"]["total"] == 480
    # Once the source is finished, an activity left behind is not shown.
    Source.objects.filter(pk=source.pk).update(status="done")
    assert "Embedding" not in client.get(f"/sources/{source.pk}/?ws=acme").content.decode()


def test_the_list_polls_in_a_constant_number_of_queries(alice):
    client = signed_in(alice)

    def queries_for_list() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/?ws=acme", headers=HTMX_LIST).status_code == 200
        return len(captured)

    make_upload(alice, ("a.md", MARKDOWN))
    few = queries_for_list()
    for i in range(12):
        source = make_upload(alice, (f"n{i}.md", MARKDOWN))
        SourceExtraction.objects.create(workspace=alice.workspace, source=source, extractor="llm")
    assert queries_for_list() == few


def test_the_list_says_which_extractor_worked_and_shows_errors(alice):
    offline = make_upload(alice, ("a.md", MARKDOWN), name="Offline one")
    llm = make_upload(alice, ("b.md", MARKDOWN), name="LLM one")
    SourceExtraction.objects.create(workspace=alice.workspace, source=offline, extractor="offline")
    SourceExtraction.objects.create(
        workspace=alice.workspace, source=llm, extractor="llm", model="qwen-tiny"
    )
    Source.objects.filter(pk=llm.pk).update(
        status="failed", error="Every document failed; see their errors.", counters={"failed": 1}
    )
    page = signed_in(alice).get("/").content.decode()
    assert "Offline extractor" in page
    assert "LLM (qwen-tiny)" in page
    assert "Every document failed; see their errors." in page
    assert "1 failed" in page


def test_viewers_see_no_upload_or_crawl_controls_and_their_writes_are_refused(make_member):
    editor = make_member("eddie", workspace="acme", role=Role.EDITOR)
    viewer = make_member("vera", workspace="acme", role=Role.VIEWER)
    source = make_upload(editor, ("notes.md", MARKDOWN), name="Harbour")
    for member, sees_controls in ((editor, True), (viewer, False)):
        client = signed_in(member)
        page = client.get("/").content.decode()
        assert ('name="files"' in page) is sees_controls
        assert ("Start crawl" in page) is sees_controls
        detail = client.get(f"/sources/{source.pk}/").content.decode()
        assert ("Cancel</button>" in detail) is sees_controls
        assert ("Delete…" in detail) is sees_controls
    client = signed_in(viewer)
    files = {"files": [SimpleUploadedFile("x.md", MARKDOWN)]}
    assert client.post("/sources/upload/", files).status_code == 403
    assert client.post("/sources/crawl/", {"url": "http://example.org/"}).status_code == 403
    for action in ("cancel", "retry", "reingest", "delete"):
        assert client.post(f"/sources/{source.pk}/{action}/").status_code == 403
    assert client.get(f"/sources/{source.pk}/delete/").status_code == 403
    assert Source.objects.count() == 1
    assert Source.objects.get().status == "running"


# --- Uploads ----------------------------------------------------------------------------


def test_uploading_several_files_takes_the_good_ones_and_names_each_problem(
    alice, settings, django_capture_on_commit_callbacks
):
    settings.INGEST_MAX_FILE_BYTES = 2000
    files = [
        SimpleUploadedFile("notes.md", MARKDOWN),
        SimpleUploadedFile("tides.html", HTML),
        SimpleUploadedFile("photo.png", PNG),
        SimpleUploadedFile("empty.txt", b""),
        SimpleUploadedFile("huge.txt", b"word " * 1000),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in(alice).post(
            "/sources/upload/?ws=acme",
            {"files": files, "name": "Harbour", "tags": "sea, town"},
            headers={"HX-Request": "true", "HX-Target": "upload-panel"},
        )
    assert response.status_code == 200
    assert response["HX-Trigger"] == "sources-changed"
    source = Source.objects.get()
    assert (source.name, source.kind, source.status) == ("Harbour", "upload", "running")
    assert source.tags == ["sea", "town"]
    assert source.created_by == alice.user
    assert sorted(Document.objects.filter(source=source).values_list("path", flat=True)) == [
        "notes.md",
        "tides.html",
    ]
    assert tasks_named("process_documents")  # handed to the worker on commit
    panel = response.content.decode()
    assert panel.lstrip().startswith('<section id="upload-panel"')
    assert "Uploaded 2 files as" in panel
    problems = dict(re.findall(r"<li><strong>([^<]+)</strong>: ([^<]+)</li>", panel))
    assert problems.keys() == {"photo.png", "empty.txt", "huge.txt"}
    assert problems["photo.png"].startswith("Unsupported type:")
    assert problems["empty.txt"] == "The file is empty."
    assert problems["huge.txt"].startswith("Too large:")


def test_an_upload_without_javascript_redirects_or_shows_the_problems(alice):
    client = signed_in(alice)
    good = client.post("/sources/upload/", {"files": [SimpleUploadedFile("a.md", MARKDOWN)]})
    assert good.status_code == 302
    assert good["Location"] == "/?ws=acme"
    assert "Uploaded 1 file as “a.md”" in client.get(good["Location"]).content.decode()
    bad = client.post("/sources/upload/", {"files": [SimpleUploadedFile("x.png", PNG)]})
    assert bad.status_code == 422
    page = bad.content.decode()
    assert "Nothing was uploaded:" in page
    assert "<strong>x.png</strong>: Unsupported type:" in page
    assert "<html" in page  # the whole page, form and list included
    mixed = client.post(
        "/sources/upload/",
        {"files": [SimpleUploadedFile("b.md", MARKDOWN), SimpleUploadedFile("y.png", PNG)]},
        follow=True,
    )
    assert mixed.redirect_chain == [("/?ws=acme", 302)]
    page = mixed.content.decode()
    assert "Uploaded 1 file as “b.md”" in page
    assert "Not uploaded: y.png: Unsupported type:" in page
    nothing = client.post("/sources/upload/", {})
    assert nothing.status_code == 422
    assert "Choose or drop at least one file." in nothing.content.decode()
    assert Source.objects.count() == 2


# --- Crawls -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"url": "ftp://example.org/"}, "url", "is not an http(s) URL"),
        ({"url": ""}, "url", "This field is required."),
        ({"mode": "sideways"}, "mode", "Select a valid choice."),
        ({"max_pages": "0"}, "max_pages", "greater than or equal to 1"),
        ({"max_depth": "101"}, "max_depth", "less than or equal to 100"),
        ({"rate": "-1"}, "rate", "greater than or equal to 0"),
        ({"allow": "^/docs/\n("}, "allow", "is not a valid regular expression"),
        ({"deny": "[unclosed"}, "deny", "is not a valid regular expression"),
        ({"refresh_every": "10m"}, "refresh_every", "At least 1h between re-crawls"),
        ({"refresh_every": "soon"}, "refresh_every", "Expected a duration like 30m, 6h, 1d or 2w"),
    ],
)
def test_the_crawl_form_puts_each_problem_next_to_its_field(alice, change, field, message):
    data = {"mode": "recursive", "url": "https://example.org/", **change}
    response = signed_in(alice).post(
        "/sources/crawl/?ws=acme", data, headers={"HX-Request": "true", "HX-Target": "crawl-form"}
    )
    assert response.status_code == 200  # htmx swaps only 2xx answers
    form = response.content.decode()
    assert form.lstrip().startswith('<form id="crawl-form"')
    errors = re.search(rf'<ul class="errorlist" id="id_{field}_error">(.*?)</ul>', form, re.S)
    assert errors is not None, form
    assert message in errors.group(0)
    if field != "mode":
        control = re.search(rf'<(?:input|textarea)[^>]*\bid="id_{field}"[^>]*>', form)
        assert control is not None
        assert 'aria-invalid="true"' in control.group(0)
    assert not Source.objects.exists()


def test_the_crawl_form_reports_every_problem_at_once(alice):
    data = {"mode": "recursive", "url": "ftp://example.org/", "max_pages": "0", "deny": "("}
    form = signed_in(alice).post("/sources/crawl/", data).content.decode()
    for field in ("url", "max_pages", "deny"):
        assert f'id="id_{field}_error"' in form
    assert 'id="id_max_depth_error"' not in form


def test_a_refused_crawl_without_javascript_is_the_whole_page_with_a_422(alice):
    response = signed_in(alice).post("/sources/crawl/", {"mode": "single", "url": "nonsense"})
    assert response.status_code == 422
    page = response.content.decode()
    assert "<html" in page
    assert 'id="id_url_error"' in page
    assert 'value="nonsense"' in page  # what was typed is kept


def test_a_valid_crawl_creates_the_source_and_opens_its_page(
    alice, django_capture_on_commit_callbacks
):
    data = {
        "mode": "recursive",
        "url": "http://127.0.0.1:9/docs/",
        "max_pages": "20",
        "max_depth": "2",
        "rate": "0.5",
        "allow": "^http://127\\.0\\.0\\.1:9/docs/\n",
        "deny": "\\.pdf$",
        "use_llms_txt": "on",
        "name": "Docs site",
        "tags": "docs",
        "refresh_every": "1d",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in(alice).post(
            "/sources/crawl/?ws=acme", data, headers={"HX-Request": "true"}
        )
    source = Source.objects.get()
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/sources/{source.pk}/?ws=acme"
    assert (source.kind, source.status, source.name) == ("crawl", "running", "Docs site")
    assert source.settings["max_pages"] == 20
    assert source.settings["max_depth"] == 2
    assert source.settings["rate"] == 0.5
    assert source.settings["allow"] == ["^http://127\\.0\\.0\\.1:9/docs/"]
    assert source.settings["deny"] == ["\\.pdf$"]
    assert source.settings["include_subdomains"] is False
    assert source.refresh_every == 24 * 3600
    assert list(CrawlPage.objects.filter(source=source).values_list("url", "via")) == [
        ("http://127.0.0.1:9/docs/", "seed")
    ]
    assert tasks_named("crawl_source")
    # Without JavaScript: an ordinary redirect; single mode makes a "url" source.
    plain = signed_in(alice).post(
        "/sources/crawl/", {"mode": "single", "url": "https://a.example/"}
    )
    assert plain.status_code == 302
    assert Source.objects.get(pk=int(plain["Location"].split("/")[2])).kind == "url"
