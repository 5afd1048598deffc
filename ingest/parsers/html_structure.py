"""What documentation generators wrap around their content, undone before extraction.

Why: Sphinx, MkDocs, Docusaurus and friends add a permalink glyph ("¶", "#", "🔗") to every
heading and API entry, and write glossaries and API references as definition lists. Left as
they are, the glyphs end up in titles, headings and chunks, and trafilatura turns a `<dl>` into
a bullet list where term and definition can no longer be told apart. The knowledge extractor
reads a term line followed by a `: ` definition line (knowledge/extraction/structure.py), so
definition lists are rewritten into exactly that shape in the tree, before trafilatura runs.

Headings: trafilatura keeps a heading only where it finds an article frame; on pages built of
plain section divs (Sphinx's classic theme, DocBook, AsciiDoc, Texinfo, Javadoc) it falls back
to collecting paragraphs and drops every h1-h6, so no chunk had a heading path. Each heading is
therefore written as a marked paragraph, which every path of trafilatura keeps, and turned
back into a `#` line after it (`headings_from_marks`). Preformatted blocks (synopses, grammars,
signatures, verse and literal blocks) are taken out and put back afterwards as fenced code of
their text as shown (`code_from_marks`): trafilatura fenced a `<pre>` of plain text, but wrote
one with `<em>` inside (a synopsis's placeholders) as escaped prose, and a one-line one as an
inline span. Lists whose items hold headings or code are layout, not bullets; and a div of
inline content is a paragraph (trafilatura lost its text up to its first inline child).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# Anchor classes generators put next to headings and terms: Sphinx and MkDocs (headerlink),
# Docusaurus (hash-link), anchor.js (anchorjs-link).
_PERMALINK_CLASSES = frozenset({"headerlink", "hash-link", "anchorjs-link"})
_GLYPHS = frozenset({"", "¶", "§", "#", "🔗", "🔗\ufe0f"})
_INVISIBLE_CHARS = str.maketrans("", "", "\u200b\u200c\u200d\u2060\ufeff")
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "dt"})
_TRAILING_GLYPHS = re.compile(r"(?:[ \t]*(?:[¶§🔗\u200b\ufe0f]|(?<=[ \t])#))+[ \t]*$")
_LINE_GLYPHS = re.compile(r"[ \t]*[¶§🔗]\ufe0f?[ \t]*$", re.M)

# Marks the first paragraph of a definition in the tree; `join_definitions` turns the blank
# line trafilatura puts before every paragraph into the single newline the `: ` line needs.
# Printable (trafilatura drops unprintable characters) and never written by a person.
DEFINITION_MARK = "\u2991dd\u2992"
_MARKED = re.compile(r"[ \t]*\n[ \t\n]*" + re.escape(DEFINITION_MARK))

_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt",
        "fieldset", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
        "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "ul",
    }
)  # fmt: skip
_SPACES = re.compile(r"[ \t\r\n\f]+")
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_LAYOUT = frozenset({*_HEADING_TAGS, "pre", "table"})
# A heading as a marked paragraph: level and a running number (trafilatura drops a paragraph
# whose text repeats an earlier one, and "Parameters" may head every entry of a page), then
# the text, then the end mark. Printable, like DEFINITION_MARK, and never written by a person.
_HEADING_OPEN = "\u2991h"
_HEADING_CLOSE = "\u2991/h\u2992"
_H1_OPEN = "\u2991h1."
# Blocks of a page's header read beside its left-out h1 (`left_out_page_heading`).
_MAX_HEADER_BLOCKS = 6
_HEADING_MARK = re.compile(
    r"^(?P<lead>[^\n]*?)\u2991h(?P<level>[1-6])\.\d+\u2992(?P<text>[^\n]*?)\u2991/h\u2992[ \t]*",
    re.M,
)
_ANY_MARK = re.compile("\u2991/?h(?:[1-6]\\.\\d+)?\u2992")
# What may stand before a heading on its line and still let it be one: list and quote
# markers trafilatura writes for a heading inside a list item or a quote.
_LINE_MARKERS = re.compile(r"[ \t>*+-]*")
# A preformatted block's place: trafilatura fences some `<pre>` blocks, writes others as bare
# lines or an inline span, and escapes the text of some for Markdown; the block's own text
# is put back, fenced, in its place after trafilatura (`code_from_marks`).
_CODE_MARK = re.compile(
    r"(?:`{3,}[^\n]*\n[ \t]*)?`?\u2991pre(?P<number>\d+)\u2992`?(?:[ \t]*\n[ \t]*`{3,}[ \t]*$)?",
    re.M,
)
# Blocks that hold a command's or function's synopsis, grammar or signature without a <pre>:
# DocBook (cmdsynopsis, funcsynopsis), Javadoc (member-signature), Texinfo and others.
_SYNOPSIS_CLASS = re.compile(r"synopsis|signature", re.I)
_ONE_LINE = (*_HEADING_TAGS, "code", "kbd", "samp", "tt")
_FLATTENED = "data-definitions"
_MARKED_CODE = "data-code"
# Sphinx marks the parts of an API signature with these classes (old and new spellings).
_SIGNATURE_CLASSES = frozenset({"sig", "sig-object"})
_NAME_CLASSES = frozenset({"sig-name", "descname"})
_PRENAME_CLASSES = frozenset({"sig-prename", "descclassname"})
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
MAX_SIGNATURE_CHARS = 150


def classes(element: Any) -> set[str]:
    return set((element.get("class") or "").split())


def is_glyph(text: str) -> bool:
    """Whether a link's whole text is a permalink glyph (or nothing visible)."""
    return text.translate(_INVISIBLE_CHARS).strip() in _GLYPHS


def without_glyphs(title: str) -> str:
    """'collections — Container datatypes¶' -> 'collections — Container datatypes'."""
    return _TRAILING_GLYPHS.sub("", title)


def without_line_glyphs(text: str) -> str:
    """Every line's trailing ¶, § or 🔗 removed (a permalink the tree pass did not catch)."""
    return _LINE_GLYPHS.sub("", text)


def remove_permalinks(root: Any) -> None:
    """Drop the anchors generators add next to headings and terms; their tails stay."""
    for link in list(root.iter("a")):
        if _is_permalink(link):
            link.drop_tree()


def _is_permalink(link: Any) -> bool:
    marks = classes(link)
    if marks & _PERMALINK_CLASSES:
        return True
    text = link.text_content()
    if "anchor" in marks and is_glyph(text):
        return True  # GitHub-style: an icon-only <a class="anchor"> before the heading text
    in_heading = any(a.tag in _HEADINGS for a in link.iterancestors())
    # Sphinx's viewcode "[source]" link inside an API entry is navigation, not signature.
    return in_heading and (is_glyph(text) or text.strip() == "[source]")


def collapse_line_breaks(root: Any) -> None:
    """Line breaks in headings and inline code (source wrapping) as the spaces a browser
    shows: trafilatura would keep them, splitting a `#` heading over two lines or turning
    `heapq.nsmallest(1,⏎iterable)` into a fenced block in the middle of a sentence."""
    for element in root.iter(*_ONE_LINE):
        if not any(a.tag == "pre" for a in element.iterancestors()):
            _collapse_spaces(element, strip=element.tag in _HEADING_TAGS)


def flatten_definition_lists(root: Any) -> None:
    """Each `<dl>` becomes paragraphs: the term, then `: ` and the definition's first
    paragraph, then the rest of the definition. Innermost lists first, so an API class's
    methods are already flat when the class entry is rewritten."""
    for dl in reversed(list(root.iter("dl"))):
        _flatten(dl)


def join_definitions(text: str) -> str:
    """The marked `: ` lines moved up against their term lines."""
    return _MARKED.sub("\n", text).replace(DEFINITION_MARK, "")


def _flatten(dl: Any) -> None:
    block = dl.makeelement("div", {_FLATTENED: "1"})
    term = None
    for item in _items(dl):
        if item.tag == "dt":
            if term is not None:
                block.append(term)  # several terms share one definition: all but the last
            term = _term(item)
        elif item.tag == "dd":
            _definition(item, term, block)
            term = None
    if term is not None:
        block.append(term)
    block.tail = dl.tail
    parent = dl.getparent()
    if parent is not None:
        parent.replace(dl, block)


def _items(dl: Any) -> list[Any]:
    """dt and dd children, also those HTML5 allows inside a wrapping div."""
    items: list[Any] = []
    for child in dl:
        if child.tag == "div":
            items.extend(c for c in child if c.tag in ("dt", "dd"))
        elif child.tag in ("dt", "dd"):
            items.append(child)
    return items


def _definition(dd: Any, term: Any, block: Any) -> None:
    lead = _lead(dd)
    if term is not None:
        block.append(term)
    if lead is not None:
        _collapse_spaces(lead)
        if term is not None and lead.text_content().strip():
            lead.text = f"{DEFINITION_MARK}: {lead.text or ''}"
        block.append(lead)
    if dd.text and dd.text.strip():
        paragraph = dd.makeelement("p", {})
        paragraph.text = dd.text
        block.append(paragraph)
    for child in list(dd):
        block.append(child)


def _lead(dd: Any) -> Any:
    """The definition's first paragraph, taken out of the dd: its leading inline content, or
    its first `<p>` (also inside a plain wrapping div)."""
    if (dd.text and dd.text.strip()) or (len(dd) and not _is_block(dd[0])):
        paragraph = dd.makeelement("p", {})
        paragraph.text, dd.text = dd.text, None
        while len(dd) and not _is_block(dd[0]):
            paragraph.append(dd[0])
        return paragraph
    if not len(dd):
        return None
    first = dd[0]
    if first.tag == "p":
        _detach(first)
        return first
    if first.tag == "div" and not first.attrib:
        return _lead(first)
    return None


def _term(dt: Any) -> Any:
    paragraph = dt.makeelement("p", {})
    signature = _signature(dt)
    if signature is not None:
        prefix, code = signature
        paragraph.text = f"{prefix} " if prefix else None
        element = paragraph.makeelement("code", {})
        element.text = code
        paragraph.append(element)
        return paragraph
    if any(_is_block(e) for e in dt.iterdescendants()):
        paragraph.text = dt.text_content()
    else:
        paragraph.text = dt.text
        paragraph.extend(list(dt))
    _collapse_spaces(paragraph)
    return paragraph


def _signature(dt: Any) -> tuple[str, str] | None:
    """(words before the name, name and signature) of a Sphinx API entry: ("class",
    "collections.ChainMap(*maps)"); None for any other term."""
    names = [e for e in dt.iterdescendants() if classes(e) & _NAME_CLASSES]
    if not (classes(dt) & _SIGNATURE_CLASSES or names):
        return None
    full = _flat(dt.text_content())
    if not names:
        return "", _bounded(full)
    prenames = [e for e in dt.iterdescendants() if classes(e) & _PRENAME_CLASSES]
    visible = _flat((prenames[0].text_content() if prenames else "") + names[0].text_content())
    at = full.find(visible) if visible else -1
    if at < 0:
        return "", _bounded(full)
    name = _qualified_name(dt, _flat(names[0].text_content())) or visible
    return full[:at].strip()[:40], _bounded(name + full[at + len(visible) :].rstrip())


def _qualified_name(dt: Any, name: str) -> str | None:
    """The entry's id when it is the dotted name ("collections.ChainMap.new_child"): Sphinx
    prints a method's bare name but ids it with its class and module. C and C++ ids are
    no Python names ("c.PyList_New")."""
    anchor = dt.get("id") or ""
    parent = dt.getparent()
    domain = classes(parent) if parent is not None else set()
    if domain & {"c", "cpp"} or not _DOTTED.match(anchor) or not anchor.endswith(name):
        return None
    return anchor


def _bounded(code: str) -> str:
    code = code.replace("`", "'")
    if len(code) <= MAX_SIGNATURE_CHARS:
        return code
    return code[: MAX_SIGNATURE_CHARS - 1].rstrip() + "…"


def _flat(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _is_block(element: Any) -> bool:
    return not isinstance(element.tag, str) or element.tag in _BLOCKS


def _detach(element: Any) -> None:
    """Remove `element`, leaving its tail text where it was."""
    parent = element.getparent()
    if element.tail and element.tail.strip():
        previous = element.getprevious()
        if previous is None:
            parent.text = (parent.text or "") + element.tail
        else:
            previous.tail = (previous.tail or "") + element.tail
    element.tail = None
    parent.remove(element)


def _collapse_spaces(paragraph: Any, *, strip: bool = True) -> None:
    """One line: source newlines inside a paragraph are spaces to a browser."""
    for element in paragraph.iter():
        if element.text:
            element.text = _SPACES.sub(" ", element.text)
        if element is not paragraph and element.tail:
            element.tail = _SPACES.sub(" ", element.tail)
    if not strip:
        return
    paragraph.text = (paragraph.text or "").lstrip() or None
    last = paragraph[-1] if len(paragraph) else None
    if last is not None and last.tail:
        last.tail = last.tail.rstrip() or None
    elif last is None and paragraph.text:
        paragraph.text = paragraph.text.rstrip() or None


def unwrap_layout_lists(root: Any) -> None:
    """Lists used for layout become plain blocks: an item holding a heading, a preformatted
    block or a table (Javadoc's member details, a manual's examples, each a `<li>`) is no
    bullet. trafilatura writes a list item as one line, so its heading, code and paragraphs
    ran together, and a code block's fence opened in the middle of that line."""
    for item in reversed(list(root.iter("li"))):
        if any(d.tag in _LAYOUT for d in item.iterdescendants()):
            parent = item.getparent()
            item.tag = "div"
            if parent is not None and parent.tag in ("ul", "ol"):
                parent.tag = "div"


def mark_headings(root: Any) -> None:
    """Every h1-h6 with text (outside code and table cells) becomes a paragraph holding its
    level, a running number and its one-line content (inline code stays code) between
    marks; an empty one goes."""
    for number, heading in enumerate(list(root.iter(*_HEADING_TAGS))):
        if any(a.tag in ("pre", "td", "th") for a in heading.iterancestors()):
            continue
        if not _flat(heading.text_content()):
            _detach(heading)
            continue
        paragraph = heading.makeelement("p", {})
        if any(_is_block(d) for d in heading.iterdescendants()):
            paragraph.text = _flat(heading.text_content())
        else:
            paragraph.text = heading.text
            paragraph.extend(list(heading))
            _collapse_spaces(paragraph)
        opening = f"{_HEADING_OPEN}{heading.tag[1]}.{number}\u2992"
        paragraph.text = opening + (paragraph.text or "")
        last = paragraph[-1] if len(paragraph) else None
        if last is None:
            paragraph.text += _HEADING_CLOSE
        else:
            last.tail = (last.tail or "") + _HEADING_CLOSE
        paragraph.tail = heading.tail
        parent = heading.getparent()
        if parent is not None:
            parent.replace(heading, paragraph)


def left_out_page_heading(root: Any, text: str, title: str) -> str:
    """The page's h1 and the paragraphs beside it in its block, as marked text, when the
    extracted `text` left that h1 out: an AsciiDoc manual page's header holds its title and
    the NAME line saying what the command does, outside the frame trafilatura takes. Only
    for the page's one h1 when it says the page's `<title>` (not a site's name over a
    post), and only with a paragraph of its own beside it; lists, tables, link-heavy blocks
    (menus) and what `text` already has are not taken. "" otherwise."""
    marks = [p for p in root.iter("p") if (p.text or "").startswith(_H1_OPEN)]
    if len(marks) != 1 or (marks[0].text or "").split("\u2992", 1)[0] + "\u2992" in text:
        return ""
    first = marks[0]
    heading = _ANY_MARK.sub("", _flat(first.text_content())).casefold()
    title = _flat(title).casefold()
    if not title or not (heading.startswith(title) or title.startswith(heading)):
        return ""
    shown = _flat(text)
    kept: list[str] = []
    for element in [first, *first.itersiblings()][:_MAX_HEADER_BLOCKS]:
        if not isinstance(element.tag, str) or element.tag in ("nav", "ul", "ol", "table"):
            continue
        block = _flat(element.text_content())
        links = sum(len(_flat(a.text_content())) for a in element.iter("a"))
        if block and links * 2 <= len(block) and (element is first or block not in shown):
            kept.append(block)
    paragraphs = [block for block in kept[1:] if not block.startswith(_HEADING_OPEN)]
    return "\n\n".join(kept) if paragraphs else ""


def headings_from_marks(text: str) -> str:
    """Marked headings back as Markdown `#` lines, each a paragraph of its own; a list or
    quote marker in front of one goes, other text in front stays on a line before it."""

    def heading(match: re.Match[str]) -> str:
        lead, title = match.group("lead"), match.group("text").strip()
        before = "" if _LINE_MARKERS.fullmatch(lead) else lead.rstrip() + "\n\n"
        line = f"{'#' * int(match.group('level'))} {title}" if title else ""
        return f"\n{before}{line}\n\n"

    return _ANY_MARK.sub("", _HEADING_MARK.sub(heading, text))


def preformatted_as_code(root: Any) -> list[str]:
    """Synopsis, grammar, signature and other preformatted blocks out of the tree, each
    replaced by a numbered mark; returned, their text as a browser shows it, for
    `code_from_marks`. A `<pre>`'s inline markup (the italic placeholders of a synopsis,
    links) is reduced to its text; a div or paragraph whose class names a synopsis or
    signature is a block of its lines."""
    codes: list[str] = []
    for block in list(root.iter("div", "p")):
        if _is_synopsis(block) and not any(
            a.tag == "pre" or _is_synopsis(a) for a in block.iterancestors()
        ):
            _as_mark(block, _lines_of(block), codes)
    for pre in list(root.iter("pre")):
        # Not in a table cell: a fenced block would break the row it sits in.
        if pre.get(_MARKED_CODE) is None and not any(
            a.tag in ("pre", "td", "th") for a in pre.iterancestors()
        ):
            _as_mark(pre, pre.text_content(), codes)
    return codes


def code_from_marks(text: str, codes: Sequence[str]) -> str:
    """Each marked block's text back in its place as a fenced code block of its own lines."""

    def fenced(match: re.Match[str]) -> str:
        number = int(match.group("number"))
        code = codes[number].strip("\n") if number < len(codes) else ""
        return f"\n```\n{code}\n```\n" if code.strip() else ""

    return _CODE_MARK.sub(fenced, text)


def _is_synopsis(element: Any) -> bool:
    """A div or paragraph classed as a synopsis or signature, holding no `<pre>` of its own
    (which is fenced as it is)."""
    return bool(_SYNOPSIS_CLASS.search(element.get("class") or "")) and not any(
        d.tag == "pre" for d in element.iterdescendants()
    )


def _lines_of(block: Any) -> str:
    """A block's text as a browser breaks it: a line per run of inline content between
    block children and `<br>`s, its spaces collapsed."""
    lines: list[str] = []
    run: list[str] = [block.text or ""]
    for child in block:
        if isinstance(child.tag, str) and (child.tag == "br" or _is_block(child)):
            lines.append(_flat("".join(run)))
            if child.tag != "br":
                lines.append(_lines_of(child))
            run = []
        elif isinstance(child.tag, str):
            run.append(child.text_content())
        run.append(child.tail or "")
    lines.append(_flat("".join(run)))
    return "\n".join(line for line in lines if line)


def inline_divs_as_paragraphs(root: Any) -> None:
    """A div holding text and inline elements only is a paragraph, as a browser shows it.
    trafilatura, collecting paragraphs on a page without an article frame, lost the text
    of such a div up to its first inline child (Javadoc's descriptions: "Adds all of the
    elements ... as if by calling" went, "`addLast(E)` on each one" stayed)."""
    for div in list(root.iter("div")):
        if not any(_is_block(child) for child in div) and div.text_content().strip():
            div.tag = "p"


def _as_mark(element: Any, text: str, codes: list[str]) -> None:
    pre = element.makeelement("pre", {_MARKED_CODE: "1"})
    pre.text = f"\u2991pre{len(codes)}\u2992"
    codes.append(text)
    pre.tail = element.tail
    parent = element.getparent()
    if parent is not None:
        parent.replace(element, pre)
