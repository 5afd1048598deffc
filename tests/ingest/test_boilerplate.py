"""Boilerplate: text a source repeats across its documents (menus, footers, notices,
"previous topic / next topic") is found per source, chunked apart from the content, never
extracted, counted on the source, and found again as documents come and go — including in
the documents chunked before it was known to repeat (ingest/boilerplate.py,
ingest/actions/boilerplate.py)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from django.db.models import Q, TextField
from django.db.models.functions import Cast

from ingest import boilerplate
from ingest.actions.crawl import (
    do_create_crawl_source,
    do_run_crawl,
    do_start_crawl,
    validate_crawl_settings,
)
from ingest.actions.pipeline import do_process_documents
from ingest.actions.sources import (
    do_add_file,
    do_create_source,
    do_delete_document,
    do_refresh_source_progress,
    do_start_source,
)
from ingest.chunking import chunk_text
from ingest.embeddings import ApproximateCounter
from ingest.models import Chunk, Document, DocumentBlock, DocumentStatus, Source, SourceStatus
from knowledge.models import Entity, ExtractionRun, Mention
from tests.ingest.crawl_site import CrawlSite, Page
from tests.support import run_pending, signed_in

FOOTER = (
    "This page is part of the Initech Documentation Portal maintained by Samantha Whitfield "
    "in Cleveland. Last updated on Nov {day}, 2026."
)
COPYRIGHT = "© 2001-2026 Initech Corporation. All rights reserved."
FIRST = ["Marcus", "Priya", "Jonas", "Amara", "Hiroshi"]
LAST = ["Delgado", "Raman", "Eklund", "Okafor"]
PREFIX = ["Harbor", "Quill", "North", "Sun", "Kestrel"]
SUFFIX = ["wind", "stone", "field", "gate"]
CITIES = ["Lisbon", "Toronto", "Uppsala", "Lagos", "Osaka", "Quito", "Perth"]


def person(i: int) -> str:
    """Twenty pages, twenty people and companies: no page's content repeats another's."""
    return f"{FIRST[i % 5]} {LAST[i // 5 % 4]}"


def company(i: int) -> str:
    return f"{PREFIX[i % 5]}{SUFFIX[i // 5 % 4]} Labs"


def content(i: int) -> str:
    return " ".join(
        f"In {1990 + i} {person(i)} founded {company(i)} in {CITIES[i % 7]} to study "
        f"problem {i}, part {j}."
        for j in range(5)
    )


def markdown_page(i: int) -> bytes:
    """A documentation page: a menu, its own content, neighbours, a notice, a footer."""
    return f"""# {company(i)}

Home
Products
Support Center
About the Initech Documentation Portal

{content(i)}

Previous topic

Topic {i - 1} overview

Next topic

Topic {i + 1} overview

{FOOTER.format(day=i % 28 + 1)}

{COPYRIGHT}
""".encode()


def upload(workspace, pages: dict[str, bytes], name: str = "portal") -> Source:
    source = do_create_source(workspace=workspace, kind="upload", name=name)
    for path, data in pages.items():
        do_add_file(source=source, path=path, chunks=[data])
    do_start_source(source=source, enqueue=False)
    run_pending(source)
    source.refresh_from_db()
    return source


def boilerplate_text(document: Document) -> str:
    return "".join(
        Chunk.objects.filter(document=document, boilerplate=True)
        .order_by("ordinal")
        .values_list("text", flat=True)
    )


def assert_cleanly_split(document: Document) -> None:
    """Menus, neighbours, notice and footer are boilerplate chunks; no content chunk holds
    any of them, and no boilerplate chunk holds content."""
    chunks = list(Chunk.objects.filter(document=document).order_by("ordinal"))
    for chunk in chunks:
        assert document.text[chunk.char_start : chunk.char_end] == chunk.text
        if chunk.boilerplate:
            assert "founded" not in chunk.text, chunk.text
        else:
            for repeated in ("Samantha Whitfield", "Initech Corporation", "Support Center"):
                assert repeated not in chunk.text, chunk.text
    text = boilerplate_text(document)
    for repeated in ("Samantha Whitfield", "Initech Corporation", "Support Center", "Next topic"):
        assert repeated in text, (document.path, text)


# --- The engine ----------------------------------------------------------------------


def test_normalising_folds_case_spaces_and_short_numbers():
    assert boilerplate.normalise("  Last  updated on\tNov 24, 2026 ") == (
        "last updated on nov 0, 0"
    )
    assert boilerplate.fingerprint("Python 3.11.2 Documentation") == boilerplate.fingerprint(
        "python 3.12.0   documentation"
    )
    # Issue numbers and other long numbers stay what they are.
    assert boilerplate.fingerprint("Fixed in bpo-18395.") != boilerplate.fingerprint(
        "Fixed in bpo-33899."
    )


def spans_of(text: str, repeated_lines: list[str]) -> list[str]:
    lines = boilerplate.lines(text)
    repeated = {boilerplate.fingerprint(line) for line in repeated_lines}
    return [text[s:e] for s, e in boilerplate.boilerplate_spans(lines, repeated)]


def test_runs_of_repeated_lines_are_boilerplate_and_lone_labels_are_not():
    text = (
        "Navigation\nindex\nmodules\n|\nPython\n»\n3.11.2 Documentation\n»\n\n"
        "A paragraph of this page only.\n\n"
        "Note\n\n"
        "Another paragraph of its own, which goes on.\n"
        "Changed in version 3.10: Added the key parameter.\n"
        "And ends here.\n\n"
        "© 2001-2023, Python Software Foundation. All rights reserved.\n"
    )
    repeated = [
        "Navigation", "index", "modules", "Python", "3.11.2 Documentation", "Note",
        "Changed in version 3.10: Added the key parameter.",
        "© 2001-2023, Python Software Foundation. All rights reserved.",
    ]  # fmt: skip
    assert spans_of(text, repeated) == [
        "Navigation\nindex\nmodules\n|\nPython\n»\n3.11.2 Documentation\n»",
        "© 2001-2023, Python Software Foundation. All rights reserved.",
    ]


def test_neighbouring_titles_between_repeated_lines_are_bridged():
    text = (
        "Content of the page.\n\nPrevious topic\n\nbisect — Array bisection\n\n"
        "Next topic\n\nheapq — Heap queue\n\nThis page\n\nReport a bug\n\nShow source\n"
    )
    repeated = ["Previous topic", "Next topic", "This page", "Report a bug", "Show source"]
    assert spans_of(text, repeated) == [text[text.index("Previous") :].rstrip()]


def test_code_is_never_boilerplate():
    snippet = "```\nimport asyncio\nasync def main():\n    await asyncio.sleep(1)\n```"
    text = f"Intro of the page.\n\n{snippet}\n\nThe end of it."
    assert spans_of(text, snippet.splitlines()) == []
    assert boilerplate.fingerprints(boilerplate.lines(snippet)) == set()


def test_the_chunker_gives_boilerplate_ranges_chunks_of_their_own():
    text = markdown_page(7).decode()
    lines = boilerplate.lines(text)
    repeated = {
        boilerplate.fingerprint(line)
        for line in text.splitlines()
        if line and "founded" not in line and not line.startswith("#")
    }
    ranges = boilerplate.boilerplate_spans(lines, repeated)
    assert ranges
    chunks = chunk_text(
        text, counter=ApproximateCounter(), max_tokens=60, overlap_tokens=20, boilerplate=ranges
    )
    flagged = [c for c in chunks if c.boilerplate]
    assert flagged and len(flagged) < len(chunks)
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        # Headings directly before a range go with it: alone, they would be a chunk of one
        # heading (the page's title above its menu). What follows them lies in the range.
        rest = re.sub(r"\A(?:#[^\n]*\n+)+", "", chunk.text) if chunk.boilerplate else chunk.text
        start = chunk.end - len(rest)
        inside = any(s <= start and chunk.end <= e for s, e in ranges)
        outside = all(chunk.end <= s or chunk.start >= e for s, e in ranges)
        assert inside if chunk.boilerplate else outside, chunk
    assert chunks[0].boilerplate and chunks[0].text.startswith(f"# {company(7)}\n\nHome")


# --- One source, as it is ingested ------------------------------------------------------

pytestmark_db = pytest.mark.django_db


@pytestmark_db
def test_blocks_repeated_on_twenty_pages_are_boilerplate_even_on_the_first(alice, settings):
    # One document per task: the first two are done when the third shows the blocks repeat,
    # so they are sent round again at once.
    settings.INGEST_DOCUMENTS_PER_TASK = 1
    source = upload(alice.workspace, {f"topic-{i:02}.md": markdown_page(i) for i in range(20)})
    documents = list(Document.objects.filter(source=source).order_by("pk"))
    assert {d.status for d in documents} == {DocumentStatus.DONE}
    for document in documents:
        assert_cleanly_split(document)
    counters = source.counters
    flagged = Chunk.objects.filter(document__source=source, boilerplate=True)
    assert counters["boilerplate_chunks"] == flagged.count() >= 20
    assert counters["boilerplate_chars"] == sum(len(c.text) for c in flagged)
    assert counters["text_chars"] == sum(len(d.text.rstrip()) for d in documents)
    assert 0 < source.boilerplate.percent < 100
    assert source.status == SourceStatus.DONE
    page = signed_in(alice).get(f"/sources/{source.pk}/?ws={alice.workspace.slug}")
    body = page.content.decode()
    assert f"Boilerplate skipped: {counters['boilerplate_chunks']} chunks (" in body
    assert "% of text) repeated across documents" in body


def manual_page(i: int) -> bytes:
    """A manual's page: headings every page has, and content of its own only."""
    return f"# {company(i)}\n\n## Overview\n\n{content(i)}\n\n## See also\n\n{content(i + 7)}\n".encode()


@pytestmark_db
def test_a_repeated_heading_does_not_send_the_settled_documents_round_again(alice, settings):
    # "## See also" is held by the third page as well when it comes: it repeats now, but a
    # heading makes no span, so the two settled pages would be cut the same. They keep their
    # chunks untouched and only take the new answer on their rows; a real block still sends
    # them round (test_blocks_repeated_on_twenty_pages_are_boilerplate_even_on_the_first).
    settings.INGEST_DOCUMENTS_PER_TASK = 1
    source = upload(alice.workspace, {f"page-{i}.md": manual_page(i) for i in range(2)})
    before = dict(Document.objects.filter(source=source).values_list("pk", "updated_at"))
    do_add_file(source=source, path="page-2.md", chunks=[manual_page(2)])
    do_start_source(source=source, enqueue=False)
    run_pending(source)
    source.refresh_from_db()
    assert source.status == SourceStatus.DONE
    assert source.counters["boilerplate_chunks"] == 0
    after = dict(
        Document.objects.filter(source=source, pk__in=before).values_list("pk", "updated_at")
    )
    assert after == before
    see_also = DocumentBlock.objects.filter(
        source=source, fingerprint=boilerplate.fingerprint("## See also")
    )
    assert see_also.count() == 3 and not see_also.filter(repeated=False).exists()
    # Nothing left disagreeing for the pass at the end to find.
    do_refresh_source_progress(source_id=source.pk)
    assert (
        dict(Document.objects.filter(source=source, pk__in=before).values_list("pk", "updated_at"))
        == before
    )


@pytestmark_db
def test_documents_in_flight_at_the_crossing_are_cleaned_when_the_source_is_quiet(alice, settings):
    # Sixteen documents per task: the first two are still in the pipeline when the third is
    # chunked; they go round again once nothing is pending.
    settings.INGEST_DOCUMENTS_PER_TASK = 16
    source = upload(alice.workspace, {f"topic-{i:02}.md": markdown_page(i) for i in range(5)})
    for document in Document.objects.filter(source=source):
        assert_cleanly_split(document)
    assert source.status == SourceStatus.DONE
    assert not DocumentBlock.objects.filter(
        source=source, fingerprint=boilerplate.fingerprint(COPYRIGHT), repeated=False
    ).exists()


@pytestmark_db
def test_the_same_blocks_in_two_sources_under_the_threshold_are_no_boilerplate(alice):
    pages = {f"topic-{i}.md": markdown_page(i) for i in range(4)}
    first = upload(alice.workspace, dict(list(pages.items())[:2]), name="first")
    second = upload(alice.workspace, dict(list(pages.items())[2:]), name="second")
    assert not Chunk.objects.filter(boilerplate=True).exists()
    assert first.counters["boilerplate_chunks"] == second.counters["boilerplate_chunks"] == 0
    copyright_rows = DocumentBlock.objects.filter(fingerprint=boilerplate.fingerprint(COPYRIGHT))
    assert copyright_rows.count() == 4 and not copyright_rows.filter(repeated=True).exists()


@pytestmark_db
def test_chunking_a_document_again_does_not_count_it_twice(alice):
    source = upload(alice.workspace, {f"topic-{i}.md": markdown_page(i) for i in range(2)})
    document = Document.objects.filter(source=source).earliest("pk")
    for _ in range(3):
        Document.objects.filter(pk=document.pk).update(status=DocumentStatus.PARSED)
        run_pending(source)
    assert (
        DocumentBlock.objects.filter(
            source=source, fingerprint=boilerplate.fingerprint(COPYRIGHT)
        ).count()
        == 2
    )
    assert not Chunk.objects.filter(document__source=source, boilerplate=True).exists()


@pytestmark_db
def test_deleting_documents_lowers_the_counts_and_unmarks_what_no_longer_repeats(alice):
    source = upload(alice.workspace, {f"topic-{i}.md": markdown_page(i) for i in range(3)})
    assert Chunk.objects.filter(document__source=source, boilerplate=True).exists()
    do_delete_document(document=Document.objects.filter(source=source).earliest("pk"))
    assert (
        DocumentBlock.objects.filter(
            source=source, fingerprint=boilerplate.fingerprint(COPYRIGHT)
        ).count()
        == 2
    )
    do_refresh_source_progress(source_id=source.pk)
    source.refresh_from_db()
    # The two left were chunked with the old counts: they go round again.
    assert source.counters["pending"] == 2 and source.status == SourceStatus.RUNNING
    run_pending(source)
    source.refresh_from_db()
    assert not Chunk.objects.filter(document__source=source, boilerplate=True).exists()
    assert source.counters["boilerplate_chunks"] == 0 and source.status == SourceStatus.DONE
    for document in Document.objects.filter(source=source):
        assert "Samantha Whitfield" in "".join(c.text for c in document.chunks.all())


@pytestmark_db
def test_detection_can_be_turned_off(alice, settings):
    settings.BOILERPLATE_MIN_DOCUMENTS = 0
    source = upload(alice.workspace, {f"topic-{i}.md": markdown_page(i) for i in range(4)})
    assert not Chunk.objects.filter(document__source=source, boilerplate=True).exists()
    assert not DocumentBlock.objects.filter(source=source).exists()


# --- A real crawl through the whole pipeline ---------------------------------------------


def html_page(i: int) -> Page:
    return Page(
        f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>{company(i)}</title></head><body>
<div class="cookie-banner"><p>We use cookies on the Initech Documentation Portal.</p></div>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/products">Products</a></li>
</ul></nav></header>
<main><article><h1>{company(i)}</h1>
<p>{html.escape(content(i))}</p>
<p>Later {person(i)} wrote a detailed account of problem {i} for the journal.</p>
<p><a href="/t{(i + 1) % 20}">Next: topic {(i + 1) % 20}</a></p>
<p>{html.escape(FOOTER.format(day=i % 28 + 1))}</p>
<p>{html.escape(COPYRIGHT)}</p>
</article></main>
<footer><p>Initech Holdings, Cleveland.</p></footer>
</body></html>""".encode()
    )


@pytest.fixture
def portal() -> Iterator[CrawlSite]:
    with CrawlSite(crawl_delay=None, n_pages=1) as site:
        site.pages = {f"/t{i}": html_page(i) for i in range(20)}
        site.pages["/robots.txt"] = Page(b"User-agent: *\nAllow: /\n", "text/plain")
        yield site


@pytest.mark.slow(reason="twenty pages through the whole pipeline")
@pytestmark_db
def test_a_crawl_of_twenty_pages_extracts_nothing_from_its_boilerplate(alice, portal, settings):
    settings.INGEST_PIPELINE_STAGES = [
        "ingest.stages.parse",
        "ingest.stages.chunk",
        "ingest.stages.embed",
        "knowledge.stages.extract",
        "knowledge.stages.consolidate",
    ]
    settings.CRAWL_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.INGEST_DOCUMENTS_PER_TASK = 8
    config = validate_crawl_settings(url=portal.url("/t0"), mode="recursive", max_depth=25, rate=50)
    source = do_create_crawl_source(workspace=alice.workspace, crawl=config)
    do_start_crawl(source=source, enqueue=False)
    do_run_crawl(source_id=source.pk, process=lambda ids: do_process_documents(document_ids=ids))
    source.refresh_from_db()
    documents = list(Document.objects.filter(source=source).order_by("pk"))
    assert len(documents) == 20 and {d.status for d in documents} == {DocumentStatus.DONE}
    for document in documents:
        text = boilerplate_text(document)
        assert "Samantha Whitfield" in text and "Initech Corporation" in text, document.path
        assert "founded" not in text
    # The earliest pages were chunked before the footer repeated, and extracted with it
    # (runs of their old windows name its people): cleaned all the same.
    early_runs = ExtractionRun.objects.annotate(raw=Cast("result", TextField())).filter(
        source=source, raw__contains="Whitfield"
    )
    assert early_runs.exists()
    assert not Mention.objects.filter(chunk__document__source=source, chunk__boilerplate=True)
    assert not Mention.objects.filter(
        Q(surface_form__icontains="Whitfield") | Q(surface_form__icontains="Initech"),
        chunk__document__source=source,
    ).exists()
    assert not Entity.objects.filter(name__icontains="Whitfield", mention_count__gt=0).exists()
    # Content is extracted as usual, from the first page on.
    assert Mention.objects.filter(
        chunk__document=documents[0], surface_form__icontains=FIRST[0]
    ).exists()
    assert source.counters["boilerplate_chunks"] >= 20
    assert source.status == SourceStatus.DONE
