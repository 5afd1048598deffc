"""Outgoing links of an HTML page, as the crawl frontier needs them.

A page's links are where a recursive crawl goes next, so this decides what the crawler
follows: only links a person could click (`<a>`/`<area>` hrefs over http(s)), resolved the
way a browser would (honouring `<base href>`), minus what the author asked crawlers not to
follow (`rel="nofollow"`, `<meta name="robots" content="nofollow">`). Real-world HTML is
broken and mis-encoded; lxml's HTML parser copes, and anything it cannot parse has no links.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urljoin

import lxml.html  # type: ignore[import-untyped]
from lxml import etree

from ingest.crawler.urls import normalize_url

_SKIPPED_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "about:", "blob:", "file:")
_ROBOTS_NOFOLLOW = frozenset({"nofollow", "none"})


@dataclass
class PageLinks:
    links: list[str] = field(default_factory=list)
    canonical: str | None = None
    nofollow: bool = False  # the page asks crawlers not to follow any of its links


def extract_links(html: bytes, *, base_url: str, encoding: str | None = None) -> PageLinks:
    """Normalised, deduplicated links of the page at `base_url`, in document order.

    `encoding` is the charset from the response's Content-Type, when there is one; without
    it UTF-8 is assumed if the bytes decode as UTF-8, else the page's `<meta charset>`.
    """
    root = _parse(html, encoding)
    if root is None:
        return PageLinks()
    base = base_url
    for href in root.xpath("//base/@href"):
        candidate = urljoin(base_url, str(href).strip())
        if normalize_url(candidate) is not None:
            base = candidate
        break
    canonical = None
    nofollow = False
    for element in root.iter("link", "meta"):
        if element.tag == "link" and canonical is None and "canonical" in _tokens(element, "rel"):
            href = (element.get("href") or "").strip()
            canonical = normalize_url(href, base=base) if href else None
        elif element.tag == "meta" and (element.get("name") or "").strip().lower() == "robots":
            content = (element.get("content") or "").lower().replace(",", " ").split()
            nofollow = nofollow or bool(_ROBOTS_NOFOLLOW.intersection(content))
    if nofollow:
        return PageLinks(canonical=canonical, nofollow=True)
    links: dict[str, None] = {}
    for element in root.iter("a", "area"):
        href = (element.get("href") or "").strip()
        if not href or href.startswith("#") or href.lower().startswith(_SKIPPED_SCHEMES):
            continue
        if "nofollow" in _tokens(element, "rel"):
            continue
        url = normalize_url(href, base=base)
        if url is not None:
            links.setdefault(url)
    return PageLinks(links=list(links), canonical=canonical, nofollow=False)


def _tokens(element: etree._Element, attribute: str) -> list[str]:
    return (element.get(attribute) or "").lower().split()


def _parse(html: bytes, encoding: str | None) -> etree._Element | None:
    if not html or not html.strip():
        return None
    if encoding is None:
        try:
            html.decode("utf-8")
        except UnicodeDecodeError:
            pass  # let lxml read <meta charset>, falling back to Latin-1
        else:
            encoding = "utf-8"
    for attempt in (encoding, None) if encoding else (None,):
        try:
            parser = lxml.html.HTMLParser(encoding=attempt, remove_comments=True)
            return lxml.html.document_fromstring(html, parser=parser)
        except LookupError:  # a charset name lxml does not know: sniff instead
            continue
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            return None
    return None
