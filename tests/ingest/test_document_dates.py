"""A document's own date (Document.published_at) from every place it comes from: HTML
metadata, PDF and DOCX properties, a crawled page's HTTP Last-Modified (a real local
server), an upload's file time (the API's `last_modified`) and `manage.py ingest`'s file
mtime; the content's own date over its carrier's; implausible dates refused."""

from __future__ import annotations

import datetime as dt
import json
import os
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from ingest import stages
from ingest.actions.crawl import (
    do_create_crawl_source,
    do_run_crawl,
    do_start_crawl,
    validate_crawl_settings,
)
from ingest.actions.sources import do_add_file, do_create_source, validate_modified_times
from ingest.models import Document, PublishedSource, Source
from ingest.parsers import ParserLimits, parse
from ingest.parsers.dates import (
    CONTENT_SOURCES,
    PUBLISHED_SOURCES,
    from_timestamp,
    own_date,
    parse_date,
    parse_http_header,
)
from ingest.parsers.html_dates import page_dates
from tests.ingest.crawl_site import CrawlSite, Page
from tests.ingest.factories import docx_bytes, pdf_bytes
from workspaces.errors import InvalidInput

pytestmark = pytest.mark.django_db

UTC = dt.UTC
LIMITS = ParserLimits()
NOW = dt.datetime(2025, 6, 1, 12, tzinfo=UTC)


def when(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def html(head: str = "", body: str = "<p>The harbour reopened after the storm.</p>") -> bytes:
    return (
        f"<html><head><title>Harbour news</title>{head}</head><body>{body}</body></html>"
    ).encode()


def parse_dates(data: bytes, filename: str = "page.html") -> dict[str, str]:
    metadata = parse(data, filename=filename, limits=LIMITS).metadata
    return {key: metadata[key] for key in ("published", "modified", "created") if key in metadata}


# --- parsing and sanity -----------------------------------------------------------------


def test_dates_are_parsed_strictly_and_kept_only_when_sane():
    assert parse_date("2024-03-05", now=NOW) == when(2024, 3, 5)
    assert parse_date("2024-03-05T10:00:00+01:00", now=NOW) == when(2024, 3, 5, 9)
    assert parse_date("2024-03-05T10:00:00Z", now=NOW) == when(2024, 3, 5, 10)
    assert parse_date("2024-03-05 10:00", now=NOW) == when(2024, 3, 5, 10)  # naive: UTC
    assert parse_date("Tue, 05 Mar 2024 10:00:00 GMT", now=NOW) == when(2024, 3, 5, 10)
    for junk in ("March 5, 2024", "yesterday", "", "2024-13-01", "9" * 80, None, 20240305):
        assert parse_date(junk, now=NOW) is None, junk
    # The epoch is a placeholder, not a date; a day ahead is clock skew, two days are not.
    assert parse_date("1970-01-01T00:00:00Z", now=NOW) is None
    assert parse_date("1969-07-20", now=NOW) is None
    assert parse_date("2025-06-02T11:00:00Z", now=NOW) == when(2025, 6, 2, 11)
    assert parse_date("2025-06-03T12:00:01Z", now=NOW) is None
    assert parse_date("0001-01-01T00:00:00+01:00", now=NOW) is None
    assert parse_http_header("Tue, 05 Mar 2024 10:00:00 GMT", now=NOW) == when(2024, 3, 5, 10)
    assert parse_http_header("Tuesday, 05-Mar-24 10:00:00 GMT", now=NOW) == when(2024, 3, 5, 10)
    assert parse_http_header("2024-03-05", now=NOW) is None  # not an HTTP date
    assert from_timestamp(when(2024, 3, 5).timestamp(), now=NOW) == when(2024, 3, 5)
    assert from_timestamp(0, now=NOW) is None
    assert from_timestamp(1e20, now=NOW) is None
    assert set(PUBLISHED_SOURCES) == set(PublishedSource.values) - {""}
    assert set(PUBLISHED_SOURCES) > CONTENT_SOURCES


def test_a_document_states_the_latest_of_its_sane_dates():
    stated = {"created": "2021-01-01", "modified": "2023-02-03T04:05:06Z", "published": "x"}
    assert own_date(stated, now=NOW) == when(2023, 2, 3, 4, 5, 6)
    # A modification "before" creation is the tool's clock: the later date still counts.
    assert own_date({"created": "2022-05-05", "modified": "2020-01-01"}, now=NOW) == when(
        2022, 5, 5
    )
    assert own_date({"modified": "2999-01-01", "published": "2020-01-01"}, now=NOW) == when(
        2020, 1, 1
    )
    assert own_date({"date": "2020-01-01"}, now=NOW) is None


# --- HTML ---------------------------------------------------------------------------------


def test_html_meta_tags_give_the_published_and_modified_dates():
    head = (
        '<meta property="article:published_time" content="2023-04-05T06:07:08+02:00">'
        '<meta property="article:modified_time" content="2024-01-02T03:04:05Z">'
    )
    assert parse_dates(html(head)) == {
        "published": "2023-04-05T04:07:08+00:00",
        "modified": "2024-01-02T03:04:05+00:00",
    }
    for head, published in [
        ('<meta name="DC.date" content="2019-09-09">', "2019-09-09T00:00:00+00:00"),
        ('<meta name="dcterms.date" content="2018-08-08">', "2018-08-08T00:00:00+00:00"),
        ('<meta name="citation_date" content="2017-07-07">', "2017-07-07T00:00:00+00:00"),
        ('<meta name="date" content="2016-06-06T10:00:00Z">', "2016-06-06T10:00:00+00:00"),
    ]:
        assert parse_dates(html(head)) == {"published": published}, head
    updated = '<meta property="og:updated_time" content="2022-02-02T02:02:02+00:00">'
    assert parse_dates(html(updated)) == {"modified": "2022-02-02T02:02:02+00:00"}


def test_html_json_ld_dates_are_read_and_broken_blocks_skipped():
    ld = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "WebSite", "name": "Harbour"},
            {
                "@type": "NewsArticle",
                "datePublished": "2021-03-04T05:06:07Z",
                "dateModified": "2021-05-06T07:08:09Z",
                "author": {"@type": "Person", "datePublished": "1999-01-01"},
            },
        ],
    }
    head = (
        '<script type="application/ld+json">{not json</script>'
        f'<script type="application/ld+json">{json.dumps(ld)}</script>'
    )
    assert parse_dates(html(head)) == {
        "published": "2021-03-04T05:06:07+00:00",
        "modified": "2021-05-06T07:08:09+00:00",
    }
    # The JSON-LD's script is never the page's text.
    assert "datePublished" not in parse(html(head), filename="p.html", limits=LIMITS).text


def test_the_article_time_counts_only_without_metadata_and_only_in_the_article():
    body = (
        "<aside><time datetime='2010-10-10'>older post</time></aside>"
        "<article><h1>Storm</h1><p>Posted <time datetime='bogus'>?</time>"
        "<time datetime='2020-02-20T20:20:00Z'>20 Feb</time></p>"
        "<p>The harbour reopened after the storm.</p></article>"
    )
    assert parse_dates(html(body=body)) == {"published": "2020-02-20T20:20:00+00:00"}
    meta = '<meta name="date" content="2015-05-15">'
    assert parse_dates(html(meta, body)) == {"published": "2015-05-15T00:00:00+00:00"}
    sidebar_only = "<aside><time datetime='2010-10-10'>old</time></aside><p>Text here.</p>"
    assert parse_dates(html(body=sidebar_only)) == {}


def test_html_dates_skip_implausible_values_for_the_next_one():
    head = (
        '<meta property="article:published_time" content="2999-01-01T00:00:00Z">'
        '<meta name="citation_date" content="not a date">'
        '<meta name="DC.date" content="2012-12-12">'
    )
    assert parse_dates(html(head)) == {"published": "2012-12-12T00:00:00+00:00"}


def test_page_dates_are_bounded():
    import lxml.html  # type: ignore[import-untyped]

    many = "".join(f'<meta name="x{n}" content="y">' for n in range(600))
    late = '<meta name="date" content="2012-12-12">'
    tree = lxml.html.document_fromstring(f"<html><head>{many}{late}</head><body>x</body></html>")
    assert page_dates(tree) == {}  # past the first 500 meta tags nothing is read


# --- PDF and DOCX --------------------------------------------------------------------------


def test_pdf_creation_and_modification_dates():
    data = pdf_bytes(
        ["Harbour report"], created="D:20200102030405+00'00'", modified="D:20210607080910Z"
    )
    assert parse_dates(data, "report.pdf") == {
        "created": "2020-01-02T03:04:05+00:00",
        "modified": "2021-06-07T08:09:10+00:00",
    }
    assert parse_dates(pdf_bytes(["No dates"], created=None), "plain.pdf") == {}
    broken = pdf_bytes(["Broken date"], created="D:2020XX", modified="garbage")
    assert parse_dates(broken, "broken.pdf") == {}


def test_docx_core_properties_created_and_modified():
    data = docx_bytes(created=when(2019, 1, 2, 3, 4, 5), modified=when(2022, 6, 7, 8, 9, 10))
    assert parse_dates(data, "memo.docx") == {
        "created": "2019-01-02T03:04:05+00:00",
        "modified": "2022-06-07T08:09:10+00:00",
    }


# --- documents: what a stage writes ---------------------------------------------------------


def add_and_parse(
    source: Source, path: str, data: bytes, moment: dt.datetime | None = None
) -> Document:
    added = do_add_file(source=source, path=path, chunks=[data], modified_at=moment)
    stages.parse(document=added.document)
    added.document.refresh_from_db()
    return added.document


@pytest.fixture
def uploads(alice) -> Source:
    return do_create_source(workspace=alice.workspace, kind="upload", name="dated")


def test_each_format_dates_its_document_and_the_file_time_is_the_fallback(uploads):
    mtime = when(2024, 9, 9, 9, 9, 9)
    pdf = add_and_parse(uploads, "r.pdf", pdf_bytes(["Report"], created="D:20200102030405Z"), mtime)
    assert (pdf.published_at, pdf.published_source) == (when(2020, 1, 2, 3, 4, 5), "pdf")
    memo = add_and_parse(uploads, "m.docx", docx_bytes(created=when(2021, 2, 3)), mtime)
    assert (memo.published_at, memo.published_source) == (when(2021, 2, 3), "docx")
    meta = '<meta property="article:published_time" content="2022-03-04T05:06:07Z">'
    page = add_and_parse(uploads, "p.html", html(meta), mtime)
    assert (page.published_at, page.published_source) == (when(2022, 3, 4, 5, 6, 7), "html")
    notes = add_and_parse(uploads, "n.md", b"# Notes\n\nNo date inside.\n", mtime)
    assert (notes.published_at, notes.published_source) == (mtime, "file")
    undated = add_and_parse(uploads, "u.md", b"# Undated\n\nNothing at all.\n")
    assert (undated.published_at, undated.published_source) == (None, "")
    # The file time is shown by the API with where it came from.
    assert notes.pk in {d.pk for d in Document.objects.filter(published_source="file")}


def test_new_content_takes_its_new_dates_and_loses_the_old_ones(uploads):
    meta = '<meta name="date" content="2019-05-05">'
    first = add_and_parse(uploads, "p.html", html(meta), when(2024, 1, 1))
    assert first.published_source == "html"
    again = add_and_parse(
        uploads, "p.html", html(body="<p>Rewritten, undated.</p>"), when(2025, 1, 1)
    )
    assert (again.published_at, again.published_source) == (when(2025, 1, 1), "file")
    bare = add_and_parse(uploads, "p.html", html(body="<p>No time either.</p>"))
    assert (bare.published_at, bare.published_source) == (None, "")


def test_a_duplicate_takes_the_date_its_content_states_but_keeps_its_own_file_time(alice):
    meta = '<meta name="date" content="2018-08-18">'
    first = do_create_source(workspace=alice.workspace, kind="upload", name="one")
    second = do_create_source(workspace=alice.workspace, kind="upload", name="two")
    original = add_and_parse(first, "a.html", html(meta), when(2024, 1, 1))
    copy = add_and_parse(second, "b.html", html(meta), when(2024, 2, 2))
    assert copy.duplicate_of_id == original.pk
    assert (copy.published_at, copy.published_source) == (when(2018, 8, 18), "html")
    text = b"# Same words\n\nNo date in them.\n"
    add_and_parse(first, "c.md", text, when(2023, 3, 3))
    twin = add_and_parse(second, "d.md", text, when(2023, 4, 4))
    assert twin.duplicate_of_id is not None
    assert (twin.published_at, twin.published_source) == (when(2023, 4, 4), "file")


# --- carriers: the crawl's Last-Modified, uploads, the ingest command ------------------------


@pytest.fixture
def crawl_settings(settings):
    settings.CRAWL_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.CRAWL_TIMEOUT_SECONDS = 2.0
    return settings


def crawl_one(workspace, url: str) -> Document:
    config = validate_crawl_settings(url=url, mode="single")
    source = do_create_crawl_source(workspace=workspace, crawl=config)
    do_start_crawl(source=source, enqueue=False)
    do_run_crawl(source_id=source.pk, process=parse_only)
    return Document.objects.get(source=source)


def parse_only(document_ids: list[int]) -> None:
    """The crawl's fetched pages parsed in this process (their dates are set by then)."""
    for document in Document.objects.filter(pk__in=document_ids):
        stages.parse(document=document)


def test_a_crawled_page_is_dated_by_last_modified_unless_its_metadata_says(alice, crawl_settings):
    with CrawlSite(crawl_delay=None) as site:
        site.pages["/plain"] = Page(body=html(), last_modified="Tue, 05 Mar 2024 10:00:00 GMT")
        meta = '<meta property="article:modified_time" content="2023-11-12T13:14:15Z">'
        site.pages["/dated"] = Page(body=html(meta), last_modified="Tue, 05 Mar 2024 10:00:00 GMT")
        site.pages["/future"] = Page(
            body=html(body="<p>From the future.</p>"),
            last_modified="Fri, 01 Jan 2100 00:00:00 GMT",
        )
        plain = crawl_one(alice.workspace, site.url("/plain"))
        dated = crawl_one(alice.workspace, site.url("/dated"))
        future = crawl_one(alice.workspace, site.url("/future"))
    assert (plain.published_at, plain.published_source) == (when(2024, 3, 5, 10), "http")
    assert (dated.published_at, dated.published_source) == (when(2023, 11, 12, 13, 14, 15), "html")
    assert (future.published_at, future.published_source) == (None, "")
    assert plain.status == "parsed"


def upload(member, *files: tuple[str, bytes], **fields):
    data = {"files": [SimpleUploadedFile(name, content) for name, content in files], **fields}
    return member.client().post("/api/v1/workspaces/acme/sources", data)


def test_the_upload_api_takes_each_files_modification_time(alice):
    march = when(2024, 3, 5, 10)
    response = upload(
        alice,
        ("a.md", b"# A\n\nFirst file.\n"),
        ("b.md", b"# B\n\nSecond file.\n"),
        ("c.md", b"# C\n\nThird file.\n"),
        last_modified=[str(int(march.timestamp() * 1000)), "2023-01-02T03:04:05Z", ""],
    )
    assert response.status_code == 201, response.content
    ids = response.json()["documents"]
    got = {
        d.path: (d.published_at, d.published_source) for d in Document.objects.filter(pk__in=ids)
    }
    assert got == {
        "a.md": (march, "file"),
        "b.md": (when(2023, 1, 2, 3, 4, 5), "file"),
        "c.md": (None, ""),
    }
    shown = alice.client().get(f"/api/v1/workspaces/acme/documents/{ids[0]}").json()
    assert (shown["published_at"], shown["published_source"]) == ("2024-03-05T10:00:00Z", "file")
    wrong_count = upload(alice, ("d.md", b"# D\n\nx\n"), last_modified=["1", "2"])
    assert wrong_count.status_code == 422
    assert "one value per file" in wrong_count.json()["error"]["message"]
    malformed = upload(alice, ("e.md", b"# E\n\nx\n"), last_modified="last tuesday")
    assert malformed.status_code == 422
    assert "milliseconds since 1970" in malformed.json()["error"]["message"]
    assert Source.objects.filter(workspace=alice.workspace).count() == 1  # refused: nothing kept


def test_modified_times_are_validated_one_per_file():
    names = ["a", "b"]
    assert validate_modified_times(names=names, values=[]) == {}
    assert validate_modified_times(names=names, values=[","]) == {}
    # A browser's File.lastModified of 0 (unknown) and a time two days ahead date nothing.
    ahead = dt.datetime.now(UTC) + dt.timedelta(days=2)
    assert validate_modified_times(names=names, values=["0", ahead.isoformat()]) == {}
    assert validate_modified_times(names=names, values=["1709632800000,"]) == {
        "a": when(2024, 3, 5, 10)
    }
    with pytest.raises(InvalidInput):
        validate_modified_times(names=names, values=["1"])
    for malformed in ("²", "12 March", "1e12"):
        with pytest.raises(InvalidInput):
            validate_modified_times(names=["a"], values=[malformed])


def test_the_ingest_command_dates_files_by_their_mtime(alice, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nThe crane was repaired.\n")
    os.utime(notes, (when(2022, 2, 22, 22).timestamp(), when(2022, 2, 22, 22).timestamp()))
    zero = tmp_path / "zero.md"
    zero.write_text("# Zero\n\nA file from a zip that lost its time.\n")
    os.utime(zero, (0, 0))
    out = StringIO()
    call_command(
        "ingest", str(notes), str(zero), "--workspace", "acme", stdout=out, stderr=StringIO()
    )
    source = Source.objects.get(pk=json.loads(out.getvalue())["source"])
    got = {d.path: (d.published_at, d.published_source) for d in source.documents.all()}
    assert got == {"notes.md": (when(2022, 2, 22, 22), "file"), "zero.md": (None, "")}
