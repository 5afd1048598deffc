"""The links a page's main content makes to other pages of its own site.

Why: a documentation page that links "`asyncio.gather`" to another page of the same site
states a reference between two topics; the knowledge extractor reads those anchor texts
(metadata["links"]) as evidence. Navigation says nothing about the page it sits on: menus,
sidebars, breadcrumbs, tables of contents, "next"/"previous"/"up" bars are the same on
every page, and read as references they made a manual's part and chapter titles its
best-connected entities (every page's "up" link named them). Links to other sites name no
topic of this site. Both are left out.

A link is navigation when the page marks it so, in any of the ways generators do: an
HTML5 sectioning element or ARIA role for it (nav, header, footer, aside), a `rel`
(prev, next, up, contents…) or an access key (DocBook's and Publican's navigation bars), a
class or id whose words say navigation or table of contents ("navheader", "docnav",
"sub-nav", "toc", "toctree-wrapper", "breadcrumbs"), or its text alone ("Next", "Up").
Words that also name content boxes ("sidebar" is DocBook's aside box, "header" an
AsciiDoc page's title block) count only for a block made mostly of links.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ingest.parsers.html_structure import is_glyph

MAX_LINKS = 200
MAX_LINK_TEXT = 200
MAX_URL = 2000
MAX_EXAMINED = 5000  # each candidate is looked up in the text: bound the work on huge pages

_NAVIGATION_TAGS = frozenset({"nav", "header", "footer", "aside"})
_NAVIGATION_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "doc-toc"}
)
# rel values of links between the pages of one work (HTML's and DocBook's link types).
_NAVIGATION_RELS = frozenset(
    {
        "prev", "previous", "next", "up", "start", "first", "last", "home", "top", "contents",
        "toc", "index", "glossary", "parent", "chapter", "section", "subsection", "appendix",
    }
)  # fmt: skip
# Words of a class or id that say navigation whatever the block holds: a word that begins
# or ends with "nav" or "toc" ("navbar", "navheader", "docnav", "localtoc") or one of these.
_NAVIGATION_WORDS = frozenset(
    {"breadcrumb", "breadcrumbs", "menu", "pagination", "pager", "sphinxsidebar", "toctree"}
)
# Words that name navigation on some generators and content boxes on others: navigation
# only when the block is mostly links.
_LINK_LIST_WORDS = frozenset(
    {"sidebar", "related", "header", "footer", "banner", "contents", "topbar", "masthead"}
)
_CLASS_WORD = re.compile(r"[a-z]+")
LINK_LIST_SHARE = 0.5  # of a block's words inside links, for _LINK_LIST_WORDS
_NAVIGATION_TEXTS = frozenset(
    {
        "next",
        "previous",
        "prev",
        "index",
        "modules",
        "home",
        "up",
        "top",
        "contents",
        "table of contents",
        "back to top",
        "skip to content",
    }
)
_NOT_WORDS = re.compile(r"[^\w ]+")
_SPACES = re.compile(r"\s+")
_MAIN = ("//main", "//*[@role='main']", "//article", "//body")


def site_links(root: Any, text: str) -> list[dict[str, Any]]:
    """Distinct (text, url) links of the main content whose text the extracted `text` shows,
    relative or to the page's own host (from its canonical URL), at most MAX_LINKS."""
    host = _own_host(root)
    shown = _SPACES.sub(" ", text)
    links: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    link_lists: dict[Any, bool] = {}
    for examined, anchor in enumerate(_content(root).iter("a")):
        if examined >= MAX_EXAMINED:
            break
        link = _link(anchor, host, link_lists)
        if link is None or (link["text"], link["url"]) in seen or link["text"] not in shown:
            continue
        seen.add((link["text"], link["url"]))
        links.append(link)
        if len(links) >= MAX_LINKS:
            break
    return links


def _content(root: Any) -> Any:
    for path in _MAIN:
        found = root.xpath(path)
        if found:
            return found[0]
    return root


def _own_host(root: Any) -> str | None:
    """The page's host, when the page says where it lives (canonical link, og:url, base)."""
    for path in ("//link[@rel='canonical']/@href", "//meta[@property='og:url']/@content"):
        for value in root.xpath(path):
            host = _host(str(value))
            if host:
                return host
    for value in root.xpath("//base/@href"):
        return _host(str(value))
    return None


def _host(url: str) -> str | None:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return parts.hostname if parts.scheme in ("http", "https") else None


def _link(anchor: Any, host: str | None, link_lists: dict[Any, bool]) -> dict[str, Any] | None:
    href = (anchor.get("href") or "").strip()
    text = _SPACES.sub(" ", anchor.text_content()).strip()[:MAX_LINK_TEXT].strip()
    if not href or len(href) > MAX_URL or is_glyph(text) or _navigation(anchor, text, link_lists):
        return None
    try:
        parts = urlsplit(href)
    except ValueError:
        return None
    if parts.scheme or parts.netloc:
        same_host = parts.scheme in ("http", "https", "") and parts.hostname == host
        if host is None or not same_host:
            return None  # another site, or a mailto:/javascript: link
    link: dict[str, Any] = {"text": text, "url": href}
    if parts.fragment:
        link["fragment"] = parts.fragment[:MAX_LINK_TEXT]
    if href.startswith("#"):
        link["same_page"] = True
    return link


def _navigation(anchor: Any, text: str, link_lists: dict[Any, bool]) -> bool:
    """Whether the page marks the link as navigation (see the module's docstring);
    `link_lists` remembers which blocks were found to be mostly links."""
    if _NOT_WORDS.sub("", text).strip().casefold() in _NAVIGATION_TEXTS:
        return True
    rels = set((anchor.get("rel") or "").casefold().split())
    if rels & _NAVIGATION_RELS or anchor.get("accesskey"):
        return True
    for element in (anchor, *anchor.iterancestors()):
        if element.tag in _NAVIGATION_TAGS or (element.get("role") or "") in _NAVIGATION_ROLES:
            return True
        words = _marked_words(element)
        if any(_says_navigation(word) for word in words):
            return True
        if words & _LINK_LIST_WORDS:
            if element not in link_lists:
                link_lists[element] = _mostly_links(element)
            if link_lists[element]:
                return True
    return False


def _marked_words(element: Any) -> set[str]:
    """The words of an element's class and id, lower-cased ("sub-nav" → sub, nav;
    "toctree-wrapper" → toctree, wrapper; "navHeader" → navheader)."""
    marks = f"{element.get('class') or ''} {element.get('id') or ''}".casefold()
    return set(_CLASS_WORD.findall(marks)) if marks.strip() else set()


def _says_navigation(word: str) -> bool:
    marked = word.startswith(("nav", "toc")) or word.endswith(("nav", "toc"))
    return marked or word in _NAVIGATION_WORDS


def _mostly_links(element: Any) -> bool:
    """Whether most of a block's words are link text (a menu, not a box of prose)."""
    words = len(element.text_content().split())
    linked = sum(len(a.text_content().split()) for a in element.iter("a"))
    return words > 0 and linked >= words * LINK_LIST_SHARE
