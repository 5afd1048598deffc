"""The document parsers: real files in, text, page spans, metadata and clear errors out."""

from __future__ import annotations

import dataclasses
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ingest.parsers import (
    ParsedDocument,
    ParseError,
    ParserLimits,
    UnsupportedFormat,
    detect_format,
    parse,
    parse_isolated,
    shutdown,
)
from tests.ingest.factories import (
    ARTICLE_HTML,
    DOCX_MEMO_TEXT,
    FIXTURES,
    docx_bytes,
    docx_zip_bomb,
    elf_bytes,
    pdf_bytes,
    png_bytes,
    zip_bytes,
)

LIMITS = ParserLimits()
MB = 1024 * 1024


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def parse_error(data: bytes, filename: str, limits: ParserLimits = LIMITS) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse(data, filename=filename, limits=limits)
    return caught.value


def assert_page_spans(doc: ParsedDocument, page_texts: list[str]) -> None:
    assert [p.number for p in doc.pages] == list(range(1, len(page_texts) + 1))
    for page, expected in zip(doc.pages, page_texts, strict=True):
        assert doc.text[page.start : page.end] == expected


@pytest.fixture(scope="module")
def isolated():
    """parse_isolated, with the shared child stopped when this module's tests are done."""
    yield parse_isolated
    shutdown()


@pytest.fixture(scope="module")
def pdf_2000_pages() -> bytes:
    return pdf_bytes([f"Page {n} of the ledger\nentry {n * 7}" for n in range(1, 2001)])


# --- detection ---------------------------------------------------------------------------


def test_a_pdf_named_docx_is_detected_and_read_as_pdf():
    data = pdf_bytes(["Quarterly figures"])
    assert detect_format(data, filename="figures.docx") == "pdf"
    doc = parse(data, filename="figures.docx", limits=LIMITS)
    assert (doc.format, doc.mime, doc.text) == ("pdf", "application/pdf", "Quarterly figures")


def test_a_docx_named_pdf_is_detected_and_read_as_docx():
    assert detect_format(docx_bytes(), filename="memo.pdf") == "docx"
    assert parse(docx_bytes(), filename="memo.pdf", limits=LIMITS).text == DOCX_MEMO_TEXT


def test_html_named_txt_is_treated_as_html():
    data = ARTICLE_HTML.encode()
    assert detect_format(data, filename="saved-page.txt") == "html"
    doc = parse(data, filename="saved-page.txt", limits=LIMITS)
    assert doc.format == "html"
    assert "<p" not in doc.text and "Growing tomatoes on a balcony" in doc.text


def test_json_and_jsonl_named_txt_are_detected_by_content():
    assert detect_format(b'{"city": "Oslo"}', filename="data.txt") == "json"
    assert detect_format(b'[\n  {"a": 1}\n]\n', filename="data.txt") == "json"
    assert detect_format(b'{"a": 1}\n{"a": 2}\n', filename="data.txt") == "jsonl"
    doc = parse(b'{"city": "Oslo", "tags": ["cold"]}', filename="data.txt", limits=LIMITS)
    assert (doc.format, doc.text) == ("json", "city: Oslo\ntags[0]: cold")


def test_extensions_only_break_ties_between_text_formats():
    assert detect_format(b"# Notes\n\nplain words", filename="notes.md") == "markdown"
    assert detect_format(b"# Notes\n\nplain words", filename="notes.txt") == "text"
    assert detect_format(b"<div>inline html</div>\n# Title", filename="notes.md") == "markdown"
    assert detect_format(b"<p>fragment</p>", filename="page.html") == "html"
    assert detect_format(b"no tags at all", filename="page.html") == "text"
    assert detect_format(b"[intro] not json", filename="notes.txt") == "text"
    assert detect_format(b'{"a": 1}\n{"a": 2}\n', filename="data.json") == "jsonl"
    assert detect_format(b'{"a": [1,\n 2]}\n', filename="data.jsonl") == "json"


def test_pdf_header_after_a_bom_and_blank_lines_is_still_a_pdf():
    assert detect_format(b"\xef\xbb\xbf\r\n  " + pdf_bytes(["x"]), filename="x.bin") == "pdf"
    assert detect_format(b"see %PDF-1.7 in this sentence", filename="x.pdf") == "text"


@pytest.mark.parametrize(
    ("members", "named"),
    [
        ({"[Content_Types].xml": b"<Types/>", "xl/workbook.xml": b"<workbook/>"}, "Excel"),
        (
            {"mimetype": b"application/vnd.oasis.opendocument.text", "content.xml": b"<x/>"},
            "OpenDocument text",
        ),
        ({"readme.txt": b"hello"}, "a ZIP archive"),
    ],
)
def test_zips_that_are_not_docx_are_refused_naming_what_they_are(members, named):
    with pytest.raises(UnsupportedFormat) as caught:
        detect_format(zip_bytes(members), filename="report.docx")
    assert named in caught.value.message
    assert "not a Word document" in caught.value.message


@pytest.mark.parametrize(
    ("data", "kind"),
    [(png_bytes(), "looks like a PNG image"), (elf_bytes(), "looks like an ELF executable")],
)
def test_binary_named_txt_is_refused_as_not_text(data, kind):
    error = parse_error(data, "notes.txt")
    assert isinstance(error, UnsupportedFormat)
    assert kind in error.message and "not text" in error.message
    assert "“notes.txt”" in error.message


def test_random_binary_without_a_known_signature_is_refused():
    data = bytes(range(256)) * 40
    error = parse_error(data, "blob.txt")
    assert isinstance(error, UnsupportedFormat)
    assert "looks like binary data, not text" in error.message


@pytest.mark.parametrize("data", [b"", b"   \n\t\r\n ", b"\xef\xbb\xbf\n"])
def test_empty_file_is_refused(data):
    assert parse_error(data, "empty.txt").message == "The file is empty."


def test_file_over_the_size_limit_is_refused_naming_the_limit():
    limits = ParserLimits(max_file_bytes=1000)
    error = parse_error(b"a" * 1001, "big.txt", limits)
    assert "1,001 bytes" in error.message and "limit is 1,000 bytes" in error.message


def test_legacy_word_files_are_refused_with_advice():
    ole2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600
    error = parse_error(ole2, "old.doc")
    assert isinstance(error, UnsupportedFormat)
    assert "legacy Microsoft Office" in error.message and ".docx" in error.message


# --- PDF -----------------------------------------------------------------------------------


def test_pdf_text_page_spans_and_metadata():
    pages = ["Alpha page one\nsecond line (with parentheses)", "", "Gamma café, page three"]
    data = pdf_bytes(pages, title="Survey results", author="Ada Lovelace")
    doc = parse(data, filename="survey.pdf", limits=LIMITS)
    assert doc.text == ("Alpha page one\nsecond line (with parentheses)\n\nGamma café, page three")
    assert_page_spans(doc, pages)
    assert doc.pages[1].start == doc.pages[1].end  # the empty page keeps its place
    assert doc.title == "Survey results"
    assert doc.metadata == {
        "page_count": 3,
        "title": "Survey results",
        "author": "Ada Lovelace",
        "created": "2024-01-02T03:04:05+00:00",
    }
    assert doc.warnings == ()


def test_pdf_fixture():
    doc = parse(fixture("report.pdf"), filename="report.pdf", limits=LIMITS)
    pages = [
        "Lighthouse maintenance log\nThe lamp was cleaned on Monday.",
        "The fog horn was tested (120 dB).\nIt is loud.",
        "Supplies ordered: oil, wicks, glass.",
    ]
    assert doc.text == "\n\n".join(pages)
    assert_page_spans(doc, pages)
    assert doc.title == "Lighthouse log"
    assert doc.metadata["author"] == "Ines Keeper"
    assert doc.metadata["page_count"] == 3


def test_a_pdf_reports_each_page_as_it_is_read():
    reports: list[tuple[int, int]] = []
    doc = parse(
        pdf_bytes(["One", "Two", "Three"]),
        filename="three.pdf",
        limits=LIMITS,
        on_page=lambda read, count: reports.append((read, count)),
    )
    assert reports == [(1, 3), (2, 3), (3, 3)]
    assert doc == parse(pdf_bytes(["One", "Two", "Three"]), filename="three.pdf", limits=LIMITS)


def test_formats_without_pages_report_no_pages():
    reports: list[tuple[int, int]] = []
    for name in ("memo.docx", "article.html", "notes.md"):
        parse(fixture(name), filename=name, limits=LIMITS, on_page=lambda *a: reports.append(a))
    assert reports == []


def test_pdf_title_falls_back_to_the_first_line():
    data = pdf_bytes(["  \nAnnual report 2024\nRevenue grew."], title=None, created=None)
    doc = parse(data, filename="ar.pdf", limits=LIMITS)
    assert doc.title == "Annual report 2024"
    assert doc.metadata == {"page_count": 1}


def test_encrypted_pdf_is_refused_with_a_clear_message():
    data = pdf_bytes(["Top secret plans"], password="secret")
    error = parse_error(data, "plans.pdf")
    assert error.message.startswith("The PDF is encrypted (password-protected);")
    assert "Top secret" not in error.message


def test_truncated_pdf_is_refused_as_damaged():
    data = fixture("report.pdf")
    error = parse_error(data[: len(data) // 2], "report.pdf")
    assert error.message.startswith("The PDF is damaged or truncated: ")
    assert "Traceback" not in error.message


def test_pdf_without_text_is_refused_as_probably_scanned():
    error = parse_error(pdf_bytes(["", ""]), "scan.pdf")
    assert error.message.startswith("The PDF has no extractable text (scanned?).")
    assert "OCR" in error.message


def test_pdf_truncated_to_max_chars_keeps_consistent_page_spans():
    pages = ["one two three four", "five six seven eight", "nine ten"]
    limits = ParserLimits(max_chars=30)
    doc = parse(pdf_bytes(pages), filename="p.pdf", limits=limits)
    assert doc.text == "one two three four\n\nfive six"
    assert doc.metadata["truncated"] is True
    assert doc.metadata["page_count"] == 3
    assert [(p.number, doc.text[p.start : p.end]) for p in doc.pages] == [
        (1, "one two three four"),
        (2, "five six"),
    ]


def test_pdf_pages_past_the_text_limit_are_not_read():
    pages = [f"page {n} " + "word " * 20 for n in range(1, 201)]
    doc = parse(pdf_bytes(pages), filename="long.pdf", limits=ParserLimits(max_chars=500))
    assert doc.metadata["page_count"] == 200
    assert doc.metadata["truncated"] is True
    assert len(doc.pages) < 10
    assert any("Stopped reading after page" in w for w in doc.warnings)


# --- DOCX ----------------------------------------------------------------------------------


def test_docx_headings_lists_and_tables_in_document_order():
    doc = parse(docx_bytes(), filename="memo.docx", limits=LIMITS)
    assert doc.text == DOCX_MEMO_TEXT
    assert doc.format == "docx"
    assert doc.title == "Harbour memo"
    assert doc.metadata == {
        "author": "Ines Keeper",
        "title": "Harbour memo",
        "created": "2024-05-06T07:08:09+00:00",
        "modified": "2024-05-06T07:08:09+00:00",
    }


def test_docx_title_falls_back_to_the_first_heading():
    doc = parse(docx_bytes(title=None, author=None), filename="memo.docx", limits=LIMITS)
    assert doc.title == "Harbour memo"
    assert "title" not in doc.metadata and "author" not in doc.metadata


def test_docx_fixture():
    doc = parse(fixture("memo.docx"), filename="memo.docx", limits=LIMITS)
    assert doc.text == DOCX_MEMO_TEXT
    assert "| Monday | Moorings \\| buoys | Alpha |" in doc.text.split("\n")
    assert doc.metadata["author"] == "Ines Keeper"


def test_docx_zip_bomb_is_refused_before_unpacking():
    bomb = docx_zip_bomb(unpacked_mb=300)
    assert len(bomb) < 5 * MB
    error = parse_error(bomb, "memo.docx")
    assert "refusing to unpack (zip bomb?)" in error.message
    assert "word/document.xml" in error.message and "300 MB" in error.message


def test_docx_over_the_uncompressed_limit_is_refused():
    limits = ParserLimits(max_docx_uncompressed_bytes=20_000)
    error = parse_error(docx_bytes(), "memo.docx", limits)
    assert "refusing to unpack (zip bomb?)" in error.message
    assert "20,000 bytes limit" in error.message


def test_corrupt_docx_is_refused_as_damaged():
    data = docx_bytes()
    error = parse_error(data[: len(data) // 2], "memo.docx")
    assert error.message.startswith("The DOCX file is damaged or truncated")


def test_zip_with_a_broken_document_xml_is_refused_as_damaged():
    data = zip_bytes({"[Content_Types].xml": b"<Types", "word/document.xml": b"<w:document"})
    error = parse_error(data, "memo.docx")
    assert error.message.startswith("The DOCX file is damaged")


# --- HTML ----------------------------------------------------------------------------------


def test_html_main_content_metadata_and_no_scripts_styles_or_handlers():
    doc = parse(ARTICLE_HTML.encode(), filename="tomatoes.html", limits=LIMITS)
    assert doc.text.startswith("# Growing tomatoes on a balcony\n\nTomatoes need at least six")
    assert "\n## Choosing a pot\n" in doc.text
    assert "- Use a deep pot\n- Water in the morning" in doc.text
    assert "| Cherry | 60 |" in doc.text
    assert doc.text.endswith("puts its energy into fruit.")
    for leaked in (
        "SCRIPT-IN-HEAD", "SCRIPT-JSON", "SCRIPT-IN-BODY", "ONLOAD-HANDLER", "CLICK-HANDLER",
        "NOSCRIPT-TEXT", "STYLE-RULE-TEXT", "STYLE-IN-BODY", "TEMPLATE-TEXT", "analytics",
        "track(", "steal(", "color:",
    ):  # fmt: skip
        assert leaked not in doc.text
    assert doc.title == "Growing tomatoes on a balcony"
    assert doc.metadata["author"] == "Ada Gardener"
    assert doc.metadata["date"] == "2024-03-05"
    assert doc.metadata["language"] == "en"
    assert doc.mime == "text/html"


def test_html_fixture():
    doc = parse(fixture("article.html"), filename="article.html", limits=LIMITS)
    assert doc == parse(ARTICLE_HTML.encode(), filename="article.html", limits=LIMITS)
    assert "SCRIPT" not in doc.text


def test_html_without_main_content_falls_back_to_visible_body_text():
    page = b"""<html><head><title>Harbour office</title><script>var x = "SCRIPT-X";</script>
    <style>.STYLE-Y{}</style></head>
    <body><aside>Opening hours: Mon-Fri 9-17</aside>
    <footer onclick="go('HANDLER-Z')">Contact: Pier 4, <b>harbour office</b><noscript>NS</noscript>
    <script>track("SCRIPT-W")</script></footer></body></html>"""
    doc = parse(page, filename="contact.html", limits=LIMITS)
    # Under the page's title, as every page's text is (its chunks' heading path).
    assert doc.text == (
        "# Harbour office\n\nOpening hours: Mon-Fri 9-17\n\nContact: Pier 4, harbour office"
    )
    assert doc.title == "Harbour office"


def test_html_meta_charset_is_honoured():
    page = (
        '<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title></head>'
        "<body><article><p>Le caf\xe9 du port ouvre \xe0 sept heures, m\xeame le dimanche.</p>"
        "</article></body></html>"
    ).encode("latin-1")
    doc = parse(page, filename="cafe.html", limits=LIMITS)
    assert "Le café du port ouvre à sept heures, même le dimanche." in doc.text
    assert doc.metadata["encoding"] == "iso8859-1"


def test_html_with_no_readable_text_is_refused():
    page = b"<html><head><title>T</title><script>only()</script></head><body><script>x()</script><style>p{}</style></body></html>"
    assert parse_error(page, "empty.html").message == "The HTML page has no readable text."


# --- text and Markdown -----------------------------------------------------------------------


def test_markdown_fixture_title_is_the_first_heading():
    doc = parse(fixture("notes.md"), filename="notes.md", limits=LIMITS)
    assert doc.format == "markdown" and doc.mime == "text/markdown"
    assert doc.title == "Field notes: river survey"
    assert doc.text == (FIXTURES / "notes.md").read_text(encoding="utf-8").strip()
    assert doc.metadata == {"encoding": "utf-8"}


def test_text_title_is_the_first_non_empty_line_trimmed():
    long_line = "word " * 100
    doc = parse(f"\n\n  {long_line}\nsecond".encode(), filename="t.txt", limits=LIMITS)
    assert len(doc.title) <= 200 and doc.title.startswith("word word")
    assert not doc.title.endswith(" ")
    assert doc.format == "text"


def test_newlines_are_normalised_and_control_characters_removed():
    data = b"Line one\r\nLine two\rLine three\x07 end\x0cnext page\tkept tab\x1b[0m"
    doc = parse(data, filename="t.txt", limits=LIMITS)
    assert doc.text == "Line one\nLine two\nLine three end\nnext page\tkept tab[0m"


def test_nul_and_control_characters_inside_values_are_removed():
    data = json.dumps({"note": "nul\u0000here\u0007 bell\r\nnext"}).encode()
    doc = parse(data, filename="n.json", limits=LIMITS)
    assert doc.text == "note: nulhere bell\nnext"


def test_a_text_file_with_nul_bytes_is_treated_as_binary():
    error = parse_error(b"looks like text\x00but has a NUL", "t.txt")
    assert isinstance(error, UnsupportedFormat) and "binary data" in error.message


def test_utf8_bom_is_removed():
    doc = parse("\ufeffKöln\nzwei".encode(), filename="t.txt", limits=LIMITS)
    assert doc.text == "Köln\nzwei"
    assert doc.metadata["encoding"] == "utf-8"


def test_utf16_text_with_a_bom_is_decoded():
    doc = parse("Grüße aus UTF-16\nzweite Zeile".encode("utf-16"), filename="u.txt", limits=LIMITS)
    assert doc.text == "Grüße aus UTF-16\nzweite Zeile"
    assert doc.metadata["encoding"] == "utf-16"


def test_invalid_utf8_is_replaced_and_counted_in_a_warning():
    good = "Grüße aus Köln, naïve café. " * 20
    data = good.encode() + b"broken \xff\xfe bytes " + good.encode()
    doc = parse(data, filename="t.txt", limits=LIMITS)
    assert doc.text == (good + "broken \ufffd\ufffd bytes " + good).strip()
    assert doc.metadata["encoding"] == "utf-8"
    assert doc.warnings == (
        "2 invalid byte sequences were replaced with \ufffd while decoding as utf-8.",
    )


def test_legacy_single_byte_encoding_is_detected():
    original = "Grüße aus Köln! Die Straße ist schön, die Bäume blühen und die Vögel singen."
    doc = parse(original.encode("cp1252"), filename="t.txt", limits=LIMITS)
    assert doc.text == original
    assert doc.metadata["encoding"] != "utf-8"
    assert doc.warnings == ()


def test_ten_megabyte_single_line_text_parses_with_its_length_preserved():
    unit = b"lorem ipsum dolor "
    data = (unit * (10 * MB // len(unit) + 1))[: 10 * MB - 1] + b"z"
    limits = ParserLimits(max_chars=20_000_000)
    doc = parse(data, filename="one-line.txt", limits=limits)
    assert len(doc.text) == 10 * MB
    assert doc.text == data.decode()
    assert "\n" not in doc.text
    assert doc.title.startswith("lorem ipsum dolor") and len(doc.title) <= 200


def test_text_longer_than_max_chars_is_cut_at_whitespace_with_a_warning():
    data = (b"lorem ipsum dolor " * (10 * MB // 18))[: 10 * MB - 1] + b"z"
    doc = parse(data, filename="one-line.txt", limits=LIMITS)
    assert len(doc.text) <= LIMITS.max_chars
    assert len(doc.text) > LIMITS.max_chars - 20
    assert doc.text.endswith(("lorem", "ipsum", "dolor"))
    assert doc.metadata["truncated"] is True
    assert doc.warnings == (
        f"The text was cut to its first {len(doc.text):,} of {len(data):,} characters "
        f"(the limit is {LIMITS.max_chars:,}); the rest was not kept.",
    )


def test_text_without_whitespace_is_cut_at_exactly_max_chars():
    doc = parse(b"x" * 5000, filename="x.txt", limits=ParserLimits(max_chars=1000))
    assert doc.text == "x" * 1000 and doc.metadata["truncated"] is True


# --- JSON and JSONL ------------------------------------------------------------------------


def test_json_is_flattened_into_searchable_paths():
    doc = parse(fixture("records.json"), filename="records.json", limits=LIMITS)
    assert doc.text == (
        "title: Station inventory\n"
        "station.name: North Pier\n"
        "station.open: true\n"
        "station.staff: null\n"
        "items[0].sku: LAMP-1\n"
        "items[0].qty: 4\n"
        "items[0].tags[0]: light\n"
        "items[0].tags[1]: spare\n"
        "items[1].sku: ROPE-9\n"
        "items[1].qty: 12.5\n"
        "items[1].tags: []\n"
        "notes: {}"
    )
    assert (doc.format, doc.mime, doc.title) == ("json", "application/json", "Station inventory")


def test_jsonl_fixture_gives_one_block_per_record():
    doc = parse(fixture("events.jsonl"), filename="events.jsonl", limits=LIMITS)
    assert doc.text == (
        "event: arrival\nship: Aurora\nberth: 3\n\n"
        "event: departure\nship: Boreas\ncrew[0]: Ana\ncrew[1]: Ben\n\n"
        "event: inspection\nship: Aurora\npassed: false"
    )
    assert doc.metadata["records"] == 3
    assert doc.title == "events"


def test_jsonl_invalid_lines_are_skipped_with_a_warning():
    data = b'{"n": 1}\n{"n": 2\n["x"]\nnot json\n'
    doc = parse(data, filename="d.jsonl", limits=LIMITS)
    assert doc.text == "n: 1\n\n[0]: x"
    assert len(doc.warnings) == 1
    assert doc.warnings[0].startswith("2 of 4 lines are not valid JSON and were skipped")
    assert "line 2" in doc.warnings[0]


def test_jsonl_with_no_valid_line_is_refused():
    error = parse_error(b"nope\nstill nope\n", "d.jsonl")
    assert "no valid line" in error.message and "2 lines" in error.message


def test_invalid_json_reports_the_position():
    error = parse_error(b'{\n  "a": 1,\n  "b": }\n', "bad.json")
    assert error.message.startswith("The JSON is invalid: Expecting value at line 3, column 8")


def test_deep_json_is_bounded_without_recursion_trouble():
    deep: object = "x"
    for _ in range(100):
        deep = {"k": deep}
    doc = parse(json.dumps(deep).encode(), filename="deep.json", limits=LIMITS)
    assert doc.text.startswith("k." * 63 + "k: {")
    assert "Values nested deeper than 64 levels" in doc.warnings[0]

    error = parse_error(b"[" * 200_000 + b"]" * 200_000, "abyss.json")
    assert "nested too deeply" in error.message


# --- isolation -------------------------------------------------------------------------------


@pytest.mark.slow
def test_parse_isolated_gives_the_same_result_as_parse(isolated):
    for name in ("report.pdf", "memo.docx", "article.html", "notes.md", "records.json"):
        data = fixture(name)
        assert isolated(data, filename=name, limits=LIMITS) == parse(
            data, filename=name, limits=LIMITS
        )


@pytest.mark.slow
def test_parse_errors_keep_their_class_and_message_across_the_process_boundary(isolated):
    for data, name in [(png_bytes(), "x.txt"), (pdf_bytes(["s"], password="pw"), "s.pdf")]:
        with pytest.raises(ParseError) as here:
            parse(data, filename=name, limits=LIMITS)
        with pytest.raises(ParseError) as there:
            isolated(data, filename=name, limits=LIMITS)
        assert type(there.value) is type(here.value)
        assert there.value.message == here.value.message
    assert type(there.value) is ParseError


@pytest.mark.slow
def test_a_2000_page_pdf_parses_in_isolation_with_its_memory_cap(isolated, pdf_2000_pages):
    doc = isolated(pdf_2000_pages, filename="ledger.pdf", limits=LIMITS)
    assert doc.metadata["page_count"] == 2000
    assert len(doc.pages) == 2000
    assert_page_spans(doc, [f"Page {n} of the ledger\nentry {n * 7}" for n in range(1, 2001)])


@pytest.mark.slow
def test_an_isolated_pdf_reports_its_pages_to_the_caller_while_it_is_read(isolated, pdf_2000_pages):
    reports: list[tuple[int, int]] = []
    doc = isolated(
        pdf_2000_pages,
        filename="ledger.pdf",
        limits=LIMITS,
        on_page=lambda read, count: reports.append((read, count)),
    )
    assert len(doc.pages) == 2000
    # The first page at once, then at most one report per interval, always moving forward.
    assert reports[0] == (1, 2000)
    assert all(count == 2000 for _read, count in reports)
    reads = [read for read, _count in reports]
    assert reads == sorted(set(reads)) and reads[-1] <= 2000
    # A file without pages sends none, and the next request is answered as before.
    notes = isolated(
        fixture("notes.md"),
        filename="notes.md",
        limits=LIMITS,
        on_page=lambda *a: reports.append(a),
    )
    assert notes.title == "Field notes: river survey" and len(reports) == len(reads)


@pytest.mark.slow
def test_a_parse_over_the_time_limit_is_stopped_and_the_next_call_works(isolated, pdf_2000_pages):
    hurried = dataclasses.replace(LIMITS, timeout_seconds=0.01)
    with pytest.raises(ParseError) as caught:
        isolated(pdf_2000_pages, filename="ledger.pdf", limits=hurried)
    assert caught.value.message.startswith("Parsing took longer than 0.01 s;")
    doc = isolated(fixture("notes.md"), filename="notes.md", limits=LIMITS)
    assert doc.title == "Field notes: river survey"


@pytest.mark.slow
def test_a_parse_over_the_memory_cap_fails_clearly_and_the_next_call_works(isolated):
    # Millions of values: the flattened lines alone need far more than the cap.
    data = b"[" + b"1," * 3_000_000 + b"1]"
    capped = dataclasses.replace(LIMITS, memory_mb=200)
    with pytest.raises(ParseError) as caught:
        isolated(data, filename="numbers.json", limits=capped)
    assert caught.value.message.startswith("The parser ran out of memory")
    doc = isolated(fixture("records.json"), filename="records.json", limits=LIMITS)
    assert doc.title == "Station inventory"


@pytest.mark.slow
def test_parse_isolated_serves_concurrent_callers_one_at_a_time(isolated):
    names = ["report.pdf", "memo.docx", "notes.md", "events.jsonl"] * 2
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda n: isolated(fixture(n), filename=n, limits=LIMITS), names))
    for name, doc in zip(names, results, strict=True):
        assert doc == parse(fixture(name), filename=name, limits=LIMITS)


def test_committed_fixtures_are_small():
    files = list(Path(FIXTURES).iterdir())
    assert {f.suffix for f in files} >= {".pdf", ".docx", ".html", ".md", ".json", ".jsonl"}
    assert all(f.stat().st_size < 50 * 1024 for f in files)
