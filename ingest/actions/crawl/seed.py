"""Seeding: the first step of each round of a crawl, before the loop takes queued pages.
Sitemap mode queues the pages its sitemaps (or the site's robots.txt sitemaps) list;
recursive mode queues what the site's llms.txt lists. The seed page itself is queued when
the crawl is created (`start.py`)."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from ingest.actions.crawl.gone import mark_alive, page_gone
from ingest.actions.crawl.pages import add_pages, finish_page, url_hash
from ingest.actions.crawl.run import CrawlRun
from ingest.crawler.fetch import FetchError
from ingest.crawler.sitemaps import parse_llms_txt, parse_sitemap
from ingest.crawler.urls import normalize_url
from ingest.models import CrawlPage, CrawlPageStatus, PageChange, Source

logger = logging.getLogger(__name__)

_MAX_SITEMAPS = 200


def seed(crawl: CrawlRun) -> None:
    """First step of a round: sitemaps (sitemap mode) or llms.txt (recursive mode)."""
    config = crawl.config
    if config.mode == "sitemap":
        _seed_from_sitemaps(crawl)
    elif config.mode == "recursive" and config.use_llms_txt:
        root = urlsplit(config.url)
        llms = f"{root.scheme}://{root.netloc}/llms.txt"
        try:
            if crawl.robots.allowed(llms):
                result = crawl.fetcher.fetch(llms, before_request=crawl.polite)
                if result.status == 200:
                    urls = [
                        u
                        for u in parse_llms_txt(result.content, base=llms)
                        if crawl.wanted(u) is None
                    ]
                    # The seed is a page already: max_pages counts it.
                    room = config.max_pages - CrawlPage.objects.filter(source=crawl.source).count()
                    add_pages(crawl.source, [(u, 1, "llms", None) for u in urls[: max(0, room)]])
        except FetchError as exc:
            logger.info("No llms.txt for %s: %s", config.url, exc.message)
    Source.objects.filter(pk=crawl.source.pk).update(
        settings={**crawl.source.settings, "seeded_round": crawl.source.settings.get("round", 1)}
    )


def _seed_from_sitemaps(crawl: CrawlRun) -> None:
    """Sitemap mode: the given URL is a sitemap (index), or a site whose robots.txt names them.
    Pages whose <lastmod> is unchanged since they were ingested are not fetched again; pages
    of an earlier round that the sitemaps no longer list are gone (ingest/actions/crawl/
    gone.py) and not fetched either."""
    config = crawl.config
    root = urlsplit(config.url)
    queue = [config.url]
    if root.path in {"", "/"}:
        queue = crawl.robots.sitemaps(config.url) or [f"{root.scheme}://{root.netloc}/sitemap.xml"]
    seen: set[str] = set()
    entries = []
    while queue and len(seen) < _MAX_SITEMAPS:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        try:
            result = crawl.fetcher.fetch(url, before_request=crawl.polite)
        except FetchError as exc:
            logger.warning("Sitemap %s: %s", url, exc.message)
            continue
        if result.status != 200:
            continue
        sitemap = parse_sitemap(result.content, url=result.url)
        queue.extend(child for child in sitemap.children if child not in seen)
        entries.extend(sitemap.entries)
    if not entries and not seen:
        return
    pages = []
    for entry in entries:
        loc = normalize_url(entry.loc)
        if loc and crawl.wanted(loc) is None:
            pages.append((loc, 0, "sitemap", entry.lastmod))
    # The sitemap URL itself is not a page to ingest.
    CrawlPage.objects.filter(
        source=crawl.source, url_hash=url_hash(config.url), via="seed"
    ).delete()
    known = {
        p.url_hash: p
        for p in CrawlPage.objects.filter(
            source=crawl.source, url_hash__in=[url_hash(u) for u, *_ in pages]
        )
    }
    fresh = []
    for url, depth, via, lastmod in pages[: config.max_pages]:
        page = known.get(url_hash(url))
        if page is None:
            fresh.append((url, depth, via, lastmod))
        elif (
            page.status == CrawlPageStatus.QUEUED
            and lastmod is not None
            and page.sitemap_lastmod == lastmod
            and page.document_id is not None
        ):
            mark_alive(page)
            page.run_change = PageChange.UNCHANGED
            finish_page(
                page, CrawlPageStatus.INGESTED, "unchanged according to the sitemap's lastmod"
            )
        elif lastmod is not None and page.sitemap_lastmod != lastmod:
            CrawlPage.objects.filter(pk=page.pk).update(sitemap_lastmod=lastmod)
    add_pages(crawl.source, fresh)
    if entries:
        _unlisted_pages_gone(crawl, listed={url_hash(url) for url, *_ in pages})


def _unlisted_pages_gone(crawl: CrawlRun, *, listed: set[str]) -> None:
    """Pages an earlier round took from the sitemaps that they list no more. Only called
    when the sitemaps were read and list something: a sitemap that failed to load says
    nothing about its pages."""
    queued = CrawlPage.objects.filter(
        source=crawl.source, via="sitemap", status=CrawlPageStatus.QUEUED
    ).values_list("pk", "url_hash")
    unlisted = [pk for pk, key in queued if key not in listed]
    for page in CrawlPage.objects.filter(pk__in=unlisted).order_by("pk"):
        page_gone(page, status=CrawlPageStatus.SKIPPED, reason="no longer listed in the sitemap")
