"""The crawl policy on plain values: no database, no network, no Django.

Each rung of the fetch-outcome ladder has a case (a page fetch in, an outcome out) and near
misses that fall through to the rung below; scope and the query-variant cap have cases on
both sides of each bound. The crawl tests (tests/ingest/test_crawl.py) show the same
decisions end to end against a real local site.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from ingest.crawler.fetch import FetchError, FetchResult
from ingest.crawler.policy import LADDER, Action, CrawlPolicy, Outcome, PageFetch, Scope

SITE = "https://example.org"
PAGE = f"{SITE}/docs/guide"

SCOPE = Scope.of(root=f"{SITE}/", max_url_length=60)
POLICY = CrawlPolicy(
    scope=SCOPE, max_retry_after=300, max_query_variants=3, recursive=True, max_depth=2
)


def answer(
    status: int = 200,
    *,
    url: str = PAGE,
    content_type: str = "text/html",
    content: bytes = b"<html><body><p>Guide</p></body></html>",
    not_modified: bool = False,
    retry_after: float | None = None,
) -> FetchResult:
    return FetchResult(
        url=url,
        status=status,
        headers={},
        content=content,
        content_type=content_type,
        not_modified=not_modified,
        retry_after=retry_after,
    )


def html_with_canonical(href: str) -> bytes:
    return f'<html><head><link rel="canonical" href="{href}"></head><body>x</body></html>'.encode()


@dataclass(frozen=True)
class Case:
    fetch: PageFetch
    rung: str
    outcome: Outcome


def fetched(
    result: FetchResult, *, depth: int = 0, attempts: int = 1, final_known: bool = False
) -> PageFetch:
    """The page PAGE, fetched with this answer."""
    return PageFetch(
        url=PAGE, depth=depth, attempts=attempts, result=result, final_known=final_known
    )


CASES = {
    # robots.txt said no: nothing was requested.
    "robots": Case(
        PageFetch(url=PAGE, robots_disallowed=True),
        "robots",
        Outcome(Action.SKIP, "disallowed by robots.txt"),
    ),
    # No answer at all: the fetcher's reason code and message.
    "fetch error": Case(
        PageFetch(url=PAGE, error=FetchError("timeout", "no answer from example.org in 1 s")),
        "fetch error",
        Outcome(Action.FAIL, "timeout: no answer from example.org in 1 s"),
    ),
    # Busy: back off 2^attempts seconds without a Retry-After…
    "retry, backing off": Case(
        fetched(answer(429), attempts=1),
        "retry",
        Outcome(Action.RETRY, "HTTP 429; retrying after 2 s", delay=2.0),
    ),
    # … as long as the server asks with one…
    "retry, as asked": Case(
        fetched(answer(503, retry_after=7.5), attempts=2),
        "retry",
        Outcome(Action.RETRY, "HTTP 503; retrying after 7.5 s", delay=7.5),
    ),
    # … but never longer than the bound.
    "retry, bounded": Case(
        fetched(answer(503, retry_after=3600), attempts=1),
        "retry",
        Outcome(Action.RETRY, "HTTP 503; retrying after 300 s", delay=300.0),
    ),
    # Near miss: the last attempt's busy answer is a failure like any error status.
    "retry, attempts used up": Case(
        fetched(answer(503), attempts=3),
        "http error",
        Outcome(Action.FAIL, "HTTP 503"),
    ),
    "not modified": Case(
        fetched(answer(304, not_modified=True, content=b"")),
        "not modified",
        Outcome(Action.KEEP, "not modified since the last crawl"),
    ),
    "gone, 404": Case(fetched(answer(404)), "gone", Outcome(Action.GONE)),
    "gone, 410": Case(fetched(answer(410)), "gone", Outcome(Action.GONE)),
    # Near miss: another client error is recorded, not treated as gone.
    "http error": Case(fetched(answer(403)), "http error", Outcome(Action.FAIL, "HTTP 403")),
    "server error": Case(fetched(answer(500)), "http error", Outcome(Action.FAIL, "HTTP 500")),
    # The answer came from outside the crawl: say where and why not.
    "redirect out of scope": Case(
        fetched(answer(url="https://elsewhere.net/guide")),
        "redirect out of scope",
        Outcome(
            Action.SKIP,
            "redirects to https://elsewhere.net/guide: outside the site",
            validators=True,
        ),
    ),
    "redirect to a page of its own": Case(
        fetched(answer(url=f"{SITE}/about"), final_known=True),
        "redirect to a page of its own",
        Outcome(
            Action.SKIP, f"redirects to {SITE}/about, crawled as its own page", validators=True
        ),
    ),
    # Near miss: a redirect in scope to a URL the crawl does not know yet is ingested there.
    "redirect in scope, new URL": Case(
        fetched(answer(url=f"{SITE}/guide/", content_type="text/plain", content=b"Guide")),
        "ingest",
        Outcome(Action.INGEST, url=f"{SITE}/guide/", validators=True),
    ),
    # Near miss: without a redirect, the page being known is the page itself.
    "not redirected, known": Case(
        fetched(answer(content_type="text/plain", content=b"Guide"), final_known=True),
        "ingest",
        Outcome(Action.INGEST, url=PAGE, validators=True),
    ),
    "content type": Case(
        fetched(answer(content_type="image/png", content=b"\x89PNG")),
        "content type",
        Outcome(Action.SKIP, "unsupported content type image/png", validators=True),
    ),
    "content type, none given": Case(
        fetched(answer(content_type="", content=b"?")),
        "content type",
        Outcome(Action.SKIP, "unsupported content type unknown", validators=True),
    ),
    # A print view naming its article as canonical: the article is queued instead.
    "canonical": Case(
        PageFetch(
            url=f"{PAGE}?print=1",
            result=answer(url=f"{PAGE}?print=1", content=html_with_canonical("/docs/guide")),
        ),
        "canonical",
        Outcome(Action.CANONICAL, f"canonical URL is {PAGE}", url=PAGE, validators=True),
    ),
    # Near misses: a page naming itself, or a canonical URL the crawl would not take.
    "canonical is the page": Case(
        fetched(answer(content=html_with_canonical(PAGE)), depth=2),
        "ingest",
        Outcome(Action.INGEST, url=PAGE, validators=True),
    ),
    "canonical out of scope": Case(
        fetched(answer(content=html_with_canonical("https://mirror.net/guide")), depth=2),
        "ingest",
        Outcome(Action.INGEST, url=PAGE, validators=True),
    ),
    "canonical is where it redirected": Case(
        fetched(answer(url=f"{SITE}/guide", content=html_with_canonical("/guide")), depth=2),
        "ingest",
        Outcome(Action.INGEST, url=f"{SITE}/guide", validators=True),
    ),
    # Ingested: an HTML page with depth left has its links followed…
    "ingest, links followed": Case(
        fetched(answer(), depth=1),
        "ingest",
        Outcome(Action.INGEST, url=PAGE, discover=True, validators=True),
    ),
    # … one at the depth limit does not, and neither does a document without links.
    "ingest, at the depth limit": Case(
        fetched(answer(), depth=2),
        "ingest",
        Outcome(Action.INGEST, url=PAGE, validators=True),
    ),
    "ingest, a PDF": Case(
        fetched(answer(content_type="application/pdf", content=b"%PDF-1.4")),
        "ingest",
        Outcome(Action.INGEST, url=PAGE, validators=True),
    ),
    # The order decides: a busy or gone answer counts wherever it came from, and a redirect
    # out of scope is reported before its content type.
    "gone after a redirect out of scope": Case(
        fetched(answer(404, url="https://elsewhere.net/guide")), "gone", Outcome(Action.GONE)
    ),
    "redirect out of scope to an image": Case(
        fetched(answer(url="https://elsewhere.net/logo.png", content_type="image/png")),
        "redirect out of scope",
        Outcome(
            Action.SKIP,
            "redirects to https://elsewhere.net/logo.png: outside the site",
            validators=True,
        ),
    ),
    "busy after a redirect out of scope": Case(
        fetched(answer(429, url="https://elsewhere.net/guide"), attempts=1),
        "retry",
        Outcome(Action.RETRY, "HTTP 429; retrying after 2 s", delay=2.0),
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_each_fetch_gets_the_outcome_of_its_rung(case: Case):
    outcome = POLICY.decide(case.fetch)
    assert outcome == replace(case.outcome, rung=case.rung)


def test_every_rung_of_the_ladder_has_a_case():
    assert {case.rung for case in CASES.values()} == {rung.name for rung in LADDER}


def test_a_crawl_that_is_not_recursive_follows_no_links():
    single = CrawlPolicy(scope=SCOPE, max_retry_after=300, max_query_variants=3)
    outcome = single.decide(fetched(answer(), depth=0))
    assert (outcome.action, outcome.discover) == (Action.INGEST, False)


# Scope: the site (www. and the scheme do not matter, a port does), subdomains on request,
# allow and deny patterns, and the length bound.
@pytest.mark.parametrize(
    ("url", "why_not"),
    [
        (f"{SITE}/docs", None),
        ("http://www.example.org/docs", None),
        ("https://example.org:443/docs", None),
        ("https://example.org:8443/docs", "outside the site"),
        ("https://docs.example.org/", "outside the site"),
        ("https://example.org.evil.net/", "outside the site"),
        ("https://notexample.org/", "outside the site"),
        ("mailto:team@example.org", "outside the site"),
        (f"{SITE}/" + "a" * (60 - len(SITE) - 1), None),
        (f"{SITE}/" + "a" * (60 - len(SITE)), "URL too long (crawl trap?)"),
    ],
)
def test_scope_takes_the_site_and_nothing_next_to_it(url, why_not):
    assert SCOPE.excluded(url) == why_not


@pytest.mark.parametrize(
    ("url", "why_not"),
    [
        ("https://docs.example.org/", None),
        ("https://a.b.example.org/", None),
        ("https://notexample.org/", "outside the site"),
        ("https://example.org.evil.net/", "outside the site"),
    ],
)
def test_subdomains_are_in_scope_only_when_asked_for(url, why_not):
    scope = Scope.of(root=f"{SITE}/", max_url_length=200, include_subdomains=True)
    assert scope.excluded(url) == why_not


@pytest.mark.parametrize(
    ("url", "why_not"),
    [
        (f"{SITE}/docs/a", None),
        (f"{SITE}/doc/a", "not matched by an allow pattern"),
        (f"{SITE}/docs/a.pdf", "matched by a deny pattern"),
        (f"{SITE}/docs/a.pdf?download=1", None),
        ("https://elsewhere.net/docs/a", "outside the site"),
    ],
)
def test_allow_and_deny_patterns_narrow_the_site(url, why_not):
    scope = Scope.of(root=f"{SITE}/", max_url_length=200, allow=[r"/docs/"], deny=[r"\.pdf$"])
    assert scope.excluded(url) == why_not


# The query-variant cap: at most `max_query_variants` query spellings per path, counting the
# ones the crawl already has.
def test_query_variants_stop_at_the_cap_counting_those_already_queued():
    asked: list[str] = []

    def queued(key: str) -> int:
        asked.append(key)
        return {f"{SITE}/calendar": 1}.get(key, 0)

    links = [
        f"{SITE}/calendar?month=1",
        f"{SITE}/calendar?month=2",
        f"{SITE}/calendar?month=3",  # the fourth variant: over the cap of 3
        f"{SITE}/calendar",  # no query: not a variant, never capped
        f"{SITE}/calendars?month=1",  # another path, its own count
        "https://elsewhere.net/calendar?month=1",  # out of scope: not counted, not asked
    ]
    assert POLICY.links_to_queue(links, queued_variants=queued) == [
        f"{SITE}/calendar?month=1",
        f"{SITE}/calendar?month=2",
        f"{SITE}/calendar",
        f"{SITE}/calendars?month=1",
    ]
    assert asked == [f"{SITE}/calendar", f"{SITE}/calendars"]  # once per path, in order


@pytest.mark.parametrize(("already", "taken"), [(0, 3), (2, 1), (3, 0), (7, 0)])
def test_query_variants_fill_the_room_left_under_the_cap(already, taken):
    links = [f"{SITE}/search?q={n}" for n in range(5)]
    result = POLICY.links_to_queue(links, queued_variants=lambda key: already)
    assert result == links[:taken]


def test_links_keep_their_order_and_out_of_scope_ones_are_dropped():
    links = [f"{SITE}/b", "https://elsewhere.net/a", f"{SITE}/a", f"{SITE}/" + "x" * 80]
    assert POLICY.links_to_queue(links, queued_variants=lambda key: 0) == [
        f"{SITE}/b",
        f"{SITE}/a",
    ]
