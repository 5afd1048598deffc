"""The crawl's page decisions, as a table: what a fetched page's answer means for the page.

The crawl loop (`ingest/actions/crawl/loop.py`) fetches a page, describes what came back as
a `PageFetch` (plain values: the fetch result or error, the page's URL, depth and attempts)
and asks `CrawlPolicy.decide`, which walks `LADDER` from the top; the first rung whose
condition holds gives the `Outcome`. The loop only performs it: it writes the row, queues
URLs, stores the document. The order of the rungs is itself a decision (a 404 reached
through a redirect out of scope is "HTTP 404", not "outside the site"), which is why it is
written down as one ordered table rather than spread over an if-ladder that also writes.

Scope (which URLs belong to the crawl) and the query-variant cap (how many `?…` spellings
of one path a crawl may queue) are decided here too; the counts they need come from the
loop. Nothing here knows Django or a row (an import contract keeps it so), so every rung
is tested with plain values (tests/ingest/crawler/test_policy.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cached_property
from urllib.parse import urlsplit

from ingest.crawler.fetch import FetchError, FetchResult
from ingest.crawler.links import PageLinks, extract_links
from ingest.crawler.urls import in_scope, normalize_url, path_key

# Media types routed to the parsers; everything else is skipped with its type as the reason.
INGESTIBLE_TYPES = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "text/plain",
        "text/markdown",
        "text/x-markdown",
        "application/json",
        "application/x-ndjson",
        "application/jsonl",
    }
)
# Pages whose links (and canonical URL) are read.
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# The server is busy: ask again later rather than record a failure.
RETRY_STATUSES = frozenset({429, 503})
# The page no longer exists: what was ingested from it goes (unless gone pages are kept).
GONE_STATUSES = frozenset({404, 410})
# Requests per page and round, the first included, before a busy answer counts as final.
MAX_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class Scope:
    """Which URLs a crawl takes: its site (with its subdomains, if asked), its allow and deny
    patterns, and a length bound (endlessly growing URLs are a crawl trap)."""

    root: str
    max_url_length: int
    include_subdomains: bool = False
    allow: tuple[re.Pattern[str], ...] = ()
    deny: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def of(
        cls,
        *,
        root: str,
        max_url_length: int,
        include_subdomains: bool = False,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
    ) -> Scope:
        """The scope of a crawl from its settings (patterns as the person wrote them)."""
        return cls(
            root=root,
            max_url_length=max_url_length,
            include_subdomains=include_subdomains,
            allow=tuple(re.compile(p) for p in allow),
            deny=tuple(re.compile(p) for p in deny),
        )

    def excluded(self, url: str) -> str | None:
        """Why `url` is not crawled, or None if it is wanted."""
        if len(url) > self.max_url_length:
            return "URL too long (crawl trap?)"
        if not in_scope(url, root=self.root, include_subdomains=self.include_subdomains):
            return "outside the site"
        if self.allow and not any(p.search(url) for p in self.allow):
            return "not matched by an allow pattern"
        if any(p.search(url) for p in self.deny):
            return "matched by a deny pattern"
        return None


@dataclass(frozen=True)
class PageFetch:
    """One page's request as the ladder reads it: plain values, no row, no database.

    Exactly one of `robots_disallowed`, `error` and `result` says what happened. The one
    fact the loop looks up in the database is `final_known`.
    """

    url: str  # the page's (normalised) URL
    depth: int = 0
    attempts: int = 1  # requests for this page in this round, this one included
    result: FetchResult | None = None
    error: FetchError | None = None
    robots_disallowed: bool = False
    final_known: bool = False  # the URL it redirected to is another page of this crawl

    @property
    def response(self) -> FetchResult:
        """The answer, for the rungs below the ones that handle having none."""
        assert self.result is not None, "a page fetch without a result, error or robots refusal"
        return self.result

    @cached_property
    def final(self) -> str:
        """The normalised URL the answer came from: the page's own unless redirected."""
        if self.result is None:
            return self.url
        return normalize_url(self.result.url) or self.url

    @property
    def redirected(self) -> bool:
        """The answer came from another URL than the page's."""
        return self.final != self.url

    @cached_property
    def links(self) -> PageLinks:
        """The page's links and canonical URL (HTML only; parsed once, when first asked)."""
        if self.result is None or self.result.content_type not in HTML_TYPES:
            return PageLinks()
        return extract_links(self.result.content, base_url=self.result.url)


class Action(StrEnum):
    """What the loop does with the page."""

    RETRY = "retry"  # queue it again after `delay` seconds, and hold its host back as long
    KEEP = "keep"  # not modified: the page and its document stay as they are
    GONE = "gone"  # 404/410: the page failed; its document goes unless gone pages are kept
    FAIL = "fail"  # record why it failed
    SKIP = "skip"  # not ingested, for `reason`
    CANONICAL = "canonical"  # queue `url`, the page's canonical URL, instead of this page
    INGEST = "ingest"  # store the content under `url`; queue its links when `discover`


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happens to a fetched page, with the texts and values the loop writes."""

    action: Action
    reason: str = ""  # the page's reason, as people read it in the sources screen
    delay: float = 0.0  # RETRY: seconds until the page is due again
    url: str = ""  # CANONICAL: the URL to queue; INGEST: the URL to store the content under
    discover: bool = False  # INGEST: the page's links are candidates for the frontier
    # The answer is usable: its ETag, Last-Modified and content type are recorded on the
    # page (so the next round asks conditionally).
    validators: bool = False
    rung: str = ""  # the name of the rung that decided


@dataclass(frozen=True, slots=True)
class Rung:
    """One line of the ladder: when `applies`, `outcome` says what happens to the page."""

    name: str
    applies: Callable[[PageFetch, CrawlPolicy], bool]
    outcome: Callable[[PageFetch, CrawlPolicy], Outcome]


@dataclass(frozen=True, slots=True)
class CrawlPolicy:
    """One crawl's decisions: its scope, its limits, and the ladder for each page fetched."""

    scope: Scope
    max_retry_after: float  # seconds; a longer Retry-After is cut to this
    max_query_variants: int  # query spellings of one path a crawl queues at most
    recursive: bool = False  # links are followed (recursive mode)
    max_depth: int = 0  # ... from pages less deep than this
    max_attempts: int = MAX_ATTEMPTS

    def decide(self, fetch: PageFetch) -> Outcome:
        """The outcome of the first rung of `LADDER` that applies to `fetch`."""
        for rung in LADDER:
            if rung.applies(fetch, self):
                return replace(rung.outcome(fetch, self), rung=rung.name)
        raise AssertionError("the ladder's last rung applies to every fetch")

    def canonical(self, fetch: PageFetch) -> str | None:
        """The page's canonical URL when it names another page of the crawl."""
        canonical = fetch.links.canonical
        if canonical and canonical not in {fetch.url, fetch.final}:
            return canonical if self.scope.excluded(canonical) is None else None
        return None

    def discovers(self, fetch: PageFetch) -> bool:
        """Whether the page's links are followed: recursive mode, an HTML page, depth left."""
        return (
            self.recursive
            and fetch.depth < self.max_depth
            and fetch.response.content_type in HTML_TYPES
        )

    def links_to_queue(
        self, links: Iterable[str], *, queued_variants: Callable[[str], int]
    ) -> list[str]:
        """The links the crawl takes, in order: in scope, and at most `max_query_variants`
        URLs with a query per path (so `/calendar?month=…` cannot spawn pages without end).
        `queued_variants(key)` counts the crawl's pages under a path key (`path_key`); it is
        asked once per key, and only for links in scope."""
        taken: list[str] = []
        variants: dict[str, int] = {}
        for url in links:
            if self.scope.excluded(url) is not None:
                continue
            if urlsplit(url).query:
                key = path_key(url)
                if key not in variants:
                    variants[key] = queued_variants(key)
                if variants[key] >= self.max_query_variants:
                    continue
                variants[key] += 1
            taken.append(url)
        return taken


def _retry(fetch: PageFetch, policy: CrawlPolicy) -> Outcome:
    """Wait as long as the server asks (or back off exponentially), within the bound."""
    status = fetch.response.status
    delay = min(fetch.response.retry_after or 2.0**fetch.attempts, policy.max_retry_after)
    return Outcome(Action.RETRY, f"HTTP {status}; retrying after {delay:g} s", delay=delay)


def _fetch_failed(fetch: PageFetch, policy: CrawlPolicy) -> Outcome:
    assert fetch.error is not None
    return Outcome(Action.FAIL, f"{fetch.error.reason}: {fetch.error.message}")


def _use_canonical(fetch: PageFetch, policy: CrawlPolicy) -> Outcome:
    canonical = policy.canonical(fetch)
    assert canonical is not None
    return Outcome(
        Action.CANONICAL, f"canonical URL is {canonical}", url=canonical, validators=True
    )


def _skip_usable(reason: str) -> Outcome:
    return Outcome(Action.SKIP, reason, validators=True)


# Top to bottom; the first rung that applies decides. Rungs below "fetch error" may read
# `fetch.response`; the last one applies to everything that reaches it.
LADDER: tuple[Rung, ...] = (
    Rung(
        "robots",
        lambda f, p: f.robots_disallowed,
        lambda f, p: Outcome(Action.SKIP, "disallowed by robots.txt"),
    ),
    Rung(
        "fetch error",
        lambda f, p: f.error is not None,
        _fetch_failed,
    ),
    Rung(
        "retry",
        lambda f, p: f.response.status in RETRY_STATUSES and f.attempts < p.max_attempts,
        _retry,
    ),
    Rung(
        "not modified",
        lambda f, p: f.response.not_modified,
        lambda f, p: Outcome(Action.KEEP, "not modified since the last crawl"),
    ),
    Rung(
        "gone",
        lambda f, p: f.response.status in GONE_STATUSES,
        lambda f, p: Outcome(Action.GONE),
    ),
    Rung(
        "http error",
        lambda f, p: f.response.status >= 400,
        lambda f, p: Outcome(Action.FAIL, f"HTTP {f.response.status}"),
    ),
    Rung(
        "redirect out of scope",
        lambda f, p: f.redirected and p.scope.excluded(f.final) is not None,
        lambda f, p: _skip_usable(f"redirects to {f.final}: {p.scope.excluded(f.final)}"),
    ),
    Rung(
        "redirect to a page of its own",
        lambda f, p: f.redirected and f.final_known,
        lambda f, p: _skip_usable(f"redirects to {f.final}, crawled as its own page"),
    ),
    Rung(
        "content type",
        lambda f, p: f.response.content_type not in INGESTIBLE_TYPES,
        lambda f, p: _skip_usable(
            f"unsupported content type {f.response.content_type or 'unknown'}"
        ),
    ),
    Rung(
        "canonical",
        lambda f, p: p.canonical(f) is not None,
        _use_canonical,
    ),
    Rung(
        "ingest",
        lambda f, p: True,
        lambda f, p: Outcome(Action.INGEST, url=f.final, discover=p.discovers(f), validators=True),
    ),
)
