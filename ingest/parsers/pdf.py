"""PDF: text page by page, with each page's place in the document text.

Citations point at pages ("see page 12"), so the parser records where every page lies in the
final text. PDFs are the format most often broken, encrypted or image-only, and each of those
cases gets its own message instead of a pypdf traceback. A PDF encrypted with an owner
password only (an empty user password, common for "no copying" flags) opens like any other:
every viewer opens it without asking, so refusing it would only be in the way. AES-encrypted
ones need the `cryptography` package, a dependency for that reason. The outline, when there
is one, becomes the text's headings (pdf_outline.py).
"""

from __future__ import annotations

import io
import logging
from typing import Any

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError

from ingest.parsers.base import Page, PageProgress, ParsedDocument, ParseError, ParserLimits
from ingest.parsers.pdf_outline import read_outline, with_headings
from ingest.parsers.text import (
    clean_text,
    filename_stem,
    first_line,
    first_markdown_heading,
    short_title,
)

logger = logging.getLogger(__name__)

PAGE_SEPARATOR = "\n\n"
_ENCRYPTED = (
    "The PDF is encrypted (password-protected); remove the password (for example by printing "
    "it to a new PDF) and upload it again."
)


def parse_pdf(
    data: bytes, *, filename: str, limits: ParserLimits, on_page: PageProgress | None = None
) -> ParsedDocument:
    """The PDF's text; `on_page(read, page_count)` is called after every page read."""
    reader = _open(data)
    try:
        page_count = len(reader.pages)
    except FileNotDecryptedError:
        raise ParseError(_ENCRYPTED) from None
    except MemoryError:  # must reach the sandbox, which replaces the exhausted child
        raise
    except Exception as exc:
        raise ParseError(f"The PDF is damaged or truncated: {_reason(exc)}.") from None
    if page_count == 0:
        raise ParseError("The PDF is damaged or truncated: it has no pages.")

    texts: list[str] = []
    warnings: list[str] = []
    failed: list[int] = []
    extracted = 0
    for number in range(1, page_count + 1):
        if extracted > limits.max_chars:
            # The text will be cut at max_chars anyway: reading thousands more pages would
            # only spend the parse timeout.
            warnings.append(
                f"Stopped reading after page {number - 1} of {page_count}: the text limit of "
                f"{limits.max_chars:,} characters was reached."
            )
            break
        try:
            raw = reader.pages[number - 1].extract_text()
        except FileNotDecryptedError:
            raise ParseError(_ENCRYPTED) from None
        except MemoryError:
            raise
        except Exception as exc:
            # One broken page (a bad font, a corrupt stream) must not cost the other pages.
            logger.info("PDF %r: page %d failed: %r", filename, number, exc)
            failed.append(number)
            raw = ""
        texts.append(clean_text(raw).strip())
        extracted += len(texts[-1])
        if on_page is not None:
            on_page(number, page_count)
    if failed:
        if len(failed) == page_count:
            raise ParseError("The PDF is damaged or truncated: no page could be read.")
        warnings.append(
            f"{len(failed)} of {page_count} pages could not be read and were skipped "
            f"(pages {_ranges(failed)})."
        )

    if not any(texts):  # before the outline adds its headings: they are no page text
        raise ParseError(
            "The PDF has no extractable text (scanned?). Its pages are probably images; run "
            "OCR on it (for example with ocrmypdf) and upload the result."
        )
    outline = read_outline(reader)
    text, pages = _join_pages(with_headings(texts, outline))
    metadata: dict[str, Any] = {"page_count": page_count, **_metadata(reader)}
    if outline:
        metadata["outline"] = [item.as_metadata() for item in outline]
    return ParsedDocument(
        text=text,
        title=(
            short_title(metadata.get("title"))
            or (first_markdown_heading(text) if outline else "")  # a bookmark, not "# Intro"
            or first_line(text)
            or filename_stem(filename)
        ),
        format="pdf",
        mime="application/pdf",
        metadata=metadata,
        pages=pages,
        warnings=tuple(warnings),
    )


def _open(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except DependencyError:
        # pypdf needs the `cryptography` package for AES; without it the PDF is as good as locked.
        raise ParseError(_ENCRYPTED) from None
    except MemoryError:
        raise
    except Exception as exc:
        raise ParseError(f"The PDF is damaged or truncated: {_reason(exc)}.") from None
    if reader.is_encrypted:
        # pypdf already tried the empty password; asking again tells whether that worked.
        try:
            opened = reader.decrypt("")
        except MemoryError:
            raise
        except Exception:
            raise ParseError(_ENCRYPTED) from None
        if opened == PasswordType.NOT_DECRYPTED:
            raise ParseError(_ENCRYPTED)
    return reader


def _join_pages(texts: list[str]) -> tuple[str, tuple[Page, ...]]:
    """Pages joined by a blank line; an empty page gets an empty span and no separator."""
    parts: list[str] = []
    pages: list[Page] = []
    position = 0
    for number, page_text in enumerate(texts, start=1):
        if page_text and parts:
            parts.append(PAGE_SEPARATOR)
            position += len(PAGE_SEPARATOR)
        start = position
        parts.append(page_text)
        position += len(page_text)
        pages.append(Page(number=number, start=start, end=position))
    return "".join(parts), tuple(pages)


def _metadata(reader: PdfReader) -> dict[str, Any]:
    found: dict[str, Any] = {}
    try:
        info = reader.metadata
    except MemoryError:
        raise
    except Exception:
        return found  # a broken info dictionary is no reason to lose the text
    if info is None:
        return found
    for key, read in (("title", lambda: info.title), ("author", lambda: info.author)):
        try:
            value = short_title(str(read() or ""))
        except MemoryError:
            raise
        except Exception:  # noqa: S112 - a malformed field is skipped, the others still count
            continue
        if value:
            found[key] = value
    for key, read_date in (
        ("created", lambda: info.creation_date),  # CreationDate
        ("modified", lambda: info.modification_date),  # ModDate
    ):
        try:
            moment = read_date()
        except MemoryError:
            raise
        except Exception:  # noqa: S112 - a malformed date is no date, the text still counts
            continue
        if moment is not None:
            found[key] = moment.isoformat()
    return found


def _reason(exc: Exception) -> str:
    message = str(exc).strip().rstrip(".") or type(exc).__name__
    return message[:200]


def _ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 7] -> '1-3, 7'."""
    spans: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(spans)
