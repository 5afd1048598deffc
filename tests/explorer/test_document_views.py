"""The document page (explorer/document_views.py): the span an evidence link asks for is
marked, a span outside the text is said so, and hostile titles and text stay text."""

from __future__ import annotations

import pytest

from ingest.models import Document
from tests.explorer.sources_data import HOSTILE, MARKDOWN, make_upload, media_root  # noqa: F401
from tests.support import signed_in

pytestmark = pytest.mark.django_db


def make_document(member, *, title: str, text: str) -> Document:
    source = make_upload(member, ("doc.md", MARKDOWN), name="Harbour")
    Document.objects.filter(source=source).update(title=title, text=text, status="done")
    return Document.objects.get(source=source)


def test_the_document_page_highlights_the_span_it_is_asked_for(alice):
    text = "The keeper lit the lamp. Ada Lovelace visited the lighthouse. Then it rained."
    document = make_document(alice, title="Harbour log", text=text)
    start = text.index("Ada Lovelace")
    end = start + len("Ada Lovelace visited the lighthouse.")
    page = (
        signed_in(alice).get(f"/documents/{document.pk}/?start={start}&end={end}").content.decode()
    )
    assert (
        '<div class="document-text" data-document-text>The keeper lit the lamp. '
        '<mark id="highlight" tabindex="-1">Ada Lovelace visited the lighthouse.</mark>'
        " Then it rained.</div>"
    ) in page
    assert "js/sources/document.js" in page
    assert "Harbour log" in page
    assert f'href="/sources/{document.source_id}/?ws=acme"' in page


def test_the_document_page_without_a_span_or_with_one_outside_the_text(alice):
    document = make_document(alice, title="Short", text="Only this.")
    client = signed_in(alice)
    plain = client.get(f"/documents/{document.pk}/").content.decode()
    assert "<mark" not in plain
    assert "Only this.</div>" in plain
    assert "document.js" not in plain
    outside = client.get(f"/documents/{document.pk}/?start=50&end=80").content.decode()
    assert "<mark" not in outside
    assert "is not in this document" in outside
    clamped = client.get(f"/documents/{document.pk}/?start=5&end=999").content.decode()
    assert '<mark id="highlight" tabindex="-1">this.</mark>' in clamped
    assert client.get(f"/documents/{document.pk}/?start=x&end=2").status_code == 200


def test_the_document_page_escapes_hostile_titles_and_text(alice):
    text = f"Before {HOSTILE} <script>alert(2)</script> after."
    document = make_document(alice, title=HOSTILE, text=text)
    start = text.index("<img")
    end = text.index("</script>") + len("</script>")
    page = (
        signed_in(alice).get(f"/documents/{document.pk}/?start={start}&end={end}").content.decode()
    )
    assert HOSTILE not in page
    assert "<script>alert(2)" not in page
    assert "<title>&lt;img src=x onerror=alert(1)&gt; · Graphloom</title>" in page
    assert (
        '<mark id="highlight" tabindex="-1">&lt;img src=x onerror=alert(1)&gt; '
        "&lt;script&gt;alert(2)&lt;/script&gt;</mark>"
    ) in page
