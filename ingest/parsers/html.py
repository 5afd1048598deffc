"""HTML: the article a person would read, not the menus, scripts and cookie banners around it.

trafilatura finds the main content; pages where it finds none (short notes, link lists) still
get their visible body text. Scripts, styles and other non-visible markup are removed from the
tree before either step, so their text can never leak into the index. (Metadata is read first,
from a copy: authors and dates often live in JSON-LD script blocks; the page's own published
and modified dates are html_dates.py's.) Documentation pages are prepared first
(html_structure.py): permalink glyphs out, definition lists into term and `: `
definition lines, layout lists into blocks, headings as marked paragraphs trafilatura cannot
drop, preformatted and synopsis blocks as marks put back after it as fenced code of their own
text (trafilatura fenced some, wrote others as escaped prose). The text then always starts
with a heading (the page's title when its own first heading comes later or not at all), so
every chunk of a page has a heading path. trafilatura escapes Markdown's inline characters of
prose (`_ * ` ~ [ ] <`) and a leading `#`, `>`, `-`, `+` or `1.` of a line; the text is read,
not rendered, so those escapes are undone outside code, and emphasis wrapped around a code
span (`*`name`*`) goes.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import lxml.html  # type: ignore[import-untyped]
import trafilatura

from ingest.parsers.base import ParsedDocument, ParseError, ParserLimits
from ingest.parsers.html_dates import page_dates
from ingest.parsers.html_links import site_links
from ingest.parsers.html_structure import (
    code_from_marks,
    collapse_line_breaks,
    flatten_definition_lists,
    headings_from_marks,
    inline_divs_as_paragraphs,
    join_definitions,
    left_out_page_heading,
    mark_headings,
    preformatted_as_code,
    remove_permalinks,
    unwrap_layout_lists,
    without_glyphs,
    without_line_glyphs,
)
from ingest.parsers.text import (
    clean_text,
    decode_text,
    decoding_warning,
    filename_stem,
    first_line,
    short_title,
)

_INVISIBLE = ("script", "style", "noscript", "template", "iframe", "object", "embed", "svg")
# Tags that start a paragraph of their own, and tags that only end a line.
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset",
        "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main",
        "nav", "ol", "p", "pre", "section", "table", "ul",
    }
)  # fmt: skip
_LINES = frozenset({"br", "caption", "dd", "dt", "figcaption", "li", "summary", "tr"})
_CELLS = frozenset({"td", "th"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_ANY_SPACE = re.compile(r"[ \t\r\n\f]+")
_TRAILING_SPACES = re.compile(r"[ \t]+$", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n{3,}")
# Code as trafilatura writes it (fenced blocks, inline spans), whose backslashes are literal,
# and the escaped `_`/`*` of prose: an odd run of backslashes is escapes, half of it literal.
# (trafilatura opens a fence mid-line for inline code that has a line break.)
_CODE = re.compile(
    r"(?<![\\`])(`+)(?!`)[^\n]*?(?<!`)\1(?!`)|(?<!`)(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\2[ \t]*$",
    re.M | re.S,
)
# What trafilatura's Markdown escapes: inline characters anywhere, block markers at a line's
# start (after its indentation, or after a digit run for `1.`). Not `|`: escaped only in table
# cells, where it would split the row.
_ESCAPED = re.compile(r"(\\+)([_*`~\[\]<])|^([ \t]*)(\\+)([>+-])|^([ \t]*\d{1,9})(\\+)([.)])", re.M)
# A prose line starting with "# " (a shell prompt or a comment outside a code block): as a
# code span it is read as code, where without the escape it would read as a heading.
_ESCAPED_HASH_LINE = re.compile(r"^([ \t]*)\\(#[^\n`]*?)[ \t]*$", re.M)
_EMPHASIS = ("***", "**", "*", "___", "__", "_")
_HEADING_LINE = re.compile(r"(#{1,6}) +(\S[^\n]*)")


def parse_html(data: bytes, *, filename: str, limits: ParserLimits) -> ParsedDocument:
    charset = _META_CHARSET.search(data[:4096])
    decoded = decode_text(data, declared=charset.group(1).decode("ascii") if charset else None)
    root = _parse_tree(decoded.text)

    remove_permalinks(root)
    meta = {**_page_metadata(copy.deepcopy(root)), **page_dates(root)}
    for element in list(root.iter(*_INVISIBLE)):
        element.drop_tree()
    language = root.get("lang") or meta.pop("language", None)
    if language:
        meta["language"] = short_title(language)[:35]

    collapse_line_breaks(root)
    flatten_definition_lists(root)
    prepared = copy.deepcopy(root)  # links in headings and code stay in `root` for site_links
    unwrap_layout_lists(prepared)
    mark_headings(prepared)
    codes = preformatted_as_code(prepared)
    inline_divs_as_paragraphs(prepared)
    text = _main_content(copy.deepcopy(prepared)) or _visible_text(prepared)
    header = left_out_page_heading(prepared, text, root.findtext(".//title") or "")
    text = f"{header}\n\n{text}" if header else text
    text = code_from_marks(headings_from_marks(text), codes)
    text = _BLANK_LINES.sub("\n\n", _without_trailing_headings(text))
    text = without_line_glyphs(join_definitions(text)).strip()
    if not text:
        raise ParseError("The HTML page has no readable text.")
    links = site_links(root, text)
    if links:
        meta["links"] = links
    warning = decoding_warning(decoded)
    page_title = without_glyphs(short_title(root.findtext(".//title")))
    title = (
        short_title(meta.get("title")) or page_title or first_line(text) or filename_stem(filename)
    )
    return ParsedDocument(
        text=_under_title(text, title),
        title=title,
        format="html",
        mime="text/html",
        metadata={"encoding": decoded.encoding, **meta},
        warnings=(warning,) if warning else (),
    )


def _parse_tree(html: str) -> Any:
    # lxml refuses str input that carries an XML encoding declaration; it is decoded already.
    html = _XML_DECLARATION.sub("", html, count=1)
    parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, no_network=True)
    try:
        return lxml.html.document_fromstring(html, parser=parser)
    except MemoryError:  # must reach the sandbox, which replaces the exhausted child
        raise
    except Exception as exc:  # lxml.etree.ParserError: "Document is empty" and friends
        raise ParseError(f"The HTML page could not be read ({exc}).") from None


def _page_metadata(tree: Any) -> dict[str, Any]:
    try:
        # extensive=False: the exhaustive date search reads the whole text, slow on big pages.
        document = trafilatura.extract_metadata(tree, extensive=False)
    except MemoryError:
        raise
    except Exception:
        return {}  # metadata is a bonus; the text is what the person uploaded the page for
    found: dict[str, Any] = {}
    for key in ("title", "author", "date", "sitename", "description", "language"):
        value = getattr(document, key, None)
        if isinstance(value, str) and short_title(value):
            found[key] = short_title(value) if key != "description" else value.strip()[:1000]
    if "title" in found:
        found["title"] = without_glyphs(found["title"])
    return {key: value for key, value in found.items() if value}


def _main_content(tree: Any) -> str:
    try:
        extracted = trafilatura.extract(
            tree,
            output_format="markdown",
            include_tables=True,
            include_comments=False,
            include_images=False,
            include_links=False,
            favor_recall=True,
            deduplicate=False,
        )
    except MemoryError:
        raise
    except Exception:
        return ""  # trafilatura gave up on this page; the visible-text fallback still works
    text = _unescaped(clean_text(extracted or ""))
    return _BLANK_LINES.sub("\n\n", _TRAILING_SPACES.sub("", text)).strip()


def _without_trailing_headings(text: str) -> str:
    """The text without the headings it ends with, when it has more than headings: a
    heading with nothing under it (trafilatura collects a page header it left out at the
    end) would be a chunk of one heading."""
    lines = text.rstrip().split("\n")
    end = len(lines)
    while end and (not lines[end - 1].strip() or _HEADING_LINE.match(lines[end - 1])):
        end -= 1
    if end == 0 or "```" in lines[end - 1]:
        return text  # headings only, or the last heading lines sit in a code block
    return "\n".join(lines[:end])


def _under_title(text: str, title: str) -> str:
    """The text, under a first `#` line holding the page's title unless it starts with a
    heading of the first level or one saying the title: what comes before a page's own first
    heading, or under sections only (`## SYNOPSIS`), belongs to the page, and the chunker
    gives it the title as its heading path."""
    title = " ".join(title.split())
    first = _HEADING_LINE.match(text)
    if not title or (first and (first.group(1) == "#" or _same(first.group(2), title))):
        return text
    return f"# {title}\n\n{text}"


def _same(heading: str, title: str) -> bool:
    return heading.strip().casefold() == title.casefold()


def _unescaped(markdown: str) -> str:
    """`\\_\\_init\\_\\_` back to `__init__`, `\\[--verbose\\]` to `[--verbose]`, a line
    `\\# comment` to the code span `# comment`, outside code only; the emphasis marks
    trafilatura writes itself carry no backslash and stay, except around a code span
    (`*`name`*` is `name` in code)."""
    parts: list[str] = []
    position = 0
    for code in _CODE.finditer(markdown):
        parts += [_unescape_prose(markdown[position : code.start()]), code.group()]
        position = code.end()
    parts.append(_unescape_prose(markdown[position:]))
    for i in range(1, len(parts) - 1, 2):  # odd parts are code
        if "\n" not in parts[i]:
            parts[i - 1], parts[i + 1] = _without_emphasis(parts[i - 1], parts[i + 1])
    return "".join(parts)


def _without_emphasis(before: str, after: str) -> tuple[str, str]:
    """The prose on both sides of an inline code span, without an emphasis mark that wraps
    just the span (`*` before it and `*` after it, not part of a longer run)."""
    for mark in _EMPHASIS:
        if (
            before.endswith(mark)
            and after.startswith(mark)
            and not before[: -len(mark)].endswith(mark[0])
            and not after[len(mark) :].startswith(mark[0])
        ):
            return before[: -len(mark)], after[len(mark) :]
    return before, after


def _unescape_prose(text: str) -> str:
    def unescape(match: re.Match[str]) -> str:
        lead, slashes, char = (
            ("", match.group(1), match.group(2))
            if match.group(1)
            else (match.group(3), match.group(4), match.group(5))
            if match.group(4)
            else (match.group(6), match.group(7), match.group(8))
        )
        count = len(slashes)
        return lead + "\\" * (count // 2) + char if count % 2 else match.group()

    return _ESCAPED_HASH_LINE.sub(r"\1`\2`", _ESCAPED.sub(unescape, text))


def _visible_text(root: Any) -> str:
    body = root.find("body")
    container = body if body is not None else root
    preformatted = {el for pre in container.iter("pre") for el in pre.iter()}
    for element in container.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        # Newlines in the source are just spaces to a browser; only the tags break lines.
        if element.text and element not in preformatted:
            element.text = _ANY_SPACE.sub(" ", element.text)
        if element.tail and (element.getparent() not in preformatted):
            element.tail = _ANY_SPACE.sub(" ", element.tail)
        if tag in _BLOCKS:
            element.text = "\n\n" + (element.text or "")
            element.tail = "\n\n" + (element.tail or "")
        elif tag in _LINES:
            element.tail = "\n" + (element.tail or "")
        elif tag in _CELLS:
            element.tail = " " + (element.tail or "")
    lines = (line.strip() for line in clean_text(container.text_content()).split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
