"""The crawl's page rows (`CrawlPage`): queue new URLs, record a page's result. Shared by the
create actions (the seed page), seeding and the loop; one URL is one row per crawl, found by
the hash of its normalised spelling."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from ingest.models import CrawlPage, CrawlPageStatus, Source


def url_hash(url: str) -> str:
    """The key of a URL's row: URLs can be longer than an index allows."""
    return hashlib.sha256(url.encode()).hexdigest()


def add_pages(source: Source, pages: Iterable[tuple[str, int, str, Any]]) -> int:
    """Queue new URLs (url, depth, via, sitemap lastmod); URLs already known are ignored."""
    rows: dict[str, CrawlPage] = {}
    for url, depth, via, lastmod in pages:
        rows.setdefault(
            url_hash(url),
            CrawlPage(
                workspace_id=source.workspace_id,
                source=source,
                url=url,
                url_hash=url_hash(url),
                depth=depth,
                via=via,
                sitemap_lastmod=lastmod,
            ),
        )
    created = CrawlPage.objects.bulk_create(rows.values(), ignore_conflicts=True, batch_size=500)
    return len(created)


def finish_page(page: CrawlPage, status: str, reason: str) -> None:
    """Record the page's status and why; only a queued page keeps a time it waits for."""
    page.status = status
    page.reason = reason[:2000]
    if status != CrawlPageStatus.QUEUED:
        page.not_before = None
    page.save()
