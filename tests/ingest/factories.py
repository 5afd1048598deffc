"""Real files for parser tests, built with the same libraries people's tools use.

Hand-written byte strings would only test that the parsers read what we think a PDF looks
like; these are produced by pypdf, python-docx and zipfile, so they are what real software
writes. `python -m tests.ingest.factories` rewrites the committed fixtures from them.
"""

from __future__ import annotations

import datetime as dt
import io
import struct
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import docx
from docx.enum.style import WD_STYLE_TYPE
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "parsers"


def _pdf_string(line: str) -> str:
    return "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def pdf_bytes(
    pages: Sequence[str],
    *,
    title: str | None = None,
    author: str | None = None,
    created: str | None = "D:20240102030405+00'00'",
    password: str | None = None,
    modified: str | None = None,
) -> bytes:
    """A PDF with one page per string, each line drawn in Helvetica (real, extractable text)."""
    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
                NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
            }
        )
    )
    resources = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    for text in pages:
        page = writer.add_blank_page(width=612, height=792)
        page[NameObject("/Resources")] = resources
        operators = ["BT", "/F1 12 Tf", "16 TL", "72 720 Td"]
        if text:
            operators += [f"{_pdf_string(line)} Tj T*" for line in text.split("\n")]
        operators.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(operators).encode("cp1252"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    info = {"/Producer": "Graphloom tests"}
    if title:
        info["/Title"] = title
    if author:
        info["/Author"] = author
    if created:
        info["/CreationDate"] = created
    if modified:
        info["/ModDate"] = modified
    writer.add_metadata(info)
    if password:
        writer.encrypt(password)  # RC4-128: readable by pypdf without extra crypto libraries
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(
    *,
    title: str | None = "Harbour memo",
    author: str | None = "Ines Keeper",
    created: dt.datetime | None = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.UTC),
    modified: dt.datetime | None = None,
) -> bytes:
    """A memo with a Title, headings, bullet and numbered lists, a numbered-by-XML paragraph,
    a table (with a `|` in a cell) between paragraphs, and core properties."""
    document = docx.Document()
    document.add_heading("Harbour memo", level=0)
    document.add_heading("Summary", level=1)
    document.add_paragraph("The harbour reopens on Monday after the storm repairs.")
    document.add_paragraph("Check the moorings", style="List Bullet")
    document.add_paragraph("Inspect the cranes", style="List Bullet")
    document.add_paragraph("Nested detail", style="List Bullet 2")
    document.add_paragraph("Call the pilots", style="List Number")
    # Numbered by numbering properties on the paragraph itself, as Word does for ad-hoc lists.
    numbered = document.add_paragraph("Escalate to the port authority")
    num_pr = numbered._p.get_or_add_pPr().get_or_add_numPr()
    num_pr.get_or_add_ilvl().val = 0
    num_pr.get_or_add_numId().val = 1
    document.add_heading("Schedule", level=2)
    table = document.add_table(rows=3, cols=3)
    for row, values in zip(
        table.rows,
        [
            ("Day", "Task", "Crew"),
            ("Monday", "Moorings | buoys", "Alpha"),
            ("Tuesday", "Cranes", ""),
        ],
        strict=True,
    ):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_paragraph("Questions go to the harbour master.")
    document.add_heading("Deep heading", level=6)
    styles = document.styles
    if "Plain Quote" not in [s.name for s in styles]:
        styles.add_style("Plain Quote", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("A closing remark.", style="Plain Quote")
    core = document.core_properties
    core.title = title or ""
    core.author = author or ""
    if created is not None:
        core.created = created
    # As Word saves it: modified when it was last saved (not python-docx's template's 2013).
    if modified or created:
        core.modified = modified or created
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


DOCX_MEMO_TEXT = """\
# Harbour memo

# Summary

The harbour reopens on Monday after the storm repairs.

- Check the moorings
- Inspect the cranes
  - Nested detail
- Call the pilots
- Escalate to the port authority

## Schedule

| Day | Task | Crew |
| --- | --- | --- |
| Monday | Moorings \\| buoys | Alpha |
| Tuesday | Cranes |  |

Questions go to the harbour master.

###### Deep heading

A closing remark."""


def zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def docx_zip_bomb(*, unpacked_mb: int = 300) -> bytes:
    """A DOCX-shaped ZIP whose document.xml inflates to `unpacked_mb` MB of one repeated byte.

    Written in 1 MB chunks so the test never holds the inflated size in memory; the result is
    a few hundred KB.
    """
    out = io.BytesIO()
    chunk = b"<w:t>" + b"A" * (1024 * 1024 - 11) + b"</w:t>\n"
    # Level 1 is the fastest and still compresses a repeated byte far beyond 100:1.
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", b'<?xml version="1.0"?><Types/>')
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            for _ in range(unpacked_mb):
                member.write(chunk)
    return out.getvalue()


def png_bytes() -> bytes:
    """A real 1x1 PNG."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def elf_bytes() -> bytes:
    """The first bytes of a 64-bit Linux executable (header then zero padding)."""
    ident = b"\x7fELF\x02\x01\x01" + b"\x00" * 9
    header = struct.pack("<HHIQQQIHHHHHH", 2, 0x3E, 1, 0x401000, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    return ident + header + b"\x00" * 512


ARTICLE_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Balcony tomatoes | Green Corner</title>
  <meta name="author" content="Ada Gardener">
  <meta property="article:published_time" content="2024-03-05">
  <style>body { color: #333 } .STYLE-RULE-TEXT { display: none }</style>
  <script>var analytics = "SCRIPT-IN-HEAD";</script>
  <script type="application/json">{"SCRIPT-JSON": true}</script>
</head>
<body onload="track('ONLOAD-HANDLER')">
  <nav><a href="/">Home</a> <a href="/about">About us</a></nav>
  <article>
    <h1>Growing tomatoes on a balcony</h1>
    <p>Tomatoes need at least six hours of direct sunlight every day, so pick the sunniest
       corner of the balcony and turn the pots every week.</p>
    <h2>Choosing a pot</h2>
    <p onclick="steal('CLICK-HANDLER')">A pot of twenty litres or more keeps the roots cool and
       the soil moist between waterings, even in July.</p>
    <ul><li>Use a deep pot</li><li>Water in the morning</li></ul>
    <table>
      <tr><th>Variety</th><th>Days to harvest</th></tr>
      <tr><td>Cherry</td><td>60</td></tr>
      <tr><td>Beefsteak</td><td>85</td></tr>
    </table>
    <script>document.write("SCRIPT-IN-BODY")</script>
    <noscript>NOSCRIPT-TEXT</noscript>
    <style>.STYLE-IN-BODY { color: red }</style>
    <template><p>TEMPLATE-TEXT</p></template>
    <p>Feed the plants every two weeks once the first flowers appear, and pinch out the side
       shoots so the plant puts its energy into fruit.</p>
  </article>
  <footer>Copyright 2024 Green Corner</footer>
</body>
</html>
"""

NOTES_MARKDOWN = """\
Some front matter line before the title.

# Field notes: river survey

The water level rose by *twelve* centimetres overnight.

## Observations

- Heron at the weir
- Otter tracks on the east bank

| Site | Depth |
|------|-------|
| Weir | 1.2 m |
"""

RECORDS_JSON = """\
{
  "title": "Station inventory",
  "station": {"name": "North Pier", "open": true, "staff": null},
  "items": [
    {"sku": "LAMP-1", "qty": 4, "tags": ["light", "spare"]},
    {"sku": "ROPE-9", "qty": 12.5, "tags": []}
  ],
  "notes": {}
}
"""

EVENTS_JSONL = """\
{"event": "arrival", "ship": "Aurora", "berth": 3}
{"event": "departure", "ship": "Boreas", "crew": ["Ana", "Ben"]}

{"event": "inspection", "ship": "Aurora", "passed": false}
"""


def write_fixtures(directory: Path = FIXTURES) -> None:
    """(Re)write the committed fixture files."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "report.pdf").write_bytes(
        pdf_bytes(
            [
                "Lighthouse maintenance log\nThe lamp was cleaned on Monday.",
                "The fog horn was tested (120 dB).\nIt is loud.",
                "Supplies ordered: oil, wicks, glass.",
            ],
            title="Lighthouse log",
            author="Ines Keeper",
        )
    )
    (directory / "memo.docx").write_bytes(docx_bytes())
    (directory / "article.html").write_text(ARTICLE_HTML, encoding="utf-8")
    (directory / "notes.md").write_text(NOTES_MARKDOWN, encoding="utf-8")
    (directory / "records.json").write_text(RECORDS_JSON, encoding="utf-8")
    (directory / "events.jsonl").write_text(EVENTS_JSONL, encoding="utf-8")


if __name__ == "__main__":
    write_fixtures()
