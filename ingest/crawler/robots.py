"""robots.txt, fetched once per site and shared by all crawl threads.

Site owners say through robots.txt what crawlers may read and how fast; Graphloom honours
it. The status-code rules follow the conventions of the big crawlers (RFC 9309): a missing
file allows everything, a forbidden one forbids everything, and a server error forbids
everything *for now* — an outage must not turn into a licence to crawl.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

from protego import Protego

from ingest.crawler.fetch import FetchError, FetchResult
from ingest.crawler.urls import normalize_url

# Google reads the first 500 KiB of a robots.txt; rules beyond that are ignored.
MAX_ROBOTS_BYTES = 500 * 1024


@dataclass(frozen=True)
class _Rules:
    expires: float
    parser: Protego | None = None
    allow_all: bool = False
    why: str = ""  # for people debugging a crawl: what we saw at /robots.txt
    sitemaps: list[str] = field(default_factory=list)
    error: FetchError | None = None  # why robots.txt could not be read at all


def robots_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against: `GraphloomBot` for
    `GraphloomBot/0.1 (+https://github.com/...)`. Matching the whole header would let a
    group for `github` apply to us because of the URL in the comment."""
    return (user_agent.split() or [""])[0].split("/")[0] or user_agent


class RobotsFetcher(Protocol):
    """What RobotsCache needs: a Fetcher, or a wrapper that adds politeness to one."""

    def fetch(self, url: str) -> FetchResult: ...


class RobotsCache:
    """Answers robots.txt questions for any URL, fetching each site's file once.

    Files are kept for `ttl` seconds; answers derived from failures (5xx, 429, network
    errors) only for `error_ttl` seconds, after which the next question fetches again.
    `reset(host)` forgets a host immediately. `clock` tells the time those ages are
    measured in (monotonic; tests pass a fake one and move it).
    """

    def __init__(
        self,
        fetcher: RobotsFetcher,
        *,
        user_agent: str,
        ttl: float = 24 * 3600,
        error_ttl: float = 60,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fetcher = fetcher
        self.user_agent = user_agent
        self.token = robots_token(user_agent)
        self.ttl = ttl
        self.error_ttl = error_ttl
        self._clock = clock
        self._rules: dict[str, _Rules] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def allowed(self, url: str) -> bool:
        """Whether robots.txt lets us fetch `url` (False for URLs we cannot even parse)."""
        rules = self._rules_for(url)
        if rules is None:
            return False
        if rules.parser is None:
            return rules.allow_all
        return rules.parser.can_fetch(url, self.token)

    def crawl_delay(self, url: str) -> float | None:
        """Seconds to leave between requests to this site, from `Crawl-delay` or
        `Request-rate`, whichever is slower; None when robots.txt says nothing."""
        rules = self._rules_for(url)
        if rules is None or rules.parser is None:
            return None
        delays = []
        delay = rules.parser.crawl_delay(self.token)
        if delay is not None and delay >= 0:
            delays.append(float(delay))
        rate = rules.parser.request_rate(self.token)
        if rate is not None and rate.requests > 0:
            delays.append(rate.seconds / rate.requests)
        return max(delays) if delays else None

    def sitemaps(self, url: str) -> list[str]:
        """Sitemap URLs announced by the site's robots.txt, in file order."""
        rules = self._rules_for(url)
        return list(rules.sitemaps) if rules is not None else []

    def explain(self, url: str) -> str:
        """What the cached robots.txt answer for this site is based on, for logs."""
        rules = self._rules_for(url)
        return rules.why if rules is not None else "not an http(s) URL"

    def fetch_error(self, url: str) -> FetchError | None:
        """The error that kept robots.txt of this site from being read (then nothing is
        allowed), e.g. the SSRF guard refusing the host: the real reason a page was not
        crawled, which "disallowed by robots.txt" would hide."""
        rules = self._rules_for(url)
        return rules.error if rules is not None else None

    def reset(self, host: str | None = None) -> None:
        """Forget the cached file of `host` (a hostname or any URL on the site), or of all."""
        with self._lock:
            if host is None:
                self._rules.clear()
                return
            name = urlsplit(host).hostname if "://" in host else host.lower()
            for key in [k for k in self._rules if urlsplit(k).hostname == name]:
                del self._rules[key]

    def _rules_for(self, url: str) -> _Rules | None:
        origin = _origin(url)
        if origin is None:
            return None
        with self._lock:
            rules = self._rules.get(origin)
            if rules is not None and rules.expires > self._clock():
                return rules
            origin_lock = self._locks.setdefault(origin, threading.Lock())
        # One fetch per site: other threads asking about it wait here for its answer
        # instead of fetching it again; threads asking about other sites are not held.
        with origin_lock:
            with self._lock:
                rules = self._rules.get(origin)
                if rules is not None and rules.expires > self._clock():
                    return rules
            rules = self._load(origin)
            with self._lock:
                self._rules[origin] = rules
            return rules

    def _load(self, origin: str) -> _Rules:
        robots_url = f"{origin}/robots.txt"
        now = self._clock()
        try:
            result = self.fetcher.fetch(robots_url)
        except FetchError as exc:
            return _Rules(
                now + self.error_ttl, why=f"{robots_url} failed, allowing nothing: {exc}", error=exc
            )
        status = result.status
        if 200 <= status < 300:
            text = result.content[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace")
            try:
                parser = Protego.parse(text.removeprefix("\ufeff"))
            except Exception as exc:  # a parser bug must not stop the crawl: no rules read
                return _Rules(now + self.ttl, allow_all=True, why=f"unparsable ({exc})")
            sitemaps = [
                s for s in (normalize_url(m, base=result.url) for m in parser.sitemaps) if s
            ]
            return _Rules(now + self.ttl, parser=parser, why=f"{status}", sitemaps=sitemaps)
        if status in (401, 403):
            return _Rules(now + self.ttl, why=f"{status}: allowing nothing")
        if status == 429:
            return _Rules(now + self.error_ttl, why="429: allowing nothing for now")
        if 400 <= status < 500:
            return _Rules(now + self.ttl, allow_all=True, why=f"{status}: allowing everything")
        return _Rules(now + self.error_ttl, why=f"{status}: allowing nothing for now")


def _origin(url: str) -> str | None:
    normalized = normalize_url(url)
    if normalized is None:
        return None
    parts = urlsplit(normalized)
    return f"{parts.scheme}://{parts.netloc}"
