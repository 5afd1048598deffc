"""Decide what a file really is from its bytes, using the filename only as a hint.

Uploads are named by people and by browsers, and names lie: a PDF saved as `.docx`, a web page
saved as `.txt`, a photo renamed to `.txt`. Reading the wrong parser's error would confuse the
person, and trusting a `.txt` name would feed binary garbage into the index, so the content
decides and the extension only breaks ties between text formats.
"""

from __future__ import annotations

import codecs
import io
import json
import re
import zipfile
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

import filetype  # type: ignore[import-untyped]

from ingest.parsers.base import ParseError, ParserLimits, UnsupportedFormat
from ingest.parsers.text import bom_encoding, decode_text

if TYPE_CHECKING:
    from django.core.files.base import File

MIME_TYPES: dict[str, str] = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "html": "text/html",
    "markdown": "text/markdown",
    "text": "text/plain",
    "json": "application/json",
    "jsonl": "application/x-ndjson",
}

READABLE = "Graphloom reads PDF, Word (.docx), HTML, Markdown, plain text, JSON and JSONL files."

HTML_EXTENSIONS = frozenset({".html", ".htm", ".xhtml", ".shtml"})
MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdown", ".mkd", ".mkdn"})
JSON_EXTENSIONS = frozenset({".json"})
JSONL_EXTENSIONS = frozenset({".jsonl", ".ndjson"})

_SNIFF_BYTES = 8192
_PDF_HEADER_WINDOW = 1024
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_LEADING_NOISE = b" \t\r\n\f\v"
# Bytes that never occur in text (tab, newlines, form feed and ESC, for coloured logs, do).
_BINARY_CONTROLS = bytes([*range(0x00, 0x09), 0x0E, *range(0x0F, 0x1B), *range(0x1C, 0x20), 0x7F])
_MAX_CONTROL_RATIO = 0.05

_HTML_START = re.compile(r"<(?:!doctype\s+html|html|head|body)[\s>/]", re.IGNORECASE)
_HTML_PREAMBLE = re.compile(r"^(?:\s+|<\?xml[^>]*\?>|<!--.*?-->)*", re.DOTALL)
_HTML_TAG_AT_LINE_START = re.compile(
    r"^[ \t]*<(?:html|head|body)[\s>]", re.IGNORECASE | re.MULTILINE
)
_ANY_TAG = re.compile(r"<(?:[a-zA-Z][a-zA-Z0-9-]*|!--|/[a-zA-Z])")

_ZIP_KINDS: tuple[tuple[str, str], ...] = (
    ("xl/workbook.xml", "an Excel spreadsheet (.xlsx)"),
    ("ppt/presentation.xml", "a PowerPoint presentation (.pptx)"),
    ("visio/document.xml", "a Visio drawing (.vsdx)"),
)
_ZIP_MIMETYPES: dict[str, str] = {
    "application/vnd.oasis.opendocument.text": "an OpenDocument text document (.odt)",
    "application/vnd.oasis.opendocument.spreadsheet": "an OpenDocument spreadsheet (.ods)",
    "application/vnd.oasis.opendocument.presentation": "an OpenDocument presentation (.odp)",
    "application/epub+zip": "an EPUB e-book",
}


def extension(filename: str) -> str:
    """Lower-cased extension with its dot ('' when there is none)."""
    return PurePosixPath(filename.replace("\\", "/")).suffix.lower()


def is_blank(data: bytes) -> bool:
    """Nothing but whitespace (and maybe a byte-order mark)?"""
    encoding = bom_encoding(data)
    if encoding is not None and encoding != "utf-8-sig":
        return not data.decode(encoding, errors="replace").strip()
    body = data[len(codecs.BOM_UTF8) :] if encoding == "utf-8-sig" else data
    # Check a prefix first so a large file is not copied just to learn it is not blank.
    return not body[:_SNIFF_BYTES].strip() and not body.strip()


def size_error(size: int, *, limits: ParserLimits) -> ParseError:
    """The error for a file over `limits.max_file_bytes` (checked before anything is read)."""
    return ParseError(
        f"The file is {_megabytes(size)}; the upload limit is "
        f"{_megabytes(limits.max_file_bytes)}. Split it into smaller files."
    )


def _megabytes(size: int) -> str:
    mb = size / (1024 * 1024)
    if mb < 1:
        return f"{size:,} bytes"
    return f"{mb:,.1f} MB" if mb < 10 else f"{mb:,.0f} MB"


def detect_upload_format(upload: File, *, filename: str) -> str:
    """detect_format for an uploaded file (the API's and the upload page's check before
    anything is stored), leaving the file rewound for whoever stores it."""
    upload.seek(0)
    data = upload.read()
    upload.seek(0)
    return detect_format(data, filename=filename)


def detect_format(data: bytes, *, filename: str) -> str:
    """One of `FORMATS` for these bytes; raises ParseError (empty) or UnsupportedFormat."""
    if is_blank(data):
        raise ParseError("The file is empty.")
    ext = extension(filename)
    head = data[:_SNIFF_BYTES]
    if _is_pdf(head):
        return "pdf"
    if head.startswith(_ZIP_MAGICS):
        return _zip_format(data, filename=filename, ext=ext)
    if head.startswith(_OLE2_MAGIC):
        raise UnsupportedFormat(
            f"{_shown(filename)} is a legacy Microsoft Office file (.doc, .xls or .ppt); "
            f"save it as .docx or PDF and upload that. {READABLE}"
        )
    sample = _text_sample(head)
    if sample is None:
        raise UnsupportedFormat(
            f"{_shown(filename)} looks like {_binary_kind(head)}, not text or a document. "
            f"{READABLE}"
        )
    if sample.lstrip().startswith("{\\rtf"):
        raise UnsupportedFormat(
            f"{_shown(filename)} looks like an RTF document, not plain text; save it as .docx "
            f"or PDF and upload that. {READABLE}"
        )
    if _looks_like_html(sample, ext=ext):
        return "html"
    shape = _json_shape(data, sample=sample, ext=ext)
    if shape is not None:
        return shape
    if ext in MARKDOWN_EXTENSIONS:
        return "markdown"
    return "text"


def _shown(filename: str) -> str:
    name = PurePosixPath(filename.replace("\\", "/")).name
    return f"“{name}”" if name else "The file"


def _is_pdf(head: bytes) -> bool:
    window = head[:_PDF_HEADER_WINDOW]
    # Some generators put a BOM or blank lines before the header; readers accept that.
    while True:
        trimmed = window.lstrip(_LEADING_NOISE)
        if trimmed.startswith(b"\xef\xbb\xbf"):
            trimmed = trimmed[3:]
        if trimmed == window:
            break
        window = trimmed
    return window.startswith(b"%PDF-")


def _zip_format(data: bytes, *, filename: str, ext: str) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            mimetype = ""
            if "mimetype" in names:
                with archive.open("mimetype") as member:
                    mimetype = member.read(200).decode("ascii", errors="replace").strip()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        if ext == ".docx":
            return "docx"  # the DOCX parser explains the damage in DOCX terms
        raise ParseError(
            f"{_shown(filename)} looks like a ZIP archive but it is damaged or truncated ({exc})."
        ) from None
    if "word/document.xml" in names:
        return "docx"
    kind = _ZIP_MIMETYPES.get(mimetype) or next(
        (label for member, label in _ZIP_KINDS if member in names), None
    )
    if kind is None:
        kind = (
            "an Office Open XML package that is not a Word document"
            if "[Content_Types].xml" in names
            else "a ZIP archive"
        )
    raise UnsupportedFormat(
        f"{_shown(filename)} is {kind}, not a Word document (.docx). {READABLE}"
    )


def _text_sample(head: bytes) -> str | None:
    """The decoded start of the file, or None when the bytes are not text."""
    encoding = bom_encoding(head)
    if encoding is not None:
        # UTF-16/32 text is full of NUL bytes; its BOM is what tells it apart from binary.
        return head.decode(encoding, errors="replace")
    if b"\x00" in head:
        return None
    controls = len(head) - len(head.translate(None, _BINARY_CONTROLS))
    if controls > _MAX_CONTROL_RATIO * len(head):
        return None
    if filetype.guess(head) is not None and not _decodes_as_utf8(head):
        return None
    return decode_text(head).text


def _decodes_as_utf8(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut off by the end of the sample is not an error.
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def _binary_kind(head: bytes) -> str:
    kind = filetype.guess(head)
    if kind is None:
        return "binary data"
    mime: str = kind.mime
    ext: str = kind.extension.upper()
    if mime in ("application/x-executable", "application/x-sharedlib", "application/x-elf"):
        label = "an ELF executable"
    elif mime in ("application/x-msdownload", "application/vnd.microsoft.portable-executable"):
        label = "a Windows executable"
    elif mime.startswith("image/"):
        label = f"a {ext} image"
    elif mime.startswith("video/"):
        label = f"a {ext} video"
    elif mime.startswith("audio/"):
        label = f"an {ext} audio file" if ext[:1] in "AEIOU" else f"a {ext} audio file"
    elif mime.startswith("font/") or "font" in mime:
        label = f"a {ext} font"
    elif ext in ("GZ", "BZ2", "XZ", "7Z", "RAR", "TAR", "ZST", "LZ", "Z"):
        label = f"a {ext} archive"
    else:
        label = f"a .{kind.extension} file"
    return f"{label} ({mime})"


def _looks_like_html(sample: str, *, ext: str) -> bool:
    start = _HTML_PREAMBLE.sub("", sample.lstrip("\ufeff"), count=1)
    if _HTML_START.match(start):
        return True
    if ext in HTML_EXTENSIONS:
        return bool(_ANY_TAG.search(sample))
    if ext in MARKDOWN_EXTENSIONS or ext in JSON_EXTENSIONS or ext in JSONL_EXTENSIONS:
        return False  # Markdown may embed HTML; that does not make it a web page
    return bool(_HTML_TAG_AT_LINE_START.search(sample))


def _json_shape(data: bytes, *, sample: str, ext: str) -> str | None:
    """'json' or 'jsonl' when the content (or, failing that, the extension) says so."""
    stripped = sample.lstrip("\ufeff \t\r\n")
    if ext not in JSON_EXTENSIONS | JSONL_EXTENSIONS and not stripped.startswith(("{", "[")):
        return None
    text = decode_text(data).text.lstrip("\ufeff")
    # StringIO yields lines lazily: a 50 MB file is not split into a list to read two lines.
    first_two = _take_nonempty((line.strip() for line in io.StringIO(text)), 2)
    if len(first_two) == 2 and all(_is_json_container(line) for line in first_two):
        return "jsonl"
    if ext in JSONL_EXTENSIONS:
        # One record per line is what the name promises, unless the whole thing is one document.
        if first_two and not _is_json_container(first_two[0]) and _is_json_container(text):
            return "json"
        return "jsonl"
    if ext in JSON_EXTENSIONS:
        return "json"  # invalid JSON is reported by the JSON parser, with its position
    return "json" if _is_json_container(text) else None


def _take_nonempty(lines: Iterable[str], count: int) -> list[str]:
    found: list[str] = []
    for line in lines:
        if line:
            found.append(line)
            if len(found) == count:
                break
    return found


def _is_json_container(text: str) -> bool:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):
        return False
    return True
