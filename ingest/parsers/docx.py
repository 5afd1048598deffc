"""Word (.docx): the body as Markdown-flavoured text, in the order a reader sees it.

python-docx's `paragraphs` and `tables` lists lose the order between the two, so this walks the
body XML itself. A DOCX is a ZIP, and a ZIP can claim to unpack to gigabytes; the directory is
checked before python-docx inflates anything.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import docx
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from ingest.parsers.base import ParsedDocument, ParseError, ParserLimits
from ingest.parsers.text import clean_text, filename_stem, first_line, short_title

if TYPE_CHECKING:
    from docx.document import Document
    from docx.oxml.xmlchemy import BaseOxmlElement

MB = 1024 * 1024
# A member is suspicious only when both huge and implausibly compressible: real document.xml
# files compress 5-20x, a long run of one repeated byte compresses ~1000x.
BOMB_RATIO = 100
BOMB_MEMBER_BYTES = 10 * MB
# Content controls (w:sdt) can nest; real documents go a few levels deep, not hundreds.
_MAX_SDT_DEPTH = 32

_HEADING = re.compile(r"heading\s*([1-9])")
_LIST_STYLE = re.compile(r"list (?:bullet|number|continue)(?:\s*([2-9]))?")
_WHITESPACE_RUN = re.compile(r"\s+")

_P, _TBL, _SDT, _SDT_CONTENT = qn("w:p"), qn("w:tbl"), qn("w:sdt"), qn("w:sdtContent")


def parse_docx(data: bytes, *, filename: str, limits: ParserLimits) -> ParsedDocument:
    check_zip(data, limits=limits)
    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, EOFError):
        raise ParseError(
            "The DOCX file is damaged or truncated (its ZIP structure is broken)."
        ) from None
    except MemoryError:  # must reach the sandbox, which replaces the exhausted child
        raise
    except Exception as exc:
        raise ParseError(
            f"The DOCX file is damaged and cannot be opened: {_reason(exc)}."
        ) from None

    blocks: list[tuple[str, str]] = []  # (kind, markdown); kind decides the gap between blocks
    warnings: list[str] = []
    first_heading = ""
    for block in _iter_blocks(document.element.body, document, depth=0):
        if isinstance(block, Table):
            try:
                rendered = table_markdown(block)
            except MemoryError:
                raise
            except Exception as exc:
                warnings.append(f"A table could not be read and was skipped ({_reason(exc)}).")
                continue
            if rendered:
                blocks.append(("table", rendered))
            continue
        kind, line = _paragraph_markdown(block)
        if not line:
            continue
        if kind == "heading" and not first_heading:
            first_heading = line.lstrip("#").strip()
        blocks.append((kind, line))

    text = _join_blocks(blocks)
    if not text:
        raise ParseError("The Word document has no text.")
    metadata = _core_metadata(document)
    return ParsedDocument(
        text=text,
        title=(
            short_title(metadata.get("title"))
            or short_title(first_heading)
            or first_line(text)
            or filename_stem(filename)
        ),
        format="docx",
        mime="application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        metadata=metadata,
        warnings=tuple(warnings),
    )


def check_zip(data: bytes, *, limits: ParserLimits) -> None:
    """Refuse archives whose directory promises too much data, before anything is inflated."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise ParseError(
            "The DOCX file is damaged or truncated (it is not a readable ZIP archive)."
        ) from None
    total = 0
    for member in members:
        total += member.file_size
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > BOMB_MEMBER_BYTES and ratio > BOMB_RATIO:
            raise ParseError(
                f"The DOCX part {member.filename} would unpack from "
                f"{_size(member.compress_size)} to {_size(member.file_size)} "
                f"({ratio:,.0f}:1); refusing to unpack (zip bomb?)."
            )
    if total > limits.max_docx_uncompressed_bytes:
        raise ParseError(
            f"The DOCX would unpack to {_size(total)}, more than the "
            f"{_size(limits.max_docx_uncompressed_bytes)} limit; refusing to unpack (zip bomb?)."
        )
    if not any(member.filename == "word/document.xml" for member in members):
        raise ParseError(
            "The file is a ZIP archive but not a Word document (no word/document.xml)."
        )


def _iter_blocks(
    container: BaseOxmlElement, document: Document, *, depth: int
) -> Iterator[Paragraph | Table]:
    for child in container.iterchildren():
        if child.tag == _P:
            yield Paragraph(child, document)
        elif child.tag == _TBL:
            yield Table(child, document)
        elif child.tag == _SDT and depth < _MAX_SDT_DEPTH:
            # Content controls (forms, tables of contents, cover pages) wrap ordinary blocks.
            content = child.find(_SDT_CONTENT)
            if content is not None:
                yield from _iter_blocks(content, document, depth=depth + 1)


def _style_names(paragraph: Paragraph) -> list[str]:
    """The paragraph's style and the styles it is based on, lower-cased."""
    names: list[str] = []
    try:
        style: Any = paragraph.style
        while style is not None and len(names) < 8:
            names.append((style.name or "").lower())
            style = style.base_style
    except MemoryError:
        raise
    except Exception:  # noqa: S110 - an unknown style makes a plain paragraph, nothing worse
        pass
    return names


def _paragraph_markdown(paragraph: Paragraph) -> tuple[str, str]:
    text = clean_text(paragraph.text).strip()
    if not text:
        return "paragraph", ""
    names = _style_names(paragraph)
    for name in names:
        if name == "title":
            return "heading", f"# {_one_line(text)}"
        heading = _HEADING.fullmatch(name)
        if heading:
            hashes = "#" * min(int(heading.group(1)), 6)
            return "heading", f"{hashes} {_one_line(text)}"
    level = _list_level(paragraph, names)
    if level is not None:
        return "list", f"{'  ' * level}- {_indent_continuation(text, level)}"
    return "paragraph", text


def _list_level(paragraph: Paragraph, names: list[str]) -> int | None:
    """Nesting level (0 = top) when the paragraph is a list item, else None."""
    # python-docx types numPr's children loosely; the XML schema says ilvl/@val is an int.
    ppr: Any = paragraph._p.pPr
    num_pr = ppr.numPr if ppr is not None else None
    if num_pr is not None:
        ilvl = num_pr.ilvl
        level = ilvl.val if ilvl is not None and ilvl.val is not None else 0
        return max(0, min(int(level), 8))
    for name in names:
        listed = _LIST_STYLE.fullmatch(name)
        if listed:
            return int(listed.group(1)) - 1 if listed.group(1) else 0
    return None


def _one_line(text: str) -> str:
    return _WHITESPACE_RUN.sub(" ", text).strip()


def _indent_continuation(text: str, level: int) -> str:
    # A soft line break inside a list item stays inside the item.
    return text.replace("\n", "\n" + "  " * (level + 1))


def table_markdown(table: Table) -> str:
    """A Markdown table: first row as header, `|` in cells escaped, merged cells once."""
    rows: list[list[str]] = []
    for row in table.rows:
        cells: list[str] = []
        previous: object = None
        for cell in row.cells:
            # A horizontally merged cell comes back once per grid column it spans.
            cells.append("" if cell._tc is previous else _cell_text(cell.text))
            previous = cell._tc
        rows.append(cells)
    if not any(any(cells) for cells in rows):
        return ""
    width = max(len(cells) for cells in rows)
    lines = []
    for index, cells in enumerate(rows):
        padded = cells + [""] * (width - len(cells))
        lines.append("| " + " | ".join(padded) + " |")
        if index == 0:
            lines.append("|" + "|".join([" --- "] * width) + "|")
    return "\n".join(lines)


def _cell_text(text: str) -> str:
    return _one_line(clean_text(text)).replace("|", "\\|")


def _join_blocks(blocks: list[tuple[str, str]]) -> str:
    parts: list[str] = []
    previous_kind = ""
    for kind, rendered in blocks:
        if parts:
            parts.append("\n" if kind == "list" and previous_kind == "list" else "\n\n")
        parts.append(rendered)
        previous_kind = kind
    return "".join(parts)


def _core_metadata(document: Document) -> dict[str, Any]:
    found: dict[str, Any] = {}
    try:
        core = document.core_properties
        author, title, created, modified = core.author, core.title, core.created, core.modified
    except MemoryError:
        raise
    except Exception:
        return found  # broken docProps/core.xml: the body is what matters
    if short_title(author):
        found["author"] = short_title(author)
    if short_title(title):
        found["title"] = short_title(title)
    if created is not None:
        found["created"] = created.isoformat()
    if modified is not None:
        found["modified"] = modified.isoformat()
    return found


def _size(n: int) -> str:
    return f"{n / MB:,.0f} MB" if n >= MB else f"{n:,} bytes"


def _reason(exc: Exception) -> str:
    return (str(exc).strip().rstrip(".") or type(exc).__name__)[:200]
