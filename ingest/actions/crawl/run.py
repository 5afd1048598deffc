"""What one run of the crawl loop needs, built once per run and shared by seeding and the
loop: the crawl's settings and policy, the fetcher, robots.txt and the per-host rate limiter."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.conf import settings

from ingest.actions.crawl.request import CrawlSettings
from ingest.crawler.fetch import Fetcher, FetchResult
from ingest.crawler.policy import CrawlPolicy, Scope
from ingest.crawler.ratelimit import HostRateLimiter
from ingest.crawler.render import Renderer, chromium_executable
from ingest.crawler.robots import RobotsCache
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
    policy: CrawlPolicy
    new_documents: list[int] = field(default_factory=list)
    # Set when the caller processes documents itself (a command with no worker running).
    process: Callable[[list[int]], object] | None = None
    # A crawl with `render`: loads pages that need JavaScript in headless Chromium.
    renderer: Renderer | None = None

    def polite(self, url: str) -> None:
        """Wait for this host's turn (rate limit and robots.txt Crawl-delay)."""
        self.limiter.wait(_host(url), min_interval=self.robots.crawl_delay(url))

    def wanted(self, url: str) -> str | None:
        """Why `url` is not crawled, or None if it is wanted."""
        return self.policy.scope.excluded(url)


def crawl_policy(config: CrawlSettings) -> CrawlPolicy:
    """The crawl's decisions (ingest/crawler/policy.py): its own settings, and the CRAWL_*
    limits every crawl shares."""
    return CrawlPolicy(
        scope=Scope.of(
            root=config.url,
            max_url_length=settings.CRAWL_MAX_URL_LENGTH,
            include_subdomains=config.include_subdomains,
            allow=config.allow,
            deny=config.deny,
        ),
        max_retry_after=settings.CRAWL_MAX_RETRY_AFTER_SECONDS,
        max_query_variants=settings.CRAWL_MAX_QUERY_VARIANTS,
        recursive=config.mode == "recursive",
        max_depth=config.max_depth,
    )


def crawl_renderer(crawl: CrawlRun) -> Renderer:
    """The renderer of a crawl with `render`: its pages' requests go through the crawl's
    own fetcher (SSRF guard, size limit), wait for the host's turn like every other
    request, and ask robots.txt first (ingest/crawler/render.py)."""

    def fetch(url: str, check_hop: Callable[[str], object]) -> FetchResult:
        def before_request(hop: str) -> None:
            check_hop(hop)
            crawl.polite(hop)

        return crawl.fetcher.fetch(url, before_request=before_request)

    return Renderer(
        # One gone since the crawl was asked for fails at start: the pages keep their HTML.
        executable=chromium_executable(settings.CRAWL_CHROMIUM)
        or settings.CRAWL_CHROMIUM
        or "chromium",
        fetch=fetch,
        allowed=crawl.robots.allowed,
        timeout=settings.CRAWL_RENDER_TIMEOUT_SECONDS,
        max_bytes=settings.CRAWL_RENDER_MAX_BYTES,
    )
