"""The sources list's columns (tags, documents, chunks, entities, last update) and its
filter bar, and the paste-text form that makes a note source (explorer/sources_views.py),
through Django's test client; the form in a real browser is in tests/browser/."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ingest.actions.sources import do_create_text_source, do_refresh_source_progress
from ingest.blobs import read_blob
from ingest.models import Document, Source
from tests.explorer.sources_data import HOSTILE, media_root  # noqa: F401
from tests.knowledge.graph_data import make_graph
from tests.support import signed_in
from workspaces.models import Role

pytestmark = pytest.mark.django_db

HTMX_LIST = {"HX-Request": "true", "HX-Target": "source-list"}
HTMX = {"HX-Request": "true", "HX-Target": "paste-panel"}


def note(member, title: str, *, tags: tuple[str, ...] = ()) -> Source:
    source, _ = do_create_text_source(
        workspace=member.workspace, title=title, text=f"{title} notes.", tags=tags
    )
    return source


def listed(page: str) -> list[str]:
    return re.findall(r'<tr data-source-id="(\d+)"', page)


def cell(page: str, source: Source, name: str) -> str:
    row = page.split(f'<tr data-source-id="{source.pk}">', 1)[1].split("</tr>", 1)[0]
    found = re.search(rf"<td data-{name}>(.*?)</td>", row, re.S)
    assert found, name
    return found[1]


# --- Columns and filters ----------------------------------------------------------------


def test_the_list_shows_each_sources_tags_documents_chunks_entities_and_last_update(alice):
    built = make_graph(
        alice.workspace, entities={"Ada Lovelace": "person", "Analytical Engine": "product"}
    )
    do_refresh_source_progress(source_id=built.source.pk)
    Source.objects.filter(pk=built.source.pk).update(tags=["history", HOSTILE])
    page = signed_in(alice).get("/").content.decode()
    assert cell(page, built.source, "documents").startswith("1")
    assert cell(page, built.source, "chunks") == "1"
    entities = cell(page, built.source, "entities")
    assert f'href="/entities/?ws=acme&amp;source={built.source.pk}"' in entities
    assert ">2</a>" in entities
    assert 'href="/?ws=acme&amp;tag=history"' in page  # a tag filters the list by itself
    assert HOSTILE not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert '<th scope="col">Last updated</th>' in page
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT', page)


def test_the_filter_bar_narrows_the_list_by_tag_kind_and_status(alice, bob):
    harbour = note(alice, "Harbour", tags=("ships", "north"))
    tides = note(alice, "Tides", tags=("north",))
    crawled = make_graph(alice.workspace, entities={"Ada": "person"}, title="Graph").source
    Source.objects.filter(pk=crawled.pk).update(kind="crawl", tags=["north"], status="done")
    Source.objects.filter(pk=tides.pk).update(status="done")
    note(bob, "Globex", tags=("globex-only",))
    client = signed_in(alice)

    def ids(query: str) -> set[str]:
        return set(listed(client.get(f"/?ws=acme{query}").content.decode()))

    page = client.get("/?ws=acme").content.decode()
    offered = re.findall(
        r'<option value="([^"]*)"', page.split('id="filter-tag"', 1)[1].split("</select>")[0]
    )
    assert offered == ["", "north", "ships"]  # the workspace's tags only
    assert ids("&tag=north") == {str(harbour.pk), str(tides.pk), str(crawled.pk)}
    assert ids("&tag=ships") == {str(harbour.pk)}
    assert ids("&kind=crawl") == {str(crawled.pk)}
    assert ids("&status=done&kind=text") == {str(tides.pk)}
    nothing = client.get("/?ws=acme&tag=unused").content.decode()
    assert listed(nothing) == [] and "No sources match these filters." in nothing
    # A value the list does not know is said at its field; the others still apply.
    wrong = client.get("/?ws=acme&kind=pdf&tag=ships").content.decode()
    assert "Select a valid choice. pdf is not one of the available choices." in wrong
    assert set(listed(wrong)) == {str(harbour.pk)}
    control = client.get("/?ws=acme&tag=a%00b&kind=text").content.decode()
    assert "Select a valid choice." in control
    assert set(listed(control)) == {str(harbour.pk), str(tides.pk)}
    # The table alone (what the filter bar's htmx asks for) keeps the filters in its polling.
    table = client.get("/?ws=acme&tag=north&status=done", headers=HTMX_LIST).content.decode()
    assert table.lstrip().startswith('<section id="source-list"')
    assert set(listed(table)) == {str(tides.pk), str(crawled.pk)}
    assert 'hx-get="/?ws=acme&amp;tag=north&amp;status=done"' in table


def test_the_list_reads_a_pages_figures_in_a_constant_number_of_queries(alice):
    client = signed_in(alice)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/?ws=acme&tag=many", headers=HTMX_LIST).status_code == 200
        return len(captured)

    make_graph(alice.workspace, entities={"Ada": "person"}, title="First")
    Source.objects.update(tags=["many"])
    few = queries()
    for i in range(10):
        make_graph(alice.workspace, entities={f"Person {i}": "person"}, title=f"More {i}")
    Source.objects.update(tags=["many"])
    assert queries() == few


# --- Paste text -------------------------------------------------------------------------


def test_pasting_a_note_creates_a_text_source_that_the_list_follows(alice):
    client = signed_in(alice)
    response = client.post(
        "/sources/paste/?ws=acme",
        {
            "paste-title": "Harbour log",
            "paste-text": "Ada met Grace\r\nat the pier.",
            "paste-tags": "log, north",
        },
        headers=HTMX,
    )
    assert response.status_code == 200
    assert response["HX-Trigger"] == "sources-changed"  # the list refreshes itself
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="paste-panel"')
    source = Source.objects.get()
    assert (source.kind, source.name, source.origin, source.tags) == (
        "text", "Harbour log", "paste", ["log", "north"]
    )  # fmt: skip
    assert f'href="/sources/{source.pk}/?ws=acme"' in body and "Added the note" in body
    assert 'name="paste-title"' in body and 'value="Harbour log"' not in body  # a fresh form
    # Stored as the API's text source is (the browser test follows it to done).
    document = Document.objects.get(source=source)
    assert (document.path, document.status) == ("Harbour log.md", "queued")
    assert read_blob(document.blob) == b"Ada met Grace\nat the pier."


def test_a_refused_paste_says_why_next_to_the_field_and_stores_nothing(alice, settings):
    settings.INGEST_MAX_PASTE_CHARS = 20
    client = signed_in(alice)
    blank = client.post(
        "/sources/paste/?ws=acme", {"paste-title": "", "paste-text": "   "}, headers=HTMX
    ).content.decode()
    assert "Give the note a title." in blank and "Paste some text." in blank
    long = client.post(
        "/sources/paste/?ws=acme",
        {"paste-title": HOSTILE, "paste-text": "x" * 21},
        headers=HTMX,
    ).content.decode()
    assert "The text is 21 characters; at most 20 can be pasted at once." in long
    assert HOSTILE not in long and 'value="&lt;img src=x onerror=alert(1)&gt;"' in long
    assert 'data-max-chars="20"' in long  # the page's script checks the same limit first
    # Without JavaScript: the whole page, 422, the problem at its field.
    page = client.post("/sources/paste/?ws=acme", {"paste-title": "Log", "paste-text": "x" * 21})
    assert page.status_code == 422
    assert "at most 20 can be pasted at once" in page.content.decode()
    assert Source.objects.count() == 0


def test_a_paste_without_javascript_redirects_and_says_so(alice):
    client = signed_in(alice)
    response = client.post(
        "/sources/paste/?ws=acme", {"paste-title": "Log", "paste-text": "Tides."}
    )
    assert response.status_code == 302 and response["Location"] == "/?ws=acme"
    assert (
        "Added the note “Log”; processing has started." in client.get("/?ws=acme").content.decode()
    )


def test_viewers_see_no_paste_form_and_cannot_paste(make_member):
    viewer = make_member("vera", workspace="acme", role=Role.VIEWER)
    client = signed_in(viewer)
    assert "paste-form" not in client.get("/").content.decode()
    response = client.post("/sources/paste/", {"paste-title": "Log", "paste-text": "Tides."})
    assert response.status_code == 403
    assert Source.objects.count() == 0
