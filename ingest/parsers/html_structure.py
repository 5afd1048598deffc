"""What documentation generators wrap around their content, undone before extraction.

Why: Sphinx, MkDocs, Docusaurus and friends add a permalink glyph ("¶", "#", "🔗") to every
heading and API entry, and write glossaries and API references as definition lists. Left as
they are, the glyphs end up in titles, headings and chunks, and trafilatura turns a `<dl>` into
a bullet list where term and definition can no longer be told apart. The knowledge extractor
reads a term line followed by a `: ` definition line (knowledge/extraction/structure.py), so
definition lists are rewritten into exactly that shape in the tree, before trafilatura runs.
"""

from __future__ import annotations

import re
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
_ONE_LINE = (*_HEADING_TAGS, "code", "kbd", "samp", "tt")
_FLATTENED = "data-definitions"
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
