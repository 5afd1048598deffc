"""Plain text and Markdown: turning bytes of unknown encoding into clean text.

Text files carry no reliable encoding label, so this module owns the decoding policy (UTF-8
first, then charset detection, never a crash on bad bytes) and the cleaning every parser's
output goes through; the other parsers import `clean_text`, `decode_text` and the title helpers
from here rather than each inventing its own.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

import charset_normalizer

from ingest.parsers.base import ParsedDocument, ParseError, ParserLimits

MAX_TITLE_CHARS = 200
UNTITLED = "Untitled document"

# C0 controls except \t and \n, plus DEL: they break search, terminals and PostgreSQL (NUL).
# \r, \v and \f are not here because `clean_text` turns them into newlines first.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]+")
_VERTICAL = re.compile(r"\r\n?|[\v\f\x1c-\x1e\x85\u2028\u2029]")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_WHITESPACE_RUN = re.compile(r"\s+")
# One cheap scan decides whether the two substitutions are needed at all (most text is clean).
_NEEDS_CLEANING = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")

# Only the first lines are looked at for a title: a heading on line 5,000 is not a title, and
# scanning a 50 MB file line by line for one would be wasted work.
_TITLE_SCAN_LINES = 200

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 first: its little-endian BOM starts with the UTF-16 one.
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    encoding: str
    replaced: int  # invalid byte sequences turned into U+FFFD


def bom_encoding(data: bytes) -> str | None:
    """The codec a byte-order mark at the start of `data` announces, if any."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return None


def decode_text(data: bytes, *, declared: str | None = None) -> Decoded:
    """Decode bytes of unknown encoding; bad bytes become U+FFFD and are counted, never raised.

    Order: a BOM wins; then strict UTF-8 (most files today); then `declared` (an HTML
    `<meta charset>`), then text that is UTF-8 apart from a few stray bytes stays UTF-8 (a
    legacy guess would garble every correct accented letter to save a handful of bad ones);
    then charset_normalizer's guess.
    """
    bom = bom_encoding(data)
    if bom is not None:
        return _decode_with(data, bom, name="utf-8" if bom == "utf-8-sig" else bom)
    try:
        return Decoded(text=data.decode("utf-8"), encoding="utf-8", replaced=0)
    except UnicodeDecodeError:
        pass
    declared_codec = _known_codec(declared) if declared else None
    if declared_codec and declared_codec != "utf-8":
        return _decode_with(data, declared_codec, name=declared_codec)
    as_utf8 = _decode_with(data, "utf-8", name="utf-8")
    high_bytes = len(data) - len(data.translate(None, bytes(range(0x80, 0x100))))
    if as_utf8.replaced * 10 <= high_bytes - as_utf8.replaced:
        return as_utf8
    best = charset_normalizer.from_bytes(data).best()
    if best is None or _known_codec(best.encoding) in (None, "utf-8", "ascii"):
        return as_utf8
    return _decode_with(data, best.encoding, name=_known_codec(best.encoding) or best.encoding)


def _known_codec(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _decode_with(data: bytes, codec: str, *, name: str) -> Decoded:
    text = data.decode(codec, errors="replace")
    # U+FFFD that was already in the file (as valid UTF-8) is not a replacement we made.
    already = data.count(b"\xef\xbf\xbd") if codec.startswith("utf-8") else 0
    return Decoded(text=text, encoding=name, replaced=max(0, text.count("\ufffd") - already))


def clean_text(text: str) -> str:
    """Newlines normalised to `\\n`; NUL and other control characters (not `\\t`) removed."""
    if not _NEEDS_CLEANING.search(text):
        return text
    return _CONTROL.sub("", _VERTICAL.sub("\n", text))


def filename_stem(filename: str) -> str:
    """`reports/Q3 plan.final.pdf` -> `Q3 plan.final`; browsers may send Windows paths."""
    name = PurePosixPath(filename.replace("\\", "/")).name
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return stem.strip() or UNTITLED


def short_title(candidate: str | None) -> str:
    """One line of at most MAX_TITLE_CHARS characters ('' when there is nothing)."""
    if not candidate:
        return ""
    line = _WHITESPACE_RUN.sub(" ", clean_text(candidate)).strip()
    if len(line) <= MAX_TITLE_CHARS:
        return line
    cut = line.rfind(" ", 0, MAX_TITLE_CHARS + 1)
    return line[: cut if cut > MAX_TITLE_CHARS // 2 else MAX_TITLE_CHARS].rstrip()


def _head_lines(text: str) -> list[str]:
    # Never split the whole text: a 10 MB file may be one line, or a million of them.
    lines: list[str] = []
    start = 0
    while len(lines) < _TITLE_SCAN_LINES and start <= len(text):
        end = text.find("\n", start)
        if end == -1:
            end = len(text)
        lines.append(text[start : min(end, start + 4 * MAX_TITLE_CHARS)])
        start = end + 1
    return lines


def first_line(text: str) -> str:
    """The first non-empty line, shortened to a title."""
    for line in _head_lines(text):
        if line.strip():
            return short_title(line)
    return ""


def first_markdown_heading(text: str) -> str:
    """The first ATX (`# Title`) or setext (`Title` over `===`) heading, '' if none."""
    lines = _head_lines(text)
    in_fence = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        atx = _ATX_HEADING.match(line)
        if atx:
            return short_title(atx.group(1))
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _SETEXT_UNDERLINE.match(nxt) and not line.lstrip().startswith("-"):
            return short_title(line)
    return ""


def decoding_warning(decoded: Decoded) -> str | None:
    if not decoded.replaced:
        return None
    noun = "sequence was" if decoded.replaced == 1 else "sequences were"
    return (
        f"{decoded.replaced:,} invalid byte {noun} replaced with \ufffd while decoding "
        f"as {decoded.encoding}."
    )


def parse_text(data: bytes, *, filename: str, limits: ParserLimits) -> ParsedDocument:
    return _parse(data, filename=filename, markdown=False)


def parse_markdown(data: bytes, *, filename: str, limits: ParserLimits) -> ParsedDocument:
    return _parse(data, filename=filename, markdown=True)


def _parse(data: bytes, *, filename: str, markdown: bool) -> ParsedDocument:
    decoded = decode_text(data)
    text = clean_text(decoded.text).strip()
    if not text.strip():
        raise ParseError("The file is empty.")
    title = (first_markdown_heading(text) if markdown else "") or first_line(text)
    warning = decoding_warning(decoded)
    return ParsedDocument(
        text=text,
        title=title or filename_stem(filename),
        format="markdown" if markdown else "text",
        mime="text/markdown" if markdown else "text/plain",
        metadata={"encoding": decoded.encoding},
        warnings=(warning,) if warning else (),
    )
