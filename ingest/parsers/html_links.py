"""The links a page's main content makes to other pages of its own site.

Why: a documentation page that links "`asyncio.gather`" to another page of the same site
states a reference between two topics; the knowledge extractor reads those anchor texts
(metadata["links"]) as evidence. Menus, sidebars, breadcrumbs and "next"/"previous" links
are on every page and say nothing about this one, and links to other sites name no topic of
this site, so both are left out.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ingest.parsers.html_structure import classes, is_glyph

MAX_LINKS = 200
MAX_LINK_TEXT = 200
MAX_URL = 2000
MAX_EXAMINED = 5000  # each candidate is looked up in the text: bound the work on huge pages

_NAVIGATION_TAGS = frozenset({"nav", "header", "footer", "aside"})
_NAVIGATION_CLASSES = frozenset(
    {"sphinxsidebar", "related", "breadcrumb", "breadcrumbs", "navigation", "navbar", "menu"}
)
_NAVIGATION_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary"})
_NAVIGATION_TEXTS = frozenset(
    {
        "next",
        "previous",
        "prev",
        "index",
        "modules",
        "home",
        "top",
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
    for examined, anchor in enumerate(_content(root).iter("a")):
        if examined >= MAX_EXAMINED:
            break
        link = _link(anchor, host)
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


def _link(anchor: Any, host: str | None) -> dict[str, Any] | None:
    href = (anchor.get("href") or "").strip()
    text = _SPACES.sub(" ", anchor.text_content()).strip()[:MAX_LINK_TEXT].strip()
    if not href or len(href) > MAX_URL or is_glyph(text) or _navigation(anchor, text):
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


def _navigation(anchor: Any, text: str) -> bool:
    if _NOT_WORDS.sub("", text).strip().casefold() in _NAVIGATION_TEXTS:
        return True
    for element in (anchor, *anchor.iterancestors()):
        if element.tag in _NAVIGATION_TAGS or (element.get("role") or "") in _NAVIGATION_ROLES:
            return True
        if classes(element) & _NAVIGATION_CLASSES:
            return True
    return False
