"""Sitemaps and llms.txt: the lists of pages a site offers to crawlers.

Sitemaps come from strangers, so parsing them is defensive: gzip is inflated with a cap
(a 50 KB file can inflate to gigabytes), XML is parsed without entities or network access
(no XXE, no billion laughs), and garbage yields an empty result instead of an exception.
Besides `<urlset>`/`<sitemapindex>` the formats search engines accept are read too: plain
text (one URL per line), RSS and Atom.
"""

from __future__ import annotations

import email.utils
import re
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from lxml import etree  # type: ignore[import-untyped]

from ingest.crawler.urls import normalize_url

MAX_DECOMPRESSED_BYTES = 50 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_W3C_DATETIME = re.compile(
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?)?)?)?"
)
_URL_LINE = re.compile(r"https?://\S+", re.IGNORECASE)
# A Markdown link `[title](url "optional title")` or a bare URL, whichever comes first.
_LLMS_LINK = re.compile(
    r"\[[^\]]*\]\(\s*<?(?P<target>[^)\s>]+)>?(?:\s+[\"'][^)]*[\"'])?\s*\)"
    r"|(?P<bare>https?://[^\s<>()\[\]\"'`]+)",
    re.IGNORECASE,
)


@dataclass
class SitemapEntry:
    loc: str
    lastmod: datetime | None = None


@dataclass
class Sitemap:
    entries: list[SitemapEntry] = field(default_factory=list)
    children: list[str] = field(default_factory=list)  # sitemaps listed by a sitemap index


class _TooLarge(Exception):
    pass


def parse_sitemap(content: bytes, *, url: str, max_entries: int = 50_000) -> Sitemap:
    """The pages (or child sitemaps) a sitemap lists, normalised and resolved against `url`.

    Never raises for bad input: undecodable, oversized or unrecognised content gives an
    empty `Sitemap`. At most `max_entries` entries and as many children are returned.
    """
    try:
        data = _gunzip(content) if content[:2] == _GZIP_MAGIC else content
    except (_TooLarge, zlib.error, EOFError):
        return Sitemap()
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        result = _parse_xml(data, url=url, max_entries=max_entries)
    else:
        result = _parse_text(data, url=url, max_entries=max_entries)
    unique: dict[str, SitemapEntry] = {}
    for entry in result.entries:
        unique.setdefault(entry.loc, entry)  # the first mention wins, in place
    result.entries = list(unique.values())
    return result


def parse_llms_txt(content: bytes, *, base: str) -> list[str]:
    """The URLs an `/llms.txt` file links to (Markdown links and bare URLs), in order."""
    text = content.decode("utf-8", errors="replace")
    urls: dict[str, None] = {}
    for match in _LLMS_LINK.finditer(text):
        target = match.group("target") or match.group("bare").rstrip(".,;:!?")
        if target.startswith("#"):
            continue
        url = normalize_url(target, base=base)
        if url:
            urls.setdefault(url)
    return list(urls)


def parse_w3c_datetime(value: str) -> datetime | None:
    """A sitemap `lastmod` (W3C datetime: `2024`, `2024-05`, `2024-05-06`,
    `2024-05-06T07:08Z`, `2024-05-06T07:08:09.5+02:00`) as an aware datetime; UTC when the
    value names no zone. None when it is not a date."""
    match = _W3C_DATETIME.fullmatch(value.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        parsed = datetime(
            int(year),
            int(month or 1),
            int(day or 1),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0")[:6].ljust(6, "0")),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset_minutes = sign * (int(digits[:2]) * 60 + int(digits[2:]))
        parsed = _shift(parsed, -offset_minutes)
    return parsed


def _shift(value: datetime, minutes: int) -> datetime:
    try:
        return value + timedelta(minutes=minutes)
    except OverflowError:
        return value


def _gunzip(content: bytes) -> bytes:
    """Inflate (possibly multi-member) gzip, refusing more than MAX_DECOMPRESSED_BYTES."""
    out: list[bytes] = []
    size = 0
    data = content
    while data[:2] == _GZIP_MAGIC:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while data:
            chunk = inflater.decompress(data, MAX_DECOMPRESSED_BYTES + 1 - size)
            size += len(chunk)
            if size > MAX_DECOMPRESSED_BYTES:
                raise _TooLarge
            out.append(chunk)
            data = inflater.unconsumed_tail
            if inflater.eof:
                break
        if not inflater.eof:
            raise EOFError("truncated gzip data")
        data = inflater.unused_data
    return b"".join(out)


def _parse_xml(data: bytes, *, url: str, max_entries: int) -> Sitemap:
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        recover=True,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        root = etree.fromstring(data, parser=parser)
    except (etree.XMLSyntaxError, ValueError):
        return Sitemap()
    if root is None:
        return Sitemap()
    kind = _local(root)
    result = Sitemap()
    if kind == "sitemapindex":
        for node in _children(root, "sitemap"):
            loc = _resolve(_child_text(node, "loc"), url)
            if loc and loc not in result.children:
                result.children.append(loc)
                if len(result.children) >= max_entries:
                    break
    elif kind == "urlset":
        for node in _children(root, "url"):
            _add(result, _child_text(node, "loc"), _child_text(node, "lastmod"), url=url)
            if len(result.entries) >= max_entries:
                break
    elif kind == "rss":
        for node in root.iter():
            if _local(node) == "item":
                modified = _child_text(node, "pubDate")
                _add(result, _child_text(node, "link"), None, url=url, rfc822=modified)
                if len(result.entries) >= max_entries:
                    break
    elif kind == "feed":
        for node in _children(root, "entry"):
            link = next(
                (
                    child.get("href")
                    for child in node
                    if _local(child) == "link" and child.get("rel", "alternate") == "alternate"
                ),
                None,
            )
            _add(result, link, _child_text(node, "updated"), url=url)
            if len(result.entries) >= max_entries:
                break
    return result


def _parse_text(data: bytes, *, url: str, max_entries: int) -> Sitemap:
    result = Sitemap()
    for line in data.decode("utf-8", errors="replace").splitlines():
        match = _URL_LINE.match(line.strip())
        if match:
            _add(result, match.group(0), None, url=url)
            if len(result.entries) >= max_entries:
                break
    return result


def _add(
    result: Sitemap,
    loc: str | None,
    lastmod: str | None,
    *,
    url: str,
    rfc822: str | None = None,
) -> None:
    resolved = _resolve(loc, url)
    if not resolved:
        return
    modified = parse_w3c_datetime(lastmod) if lastmod else None
    if modified is None and rfc822:
        modified = _parse_rfc822(rfc822)
    result.entries.append(SitemapEntry(loc=resolved, lastmod=modified))


def _parse_rfc822(value: str) -> datetime | None:
    try:
        parsed = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _resolve(loc: str | None, base: str) -> str | None:
    return normalize_url(loc.strip(), base=base) if loc and loc.strip() else None


def _local(node: etree._Element) -> str:
    tag = node.tag
    if not isinstance(tag, str):  # comments, processing instructions, entities
        return ""
    return tag.rsplit("}", 1)[-1]


def _children(root: etree._Element, name: str) -> list[etree._Element]:
    return [child for child in root if _local(child) == name]


def _child_text(node: etree._Element, name: str) -> str | None:
    for child in node:
        if _local(child) == name:
            return _text(child).strip() or None
    return None


def _text(node: etree._Element) -> str:
    """The element's text without entity references: with `resolve_entities=False` they stay
    in the tree as nodes, and neither their expansion nor their `&name;` spelling belongs in
    a URL."""
    parts = [node.text or ""]
    for child in node:
        if isinstance(child.tag, str):
            parts.append(_text(child))
        parts.append(child.tail or "")
    return "".join(parts)
