"""What one run of the crawl loop needs, built once per run and shared by seeding and the
loop: the crawl's settings, the fetcher, robots.txt and the per-host rate limiter."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.conf import settings

from ingest.actions.crawl.request import CrawlSettings
from ingest.crawler.fetch import Fetcher, FetchResult
from ingest.crawler.ratelimit import HostRateLimiter
from ingest.crawler.robots import RobotsCache
from ingest.crawler.urls import in_scope
from ingest.models import Source


@dataclass(frozen=True, slots=True)
class PoliteFetcher:
    """The fetcher as robots.txt sees it: its request to a host waits its turn too."""

    fetcher: Fetcher
    limiter: HostRateLimiter

    def fetch(self, url: str) -> FetchResult:
        # Rate only: asking for the Crawl-delay here would wait for this very robots.txt.
        return self.fetcher.fetch(url, before_request=lambda u: self.limiter.wait(_host(u)))


def _host(url: str) -> str:
    return urlsplit(url).netloc


@dataclass
class CrawlRun:
    """What one run of the loop needs, built once per run."""

    source: Source
    config: CrawlSettings
    fetcher: Fetcher
    robots: RobotsCache
    limiter: HostRateLimiter
    allow: list[re.Pattern[str]] = field(default_factory=list)
    deny: list[re.Pattern[str]] = field(default_factory=list)
    new_documents: list[int] = field(default_factory=list)
    # Set when the caller processes documents itself (a command with no worker running).
    process: Callable[[list[int]], object] | None = None

    def polite(self, url: str) -> None:
        """Wait for this host's turn (rate limit and robots.txt Crawl-delay)."""
        self.limiter.wait(_host(url), min_interval=self.robots.crawl_delay(url))

    def wanted(self, url: str) -> str | None:
        """Why `url` is not crawled, or None if it is wanted."""
        if len(url) > settings.CRAWL_MAX_URL_LENGTH:
            return "URL too long (crawl trap?)"
        if not in_scope(
            url, root=self.config.url, include_subdomains=self.config.include_subdomains
        ):
            return "outside the site"
        if self.allow and not any(p.search(url) for p in self.allow):
            return "not matched by an allow pattern"
        if any(p.search(url) for p in self.deny):
            return "matched by a deny pattern"
        return None
