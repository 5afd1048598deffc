"""Turn an uploaded file into text: the one entry point the ingestion pipeline calls.

`parse` (formats.py) detects the real format, runs that format's parser and applies what
every format shares. `parse_isolated` (sandbox.py) does the same in a child process with a
deadline and a memory cap; the pipeline uses it for uploads, `parse` is for trusted input
and tests.
"""

from __future__ import annotations

from ingest.parsers.base import (
    FORMATS,
    Page,
    ParsedDocument,
    ParseError,
    ParserLimits,
    UnsupportedFormat,
)
from ingest.parsers.detect import MIME_TYPES, detect_format, detect_upload_format
from ingest.parsers.formats import PARSERS, parse
from ingest.parsers.sandbox import parse_isolated, shutdown

__all__ = [
    "FORMATS",
    "MIME_TYPES",
    "PARSERS",
    "Page",
    "ParseError",
    "ParsedDocument",
    "ParserLimits",
    "UnsupportedFormat",
    "detect_format",
    "detect_upload_format",
    "parse",
    "parse_isolated",
    "shutdown",
]
