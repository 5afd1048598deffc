"""Which parser reads which format, and what every format's result gets in common.

`parse` detects the real format (see `detect`), runs that format's parser, and applies what
every format shares: control characters removed, the text bounded by `ParserLimits.max_chars`,
and no library exception escaping as anything but a `ParseError` a person can read. It runs
in the calling process; `sandbox.parse_isolated` runs it in a child process.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from typing import Protocol

from ingest.parsers.base import (
    FORMATS,
    Page,
    PageProgress,
    ParsedDocument,
    ParseError,
    ParserLimits,
)
from ingest.parsers.detect import MIME_TYPES, detect_format, size_error
from ingest.parsers.docx import parse_docx
from ingest.parsers.html import parse_html
from ingest.parsers.json import parse_json, parse_jsonl
from ingest.parsers.pdf import parse_pdf
from ingest.parsers.text import (
    UNTITLED,
    clean_text,
    filename_stem,
    parse_markdown,
    parse_text,
    short_title,
)

logger = logging.getLogger(__name__)


class Parser(Protocol):
    def __call__(self, data: bytes, *, filename: str, limits: ParserLimits) -> ParsedDocument: ...


PARSERS: dict[str, Parser] = {
    "pdf": parse_pdf,
    "docx": parse_docx,
    "html": parse_html,
    "markdown": parse_markdown,
    "text": parse_text,
    "json": parse_json,
    "jsonl": parse_jsonl,
}
assert set(PARSERS) == set(FORMATS) == set(MIME_TYPES), "every format needs a parser and a MIME"


class PagedParser(Protocol):
    def __call__(
        self, data: bytes, *, filename: str, limits: ParserLimits, on_page: PageProgress | None
    ) -> ParsedDocument: ...


# The formats with pages, whose parsers report each page read (only they can take long
# enough for it to matter: a 2,000-page PDF reads for minutes, a web page for milliseconds).
PAGED_PARSERS: dict[str, PagedParser] = {"pdf": parse_pdf}

_LABELS = {
    "pdf": "PDF",
    "docx": "Word document",
    "html": "HTML page",
    "markdown": "Markdown file",
    "text": "text file",
    "json": "JSON file",
    "jsonl": "JSONL file",
}


def parse(
    data: bytes, *, filename: str, limits: ParserLimits, on_page: PageProgress | None = None
) -> ParsedDocument:
    """Parse in this process. Raises ParseError (UnsupportedFormat for unknown formats).

    `on_page(read, page_count)` is called after each page of a paged format (PDF) is read.
    """
    if len(data) > limits.max_file_bytes:
        raise size_error(len(data), limits=limits)
    fmt = detect_format(data, filename=filename)
    try:
        if fmt in PAGED_PARSERS and on_page is not None:
            document = PAGED_PARSERS[fmt](data, filename=filename, limits=limits, on_page=on_page)
        else:
            document = PARSERS[fmt](data, filename=filename, limits=limits)
    except (ParseError, MemoryError):
        raise
    except RecursionError:
        raise ParseError(f"The {_LABELS[fmt]} is nested too deeply to read.") from None
    except Exception as exc:
        # A library choking on a file is the file's problem for the person who uploaded it,
        # and ours to look at in the log.
        logger.exception("The %s parser failed on %r", fmt, filename)
        raise ParseError(
            f"The {_LABELS[fmt]} could not be read ({type(exc).__name__}); it may be damaged."
        ) from exc
    return _finish(document, filename=filename, limits=limits)


def _finish(document: ParsedDocument, *, filename: str, limits: ParserLimits) -> ParsedDocument:
    text, pages = _clean(document.text, document.pages)
    if not text.strip():
        raise ParseError(f"The {_LABELS.get(document.format, 'file')} has no readable text.")
    metadata = dict(document.metadata)
    warnings = list(document.warnings)
    if len(text) > limits.max_chars:
        original = len(text)
        text = text[: _cut_point(text, limits.max_chars)].rstrip()
        pages = tuple(
            Page(number=p.number, start=p.start, end=min(p.end, len(text)))
            for p in pages
            if p.start < len(text)
        )
        metadata["truncated"] = True
        warnings.append(
            f"The text was cut to its first {len(text):,} of {original:,} characters "
            f"(the limit is {limits.max_chars:,}); the rest was not kept."
        )
    title = short_title(document.title) or filename_stem(filename) or UNTITLED
    return dataclasses.replace(
        document,
        text=text,
        title=title,
        metadata=metadata,
        pages=pages,
        warnings=tuple(warnings),
    )


def _clean(text: str, pages: tuple[Page, ...]) -> tuple[str, tuple[Page, ...]]:
    """`clean_text` over the whole text, keeping page spans pointing at the same content."""
    cleaned = clean_text(text)
    if cleaned == text or not pages:
        return cleaned, pages
    # Removing characters shifts offsets: clean piece by piece between page boundaries.
    bounds = sorted({0, len(text), *(p.start for p in pages), *(p.end for p in pages)})
    new_offset: dict[int, int] = {0: 0}
    parts: list[str] = []
    position = 0
    for start, end in itertools.pairwise(bounds):
        piece = clean_text(text[start:end])
        parts.append(piece)
        position += len(piece)
        new_offset[end] = position
    moved = tuple(
        Page(number=p.number, start=new_offset[p.start], end=new_offset[p.end]) for p in pages
    )
    return "".join(parts), moved


def _cut_point(text: str, max_chars: int) -> int:
    """Where to cut: the last whitespace within the limit, unless that would lose half of it."""
    boundary = max(text.rfind(ws, 0, max_chars + 1) for ws in (" ", "\n", "\t"))
    return boundary if boundary >= max_chars // 2 else max_chars
