"""HTML: the article a person would read, not the menus, scripts and cookie banners around it.

trafilatura finds the main content; pages where it finds none (short notes, link lists) still
get their visible body text. Scripts, styles and other non-visible markup are removed from the
tree before either step, so their text can never leak into the index. (Metadata is read first,
from a copy: authors and dates often live in JSON-LD script blocks.) Documentation pages are
prepared first (html_structure.py): permalink glyphs out, definition lists into term and `: `
definition lines. trafilatura escapes every `_` and `*` of prose for Markdown; identifiers
read better without the backslashes, so those escapes are undone outside code.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import lxml.html  # type: ignore[import-untyped]
import trafilatura

from ingest.parsers.base import ParsedDocument, ParseError, ParserLimits
from ingest.parsers.html_links import site_links
from ingest.parsers.html_structure import (
    collapse_line_breaks,
    flatten_definition_lists,
    join_definitions,
    remove_permalinks,
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
_ESCAPED = re.compile(r"(\\+)([_*])")


def parse_html(data: bytes, *, filename: str, limits: ParserLimits) -> ParsedDocument:
    charset = _META_CHARSET.search(data[:4096])
    decoded = decode_text(data, declared=charset.group(1).decode("ascii") if charset else None)
    root = _parse_tree(decoded.text)

    remove_permalinks(root)
    meta = _page_metadata(copy.deepcopy(root))
    for element in list(root.iter(*_INVISIBLE)):
        element.drop_tree()
    language = root.get("lang") or meta.pop("language", None)
    if language:
        meta["language"] = short_title(language)[:35]

    collapse_line_breaks(root)
    flatten_definition_lists(root)
    text = _main_content(copy.deepcopy(root)) or _visible_text(copy.deepcopy(root))
    text = without_line_glyphs(join_definitions(text)).strip()
    if not text:
        raise ParseError("The HTML page has no readable text.")
    links = site_links(root, text)
    if links:
        meta["links"] = links
    warning = decoding_warning(decoded)
    page_title = without_glyphs(short_title(root.findtext(".//title")))
    return ParsedDocument(
        text=text,
        title=(
            short_title(meta.get("title"))
            or page_title
            or first_line(text)
            or filename_stem(filename)
        ),
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


def _unescaped(markdown: str) -> str:
    """`\\_\\_init\\_\\_` back to `__init__` and `\\*args` to `*args`, outside code only; the
    emphasis marks trafilatura writes itself carry no backslash and stay."""
    parts: list[str] = []
    position = 0
    for code in _CODE.finditer(markdown):
        parts += [_unescape_prose(markdown[position : code.start()]), code.group()]
        position = code.end()
    parts.append(_unescape_prose(markdown[position:]))
    return "".join(parts)


def _unescape_prose(text: str) -> str:
    def unescape(match: re.Match[str]) -> str:
        slashes = len(match.group(1))
        return "\\" * (slashes // 2) + match.group(2) if slashes % 2 else match.group()

    return _ESCAPED.sub(unescape, text)


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
