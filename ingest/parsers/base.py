"""The contract every parser meets, and the limits they all obey.

A parser turns the bytes of one file into a `ParsedDocument`: plain text (Markdown-flavoured:
headings as `#` lines, lists as `- ` lines, tables as Markdown tables) plus metadata. It never
trusts the file: sizes are bounded by `ParserLimits`, and every failure a person could cause
with a bad file is a `ParseError` whose message is shown to them as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("pdf", "docx", "html", "markdown", "text", "json", "jsonl")

# Called by a paged parser after each page it read: (pages read, pages in the file). A long
# PDF takes minutes; this is how the person who uploaded it sees it move.
PageProgress = Callable[[int, int], object]


class ParseError(Exception):
    """The file cannot be turned into text; the message is for the person who uploaded it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnsupportedFormat(ParseError):
    """Not a format Graphloom reads (the API answers 415)."""


@dataclass(frozen=True, slots=True)
class ParserLimits:
    max_file_bytes: int = 50 * 1024 * 1024
    max_chars: int = 5_000_000
    max_docx_uncompressed_bytes: int = 200 * 1024 * 1024
    timeout_seconds: float = 120.0
    memory_mb: int = 2048

    @classmethod
    def from_settings(cls) -> ParserLimits:
        from django.conf import settings

        return cls(
            max_file_bytes=settings.INGEST_MAX_FILE_BYTES,
            max_chars=settings.INGEST_MAX_CHARS,
            max_docx_uncompressed_bytes=settings.INGEST_MAX_DOCX_UNCOMPRESSED_BYTES,
            timeout_seconds=settings.INGEST_PARSE_TIMEOUT_SECONDS,
            memory_mb=settings.INGEST_PARSE_MEMORY_MB,
        )


@dataclass(frozen=True, slots=True)
class Page:
    """Where page `number` (1-based) lies in `ParsedDocument.text`: text[start:end]."""

    number: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    text: str
    title: str
    format: str  # one of FORMATS
    mime: str  # the detected MIME type, not the declared one
    metadata: dict[str, Any] = field(default_factory=dict)  # JSON-safe values only
    pages: tuple[Page, ...] = ()
    warnings: tuple[str, ...] = ()
