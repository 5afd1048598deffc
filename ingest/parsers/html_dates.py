"""The dates an HTML page states about itself: when it was published and last changed.

Read, in this order, from what the page's authors and their tools write for machines:
meta tags (Open Graph's `article:published_time` / `article:modified_time` /
`og:updated_time`, Dublin Core's `dcterms.*` / `DC.date`, Highwire's `citation_*` for
papers, the plain `name=date`, microdata's `itemprop`), then JSON-LD (`datePublished` /
`dateModified`), and only when none of them gives a date, the `<time datetime>` of the
page's main article (its first one: an article's header; a page without `<article>` or
`<main>` gives none, so a sidebar's list of recent posts never dates the page). The first
sane value of each kind counts (ingest/parsers/dates.py). Everything is bounded: the
number of tags read, the JSON-LD blocks and their size, the nodes walked in them.
"""

from __future__ import annotations

import json
from collections import deque
from datetime import datetime
from typing import Any

from ingest.parsers.dates import iso, parse_date

# Meta tag keys (property, name or itemprop, lower-cased) by what they date.
PUBLISHED_META = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "citation_publication_date",
    "citation_date",
    "citation_online_date",
    "dcterms.issued",
    "dcterms.created",
    "dcterms.date",
    "dc.date.issued",
    "dc.date.created",
    "dc.date",
    "date",
)
MODIFIED_META = (
    "article:modified_time",
    "og:updated_time",
    "datemodified",
    "dcterms.modified",
    "dc.date.modified",
)
MAX_META_TAGS = 500
MAX_JSON_LD_BLOCKS = 10
MAX_JSON_LD_CHARS = 200_000
MAX_JSON_LD_NODES = 2_000


def page_dates(root: Any) -> dict[str, str]:
    """{"published": ISO 8601, "modified": ISO 8601}, each when the page states it sanely;
    `root` is the page's lxml tree, scripts still in it (JSON-LD lives in them)."""
    meta = _meta_values(root)
    ld_published, ld_modified = _json_ld_dates(root)
    published = _first([*(meta.get(key) for key in PUBLISHED_META), ld_published])
    modified = _first([*(meta.get(key) for key in MODIFIED_META), ld_modified])
    if published is None and modified is None:
        published = _article_time(root)
    found = {"published": iso(published), "modified": iso(modified)}
    return {key: value for key, value in found.items() if value is not None}


def _first(values: list[str | None]) -> datetime | None:
    for value in values:
        parsed = parse_date(value)
        if parsed is not None:
            return parsed
    return None


def _meta_values(root: Any) -> dict[str, str]:
    """Each meta key's first content, keys lower-cased."""
    found: dict[str, str] = {}
    for count, element in enumerate(root.iter("meta")):
        if count >= MAX_META_TAGS:
            break
        content = element.get("content")
        if not content:
            continue
        for attribute in ("property", "name", "itemprop"):
            key = (element.get(attribute) or "").strip().lower()
            if key and key not in found:
                found[key] = content
    return found


def _json_ld_dates(root: Any) -> tuple[str | None, str | None]:
    """The first datePublished and dateModified strings of the page's JSON-LD blocks."""
    published: str | None = None
    modified: str | None = None
    blocks = 0
    for script in root.iter("script"):
        if "ld+json" not in (script.get("type") or "").lower():
            continue
        blocks += 1
        if blocks > MAX_JSON_LD_BLOCKS:
            break
        text = script.text or ""
        if len(text) > MAX_JSON_LD_CHARS:
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            continue  # a broken block is no date; the page still reads
        for node in _objects(data):
            if published is None and isinstance(node.get("datePublished"), str):
                published = node["datePublished"]
            if modified is None and isinstance(node.get("dateModified"), str):
                modified = node["dateModified"]
            if published is not None and modified is not None:
                return published, modified
    return published, modified


def _objects(data: Any) -> list[dict[str, Any]]:
    """The JSON objects in `data`, breadth first (the page's own object before its
    author's or its publisher's), at most MAX_JSON_LD_NODES values visited."""
    found: list[dict[str, Any]] = []
    queue: deque[Any] = deque([data])
    visited = 0
    while queue and visited < MAX_JSON_LD_NODES:
        value = queue.popleft()
        visited += 1
        if isinstance(value, dict):
            found.append(value)
            queue.extend(v for v in value.values() if isinstance(v, dict | list))
        elif isinstance(value, list):
            queue.extend(v for v in value if isinstance(v, dict | list))
    return found


def _article_time(root: Any) -> datetime | None:
    """The first `<time datetime>` of the page's first `<article>` (or `<main>`)."""
    for container_tag in ("article", "main"):
        container = next(root.iter(container_tag), None)
        if container is None:
            continue
        for time_element in container.iter("time"):
            parsed = parse_date(time_element.get("datetime"))
            if parsed is not None:
                return parsed
        return None
    return None
