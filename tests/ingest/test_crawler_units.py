"""The crawler's building blocks, each on its own: URL normalisation and scope, link
extraction, sitemaps, robots.txt, per-host rate limiting and the SSRF-guarded fetcher.

Network tests talk to a real local website (`CrawlSite`); nothing of ours is mocked. Only
the SSRF tests that need a hostname resolving to several addresses replace DNS.
"""

from __future__ import annotations

import gzip
import ipaddress
import itertools
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from ingest.crawler.fetch import Fetcher, FetchError, check_address, parse_retry_after
from ingest.crawler.links import extract_links
from ingest.crawler.ratelimit import SAFETY_MARGIN, HostRateLimiter
from ingest.crawler.robots import RobotsCache, robots_token
from ingest.crawler.sitemaps import parse_llms_txt, parse_sitemap, parse_w3c_datetime
from ingest.crawler.urls import in_scope, normalize_url, path_key, site_of
from tests.ingest.crawl_site import HTML, CrawlSite, Page, generated_site, html_page

UA = "GraphloomBot/0.1 (+https://github.com/graphloom/graphloom; knowledge-graph crawler)"
LOCAL = ["127.0.0.1/32"]


class FakeClock:
    """A monotonic clock that moves only when a thread sleeps on it, each thread on its own
    time line: a request's start time is exactly the slot the limiter gave it, with no real
    waiting and no scheduling jitter. Threads still call the limiter at once, so its lock is
    what keeps their slots apart."""

    def __init__(self, start: float = 1000.0) -> None:
        self.start = start
        self._local = threading.local()

    def __call__(self) -> float:
        return self.start + getattr(self._local, "slept", 0.0)

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self._local.slept = getattr(self._local, "slept", 0.0) + seconds


@pytest.fixture
def site() -> Iterator[CrawlSite]:
    with CrawlSite(crawl_delay=0.5, slow_seconds=3, big_bytes=200_000) as running:
        yield running


def make_fetcher(
    *, timeout: float = 5, max_bytes: int = 100_000, max_redirects: int = 5, allowed=LOCAL
) -> Fetcher:
    return Fetcher(
        user_agent=UA,
        timeout=timeout,
        max_bytes=max_bytes,
        max_redirects=max_redirects,
        allowed_networks=allowed,
    )


@pytest.fixture
def fetcher() -> Iterator[Fetcher]:
    with make_fetcher() as client:
        yield client


# --- URLs --------------------------------------------------------------------------------


def test_normalize_lowercases_scheme_and_host_drops_default_port_and_fragment():
    assert normalize_url("HTTP://Example.COM:80/Path#section") == "http://example.com/Path"
    assert normalize_url("https://example.com:443/a") == "https://example.com/a"
    assert normalize_url("https://example.com:8443/a") == "https://example.com:8443/a"


def test_normalize_turns_empty_path_into_slash():
    assert normalize_url("http://example.com") == "http://example.com/"
    assert normalize_url("http://example.com?b=1") == "http://example.com/?b=1"


def test_normalize_removes_tracking_parameters():
    url = (
        "http://example.com/a?utm_source=x&UTM_Medium=y&fbclid=1&gclid=2&dclid=3&msclkid=4"
        "&mc_cid=5&mc_eid=6&_ga=7&yclid=8&igshid=9&ref_src=10&id=42"
    )
    assert normalize_url(url) == "http://example.com/a?id=42"
    assert normalize_url("http://example.com/a?utm_campaign=spring") == "http://example.com/a"


def test_normalize_sorts_query_parameters_stably_and_keeps_blank_values():
    assert normalize_url("http://e.com/?b=2&a=1&c=") == "http://e.com/?a=1&b=2&c="
    # Repeated keys keep their relative order, which some applications depend on.
    assert normalize_url("http://e.com/?z=1&a=2&a=1&flag") == "http://e.com/?a=2&a=1&flag&z=1"
    assert normalize_url("http://e.com/?b=1&a=2") == normalize_url("http://e.com/?a=2&b=1")


def test_normalize_resolves_relative_urls_and_dot_segments():
    base = "http://example.com/docs/guide/intro.html"
    assert normalize_url("../faq?x=1#top", base=base) == "http://example.com/docs/faq?x=1"
    assert normalize_url("/about", base=base) == "http://example.com/about"
    assert normalize_url("//cdn.example.com/a", base=base) == "http://cdn.example.com/a"
    assert normalize_url("http://example.com/a/./b/../c") == "http://example.com/a/c"
    assert normalize_url("http://example.com/../../x") == "http://example.com/x"


def test_normalize_percent_encoding():
    assert normalize_url("http://e.com/%7euser/%2f%41") == "http://e.com/~user/%2FA"
    assert (
        normalize_url("http://e.com/a b/ü?q=ä ö") == "http://e.com/a%20b/%C3%BC?q=%C3%A4%20%C3%B6"
    )
    assert normalize_url("http://e.com/100%") == "http://e.com/100%25"
    assert normalize_url(" \n http://e.com/a\tb \n") == "http://e.com/ab"


def test_normalize_encodes_international_hosts_with_idna():
    assert normalize_url("https://www.Bücher.de/x") == "https://www.xn--bcher-kva.de/x"
    assert normalize_url("http://münchen.de./") == "http://xn--mnchen-3ya.de/"


def test_normalize_drops_credentials():
    assert normalize_url("http://user:secret@example.com/a") == "http://example.com/a"


@pytest.mark.parametrize(
    "url",
    [
        "mailto:someone@example.com",
        "javascript:alert(1)",
        "ftp://example.com/file",
        "data:text/html,hi",
        "file:///etc/passwd",
        "http://[::1",
        "http://example.com:99999/",
        "http://",
        "http:///path",
        "not a url",
        "",
        "http://exa mple.com/",
    ],
)
def test_normalize_refuses_what_is_not_a_crawlable_url(url):
    assert normalize_url(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "HTTP://Example.COM:80/a/../b/%7euser?b=2&a=1&utm_source=x#f",
        "http://e.com/a b/ü?q=ä ö&z=&y",
        "http://e.com/%zz%41%2f",
        "https://Bücher.de/straße",
        "http://[::FFFF:127.0.0.1]:8080/x",
    ],
)
def test_normalize_is_idempotent(url):
    once = normalize_url(url)
    assert once is not None
    assert normalize_url(once) == once


def test_site_of_is_the_host_without_www():
    assert site_of("https://WWW.Example.com:8080/x") == "example.com"
    assert site_of("http://docs.example.com/") == "docs.example.com"
    assert site_of("mailto:x@example.com") == ""


def test_in_scope_treats_www_and_scheme_as_the_same_site():
    root = "https://www.example.com/"
    assert in_scope("http://example.com/a", root=root, include_subdomains=False)
    assert in_scope("https://www.example.com/b", root=root, include_subdomains=False)
    assert not in_scope("https://other.com/", root=root, include_subdomains=False)
    assert not in_scope("https://example.com:8080/", root=root, include_subdomains=False)


def test_in_scope_includes_subdomains_only_when_asked():
    root = "https://example.com/"
    assert not in_scope("https://docs.example.com/", root=root, include_subdomains=False)
    assert in_scope("https://docs.example.com/", root=root, include_subdomains=True)
    assert in_scope("https://a.b.example.com/", root=root, include_subdomains=True)
    # A lookalike domain is not a subdomain.
    assert not in_scope("https://badexample.com/", root=root, include_subdomains=True)
    assert not in_scope("https://example.com.evil.org/", root=root, include_subdomains=True)


def test_in_scope_of_a_local_site_requires_its_port():
    root = "http://127.0.0.1:8000/"
    assert in_scope("http://127.0.0.1:8000/about", root=root, include_subdomains=True)
    assert not in_scope("http://127.0.0.1:9000/about", root=root, include_subdomains=True)


def test_path_key_ignores_the_query():
    a = path_key("http://e.com/calendar?month=2024-01")
    assert a == path_key("HTTP://E.com:80/calendar?month=2024-02") == "http://e.com/calendar"


# --- links -------------------------------------------------------------------------------

PAGE = b"""<!DOCTYPE html>
<html><head>
<title>Links</title>
<base href="/docs/">
<link rel="Canonical" href="guide?utm_source=feed">
</head><body>
<a href="intro">Intro</a>
<a href="../about#team">About</a>
<a href="intro">Intro again</a>
<a rel="nofollow ugc" href="/login">Login</a>
<a href="javascript:void(0)">Menu</a>
<a href="mailto:a@example.com">Mail</a>
<a href=" TEL:+123">Call</a>
<a href="data:text/html,x">Data</a>
<a href="#top">Top</a>
<a>No href</a>
<map><area href="/map-area" alt="area"></map>
<a href="https://other.example/?b=2&a=1&fbclid=9">Other</a>
"""


def test_extract_links_honours_base_href_and_skips_nofollow_and_non_http():
    links = extract_links(PAGE, base_url="http://example.com/section/page.html")
    assert links.links == [
        "http://example.com/docs/intro",
        "http://example.com/about",
        "http://example.com/map-area",
        "https://other.example/?a=1&b=2",
    ]
    assert links.canonical == "http://example.com/docs/guide"
    assert links.nofollow is False


def test_meta_robots_nofollow_means_no_links():
    html = b'<meta name="ROBOTS" content="noindex, NoFollow"><a href="/x">x</a>'
    links = extract_links(html, base_url="http://example.com/")
    assert links.nofollow is True
    assert links.links == []
    none = extract_links(
        b'<meta name="robots" content="none"><a href="/x">x</a>', base_url="http://e.com/"
    )
    assert none.nofollow is True


def test_extract_links_survives_broken_html_and_other_encodings():
    broken = b"<p>unclosed <div><a href=/a>a<table><a href='/b'>b</td></p>"
    assert extract_links(broken, base_url="http://e.com/").links == [
        "http://e.com/a",
        "http://e.com/b",
    ]
    latin1 = b'<meta charset="windows-1252"><a href="/caf\xe9">caf\xe9</a>'
    assert extract_links(latin1, base_url="http://e.com/").links == ["http://e.com/caf%C3%A9"]
    for junk in (b"", b"   ", b"\x00\xff\xfe<<<>>>", b"%PDF-1.7 not html"):
        assert extract_links(junk, base_url="http://e.com/").links == []


def test_extract_links_of_the_crawl_site_home_page(site, fetcher):
    home = fetcher.fetch(site.url("/"))
    links = extract_links(home.content, base_url=home.url).links
    assert site.url("/about") in links
    assert site.url("/articles/tides") in links
    assert site.url("/login") not in links  # rel="nofollow"
    # Tracking-parameter variants collapse into /about; no mailto/javascript links.
    assert not [link for link in links if "utm_" in link or "fbclid" in link]
    assert all(link.startswith(site.base_url) for link in links)
    guide = fetcher.fetch(site.url("/docs/guide?print=1"))
    assert extract_links(guide.content, base_url=guide.url).canonical == site.url("/docs/guide")


# --- sitemaps and llms.txt ------------------------------------------------------------------


def test_sitemap_index_and_gzipped_child_from_the_crawl_site(site, fetcher):
    index_url = site.url("/sitemap_index.xml")
    index = parse_sitemap(fetcher.fetch(index_url).content, url=index_url)
    assert index.entries == []
    assert index.children == [site.url("/sitemap-pages.xml"), site.url("/sitemap-more.xml.gz")]

    pages = parse_sitemap(fetcher.fetch(index.children[0]).content, url=index.children[0])
    assert [e.loc for e in pages.entries] == [
        site.url("/"),
        site.url("/about"),
        site.url("/team"),
        site.url("/docs/guide"),
    ]
    assert pages.entries[0].lastmod == datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    assert pages.entries[3].lastmod == datetime(2024, 3, 1, tzinfo=UTC)

    gz = fetcher.fetch(index.children[1])
    assert gz.content[:2] == b"\x1f\x8b"
    more = parse_sitemap(gz.content, url=gz.url)
    assert site.url("/articles/tides") in [e.loc for e in more.entries]
    assert site.url("/files/report.pdf") in [e.loc for e in more.entries]
    assert all(e.lastmod is not None for e in more.entries)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024", datetime(2024, 1, 1, tzinfo=UTC)),
        ("2024-05", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-06", datetime(2024, 5, 6, tzinfo=UTC)),
        ("2024-05-06T07:08Z", datetime(2024, 5, 6, 7, 8, tzinfo=UTC)),
        ("2024-05-06T07:08:09+02:00", datetime(2024, 5, 6, 5, 8, 9, tzinfo=UTC)),
        ("2024-05-06T07:08:09.25-01:30", datetime(2024, 5, 6, 8, 38, 9, 250000, tzinfo=UTC)),
        (" 2024-05-06T07:08:09 ", datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)),
        ("2024-13-01", None),
        ("last tuesday", None),
        ("", None),
    ],
)
def test_lastmod_w3c_datetime_formats(value, expected):
    assert parse_w3c_datetime(value) == expected


def test_sitemap_is_namespace_agnostic_and_resolves_relative_locs():
    xml = (
        b'<?xml version="1.0"?><ns:urlset xmlns:ns="http://example.org/other">'
        b"<ns:url><ns:loc> /a </ns:loc><ns:lastmod>2024-01-02</ns:lastmod></ns:url>"
        b"<ns:url><ns:loc>http://example.com/a</ns:loc></ns:url>"
        b"<ns:url><ns:loc>mailto:x@example.com</ns:loc></ns:url>"
        b"<ns:url><ns:lastmod>2024-01-02</ns:lastmod></ns:url>"
        b"</ns:urlset>"
    )
    result = parse_sitemap(xml, url="http://example.com/sitemap.xml")
    assert [e.loc for e in result.entries] == ["http://example.com/a"]
    assert result.entries[0].lastmod == datetime(2024, 1, 2, tzinfo=UTC)


def test_sitemap_external_entities_are_not_resolved(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    xml = f"""<?xml version="1.0"?>
<!DOCTYPE urlset [
  <!ENTITY xxe SYSTEM "file://{secret}">
  <!ENTITY internal "INTERNAL-EXPANSION">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://example.com/&xxe;</loc></url>
  <url><loc>http://example.com/page&internal;</loc></url>
</urlset>""".encode()
    result = parse_sitemap(xml, url="http://example.com/sitemap.xml")
    locs = [e.loc for e in result.entries]
    assert locs == ["http://example.com/", "http://example.com/page"]
    assert not [loc for loc in locs if "SECRET" in loc or "EXPANSION" in loc or "&" in loc]


def test_sitemap_billion_laughs_is_not_expanded():
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    )
    xml = f'<?xml version="1.0"?><!DOCTYPE urlset [{entities}]><urlset><url><loc>http://e.com/&lol9;</loc></url></urlset>'
    result = parse_sitemap(xml.encode(), url="http://e.com/sitemap.xml")
    assert [e.loc for e in result.entries] == ["http://e.com/"]


def test_gzip_bomb_sitemap_is_refused():
    bomb = gzip.compress(b"\0" * (51 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 100_000
    result = parse_sitemap(bomb, url="http://e.com/sitemap.xml.gz")
    assert result.entries == [] and result.children == []


@pytest.mark.parametrize(
    "junk",
    [b"", b"\x00\xff\xfe garbage", b"<html><body>Not a sitemap", b"\x1f\x8b\x08truncated", b"<<<"],
)
def test_garbage_sitemap_gives_an_empty_result(junk):
    result = parse_sitemap(junk, url="http://e.com/sitemap.xml")
    assert result.entries == [] and result.children == []


def test_plain_text_sitemap_and_max_entries():
    text = b"http://e.com/a\n  https://e.com/b  \nnot a url\nhttp://e.com/a\nhttp://e.com/c\n"
    assert [e.loc for e in parse_sitemap(text, url="http://e.com/s.txt").entries] == [
        "http://e.com/a",
        "https://e.com/b",
        "http://e.com/c",
    ]
    assert len(parse_sitemap(text, url="http://e.com/s.txt", max_entries=2).entries) == 2


def test_llms_txt_links_from_the_crawl_site(site, fetcher):
    result = fetcher.fetch(site.url("/llms.txt"))
    assert parse_llms_txt(result.content, base=result.url) == [
        site.url("/docs/guide"),
        site.url("/about"),
        site.url("/articles/tides"),
    ]


def test_llms_txt_markdown_links_titles_and_bare_urls():
    text = (
        b'# Project\n\n> Summary with [a link](https://e.com/docs/ "Docs").\n\n'
        b"- [API](/api.md): reference\n- [Anchor](#section)\n- [Mail](mailto:a@e.com)\n"
        b"See https://e.com/blog. Also <https://e.com/faq>, and https://e.com/api.md again.\n"
    )
    assert parse_llms_txt(text, base="https://e.com/llms.txt") == [
        "https://e.com/docs/",
        "https://e.com/api.md",
        "https://e.com/blog",
        "https://e.com/faq",
    ]


# --- robots.txt ----------------------------------------------------------------------------


def test_robots_allows_disallows_and_reads_delay_and_sitemaps(site, fetcher):
    robots = RobotsCache(fetcher, user_agent=UA)
    assert robots.allowed(site.url("/about"))
    assert robots.allowed(site.url("/"))
    assert not robots.allowed(site.url("/private/secret"))
    assert robots.crawl_delay(site.url("/about")) == 0.5
    assert robots.sitemaps(site.url("/")) == [site.url("/sitemap_index.xml")]


def test_robots_is_fetched_once_per_site_even_from_many_threads(site, fetcher):
    robots = RobotsCache(fetcher, user_agent=UA)
    answers: list[bool] = []
    threads = [
        threading.Thread(target=lambda: answers.append(robots.allowed(site.url("/team"))))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    robots.allowed(site.url("/private/x"))
    robots.crawl_delay(site.url("/"))
    assert answers == [True] * 8
    assert len(site.requests_to("/robots.txt")) == 1


def test_robots_without_crawl_delay():
    with CrawlSite(crawl_delay=None) as site, make_fetcher() as fetcher:
        robots = RobotsCache(fetcher, user_agent=UA)
        assert robots.crawl_delay(site.url("/")) is None
        assert not robots.allowed(site.url("/private/secret"))


def test_missing_robots_allows_everything(site, fetcher):
    del site.pages["/robots.txt"]
    robots = RobotsCache(fetcher, user_agent=UA)
    assert robots.allowed(site.url("/private/secret"))
    assert robots.sitemaps(site.url("/")) == []
    site.pages["/robots.txt"] = html_page("Gone", ["gone"], status=410)
    robots.reset("127.0.0.1")
    assert robots.allowed(site.url("/private/secret"))


def test_forbidden_robots_disallows_everything(site, fetcher):
    site.pages["/robots.txt"] = html_page("Forbidden", ["no"], status=403)
    robots = RobotsCache(fetcher, user_agent=UA)
    assert not robots.allowed(site.url("/"))


def test_robots_server_error_disallows_until_retried(site, fetcher):
    site.pages["/robots.txt"] = html_page("Oops", ["server error"], status=503)
    robots = RobotsCache(fetcher, user_agent=UA)
    assert not robots.allowed(site.url("/about"))
    site.pages["/robots.txt"] = Page(b"User-agent: *\nDisallow: /private/\n", "text/plain")
    assert not robots.allowed(site.url("/about"))  # still cached
    robots.reset(site.url("/"))
    assert robots.allowed(site.url("/about"))
    assert len(site.requests_to("/robots.txt")) == 2


def test_robots_failure_is_retried_after_the_error_ttl(site, fetcher):
    clock = FakeClock()
    site.pages["/robots.txt"] = html_page("Oops", ["server error"], status=500)
    robots = RobotsCache(fetcher, user_agent=UA, error_ttl=0.1, clock=clock)
    assert not robots.allowed(site.url("/about"))
    site.pages["/robots.txt"] = Page(b"User-agent: *\nDisallow:\n", "text/plain")
    clock.sleep(0.05)
    assert not robots.allowed(site.url("/about"))  # the failure is still remembered
    clock.sleep(0.1)
    assert robots.allowed(site.url("/about"))


def test_robots_group_for_our_product_token(site, fetcher):
    site.pages["/robots.txt"] = Page(
        b"User-agent: *\nAllow: /\n\nUser-agent: github\nDisallow: /\n\n"
        b"User-agent: GraphloomBot\nDisallow: /articles/\nCrawl-delay: 2\n",
        "text/plain",
    )
    robots = RobotsCache(fetcher, user_agent=UA)
    assert robots_token(UA) == "GraphloomBot"
    assert robots.allowed(site.url("/about"))  # the `github` group (from our UA's URL) is not ours
    assert not robots.allowed(site.url("/articles/tides"))
    assert robots.crawl_delay(site.url("/")) == 2


# --- rate limiting -------------------------------------------------------------------------


def fake_limiter(rate: float | None) -> tuple[HostRateLimiter, FakeClock]:
    clock = FakeClock()
    return HostRateLimiter(rate_per_second=rate, clock=clock, sleep=clock.sleep), clock


def _stamps(
    limiter: HostRateLimiter, clock: FakeClock, *, threads: int, each: int, **kwargs
) -> list[float]:
    stamps: list[float] = []
    lock = threading.Lock()
    ready = threading.Barrier(threads)

    def worker() -> None:
        ready.wait()  # every thread asks at the same moment
        for _ in range(each):
            limiter.wait("example.com", **kwargs)
            with lock:
                stamps.append(clock())

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    return sorted(stamps)


def _gaps(stamps: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(stamps)]


def test_rate_limiter_spaces_requests_to_one_host_across_threads():
    # Without coordination the four threads would start together (gaps of 0).
    limiter, clock = fake_limiter(10)
    stamps = _stamps(limiter, clock, threads=4, each=2)
    assert len(stamps) == 8
    assert stamps[0] == clock.start
    assert _gaps(stamps) == pytest.approx([0.1 * SAFETY_MARGIN] * 7)


def test_rate_limiter_uses_the_longer_crawl_delay():
    limiter, clock = fake_limiter(100)
    stamps = _stamps(limiter, clock, threads=2, each=2, min_interval=0.08)
    assert _gaps(stamps) == pytest.approx([0.08 * SAFETY_MARGIN] * 3)


def test_rate_limiter_keeps_hosts_independent():
    limiter, clock = fake_limiter(0.5)
    first = limiter.reserve("a.example")
    other = limiter.reserve("b.example")
    assert other <= clock()  # another host's slot is now
    # a.example waits 2 s (and the safety margin that absorbs network jitter)
    assert limiter.reserve("A.example") - first == pytest.approx(2.0 * SAFETY_MARGIN)
    assert other - first < 1


def test_rate_limiter_defer_pushes_the_next_slot():
    limiter, clock = fake_limiter(None)
    limiter.wait("example.com")
    deferred_at = clock()
    limiter.defer("example.com", 0.2)
    limiter.wait("example.com")
    assert clock() - deferred_at == pytest.approx(0.2)


def test_unlimited_rate_limiter_gives_slots_immediately():
    limiter, clock = fake_limiter(0)
    slots = [limiter.reserve("example.com") for _ in range(5)]
    assert all(slot <= clock() for slot in slots)


# --- fetching ------------------------------------------------------------------------------


def test_fetch_returns_the_page_and_its_metadata(site, fetcher):
    result = fetcher.fetch(site.url("/about"))
    assert result.status == 200
    assert result.url == site.url("/about")
    assert result.content_type == "text/html"
    assert result.headers["content-type"] == "text/html; charset=utf-8"
    assert b"<title>About the Harbour Town Gazette</title>" in result.content
    assert result.etag == site.pages["/about"].etag
    assert result.last_modified == site.pages["/about"].last_modified
    assert result.redirects == []
    assert result.not_modified is False
    assert result.retry_after is None
    (request,) = site.requests_to("/about")
    assert request.headers["user-agent"] == UA


def test_conditional_requests_are_answered_not_modified(site, fetcher):
    first = fetcher.fetch(site.url("/team"))
    by_etag = fetcher.fetch(site.url("/team"), etag=first.etag)
    assert by_etag.status == 304 and by_etag.not_modified and by_etag.content == b""
    by_date = fetcher.fetch(site.url("/team"), last_modified=first.last_modified)
    assert by_date.not_modified
    requests = site.requests_to("/team")
    assert requests[1].headers["if-none-match"] == first.etag
    assert requests[2].headers["if-modified-since"] == first.last_modified

    site.pages["/team"] = html_page("Our new team", ["Everyone changed jobs."])
    changed = fetcher.fetch(site.url("/team"), etag=first.etag, last_modified=first.last_modified)
    assert changed.status == 200 and not changed.not_modified
    assert b"Our new team" in changed.content and changed.etag != first.etag


def test_redirect_chain_is_recorded(site, fetcher):
    result = fetcher.fetch(site.url("/hops/2"))
    assert result.status == 200
    assert result.url == site.url("/about")
    assert result.redirects == [site.url("/hops/2"), site.url("/hops/1")]
    assert fetcher.fetch(site.url("/redirect-me")).redirects == [site.url("/redirect-me")]


def test_redirect_loop_is_an_error(site, fetcher):
    with pytest.raises(FetchError) as error:
        fetcher.fetch(site.url("/loop-a"))
    assert error.value.reason == "redirect_loop"
    assert "loop-a" in error.value.message


def test_too_many_redirects_is_an_error(site):
    with make_fetcher(max_redirects=3) as fetcher:
        assert fetcher.fetch(site.url("/hops/3")).status == 200
        with pytest.raises(FetchError) as error:
            fetcher.fetch(site.url("/hops/4"))
    assert error.value.reason == "too_many_redirects"


def test_slow_server_times_out(site):
    with make_fetcher(timeout=1) as fetcher, pytest.raises(FetchError) as error:
        fetcher.fetch(site.url("/slow"))
    assert error.value.reason == "timeout"


def test_trickling_body_hits_the_total_deadline(site):
    # Each byte arrives well within the read timeout; only the total deadline stops it.
    with make_fetcher(timeout=1) as fetcher, pytest.raises(FetchError) as error:
        fetcher.fetch(site.url("/trickle"))
    assert error.value.reason == "timeout"


def test_oversized_bodies_are_refused(site, fetcher):
    with pytest.raises(FetchError) as announced:
        fetcher.fetch(site.url("/big"))  # Content-Length says 200 kB, the limit is 100 kB
    assert announced.value.reason == "too_large"
    with pytest.raises(FetchError) as streamed:
        fetcher.fetch(site.url("/big-stream"))  # no Content-Length: counted while reading
    assert streamed.value.reason == "too_large"


def test_rate_limited_answer_carries_retry_after(site, fetcher):
    first = fetcher.fetch(site.url("/rate-limited"))
    assert first.status == 429
    assert first.retry_after == 1
    assert fetcher.fetch(site.url("/rate-limited")).status == 200


def test_http_errors_are_results(site, fetcher):
    assert fetcher.fetch(site.url("/gone")).status == 410
    missing = fetcher.fetch(site.url("/missing"))
    assert missing.status == 404 and missing.retry_after is None


def test_binary_files_keep_their_bytes_and_type(site, fetcher):
    pdf = fetcher.fetch(site.url("/files/report.pdf"))
    assert pdf.content_type == "application/pdf" and pdf.content.startswith(b"%PDF")
    png = fetcher.fetch(site.url("/image.png"))
    assert png.content_type == "image/png" and png.content.startswith(b"\x89PNG")


def test_concurrent_fetches_share_one_fetcher(site, fetcher):
    paths = [
        "/",
        "/about",
        "/team",
        "/docs/guide",
        *[f"/articles/{a}" for a in ("tides", "lighthouse")],
    ]
    statuses: dict[str, int] = {}

    def get(path: str) -> None:
        statuses[path] = fetcher.fetch(site.url(path)).status

    threads = [threading.Thread(target=get, args=(path,)) for path in paths * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == dict.fromkeys(paths, 200)


def test_parse_retry_after_seconds_and_http_date():
    now = datetime(2024, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("120") == 120
    assert parse_retry_after("Mon, 01 Jan 2024 12:00:30 GMT", now=now) == 30
    assert parse_retry_after("Mon, 01 Jan 2024 11:00:00 GMT", now=now) == 0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_bad_schemes_and_invalid_urls(fetcher):
    with pytest.raises(FetchError) as scheme:
        fetcher.fetch("ftp://example.com/file")
    assert scheme.value.reason == "bad_scheme"
    with pytest.raises(FetchError) as invalid:
        fetcher.fetch("http:///no-host")
    assert invalid.value.reason == "invalid_url"


# --- SSRF ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "http://127.0.0.1:{port}/",
        "http://[::1]:{port}/",
        "http://localhost:{port}/",
        "http://2130706433:{port}/",  # 127.0.0.1 as one decimal number
        "http://0x7f.1:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
        "http://0.0.0.0:{port}/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data",
    ],
)
def test_ssrf_refuses_non_public_addresses_before_connecting(site, template):
    url = template.format(port=site.port)
    with make_fetcher(allowed=()) as fetcher, pytest.raises(FetchError) as error:
        fetcher.fetch(url)
    assert error.value.reason == "ssrf_refused"
    assert error.value.message.startswith(url)
    assert site.log == []


def test_ssrf_refuses_a_redirect_from_an_allowed_origin_to_a_private_address(site, fetcher):
    with pytest.raises(FetchError) as error:
        fetcher.fetch(site.url("/redirect-to-10"))
    assert error.value.reason == "ssrf_refused"
    assert "10.0.0.1" in error.value.message
    assert [r.path for r in site.log] == ["/redirect-to-10"]


def test_ssrf_refuses_a_hostname_if_any_address_is_private(site, monkeypatch):
    """A name resolving to a public and a private address is refused outright, so retrying
    until the private one comes first cannot reach it."""
    real = socket.getaddrinfo

    def fake_dns(host, port, *args, **kwargs):
        if host == "mixed.example":
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
            ]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    with make_fetcher(allowed=()) as fetcher, pytest.raises(FetchError) as error:
        fetcher.fetch(f"http://mixed.example:{site.port}/")
    assert error.value.reason == "ssrf_refused"
    assert "127.0.0.1" in error.value.message
    assert site.log == []


def test_guard_connects_to_the_vetted_address_keeping_the_hostname(site, monkeypatch):
    """DNS is asked once, at connect time; the request still names the original host."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    def fake_dns(host, port, *args, **kwargs):
        if host == "harbour.test":
            lookups.append(host)
            return real("127.0.0.1", port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    with make_fetcher(allowed=LOCAL) as fetcher:
        result = fetcher.fetch(f"http://harbour.test:{site.port}/about")
    assert result.status == 200
    assert lookups == ["harbour.test"]
    assert site.log[0].headers["host"] == f"harbour.test:{site.port}"


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("8.8.8.8", False),
        ("2606:4700:4700::1111", False),
        ("64:ff9b::808:808", False),  # NAT64 form of a public address
        ("127.0.0.1", True),
        ("10.1.2.3", True),
        ("172.16.0.1", True),
        ("192.168.0.1", True),
        ("100.64.0.1", True),  # carrier-grade NAT
        ("169.254.169.254", True),
        ("0.0.0.0", True),  # noqa: S104 (an address to refuse, not one to bind)
        ("224.0.0.1", True),
        ("255.255.255.255", True),
        ("240.0.0.1", True),
        ("::1", True),
        ("::", True),
        ("fe80::1", True),
        ("fc00::1", True),
        ("fd00:ec2::254", True),
        ("ff02::1", True),
        ("::ffff:10.0.0.1", True),  # IPv4-mapped
        ("2002:7f00:1::", True),  # 6to4 of 127.0.0.1
        ("64:ff9b::a00:1", True),  # NAT64 of 10.0.0.1
    ],
)
def test_address_classification(address, refused):
    assert (check_address(ipaddress.ip_address(address), ()) is not None) is refused


def test_allowed_networks_open_exactly_their_ranges():
    allowed = (ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("10.0.0.0/8"))
    assert check_address(ipaddress.ip_address("127.0.0.1"), allowed) is None
    assert check_address(ipaddress.ip_address("10.9.9.9"), allowed) is None
    assert check_address(ipaddress.ip_address("127.0.0.2"), allowed) == "loopback address"
    assert check_address(ipaddress.ip_address("192.168.0.1"), allowed) == "private address"


# --- the test website itself -------------------------------------------------------------


def test_generated_site_pages_are_interlinked_and_all_reachable(fetcher):
    with generated_site(60) as site:
        html_paths = {p for p, page in site.pages.items() if page.content_type == HTML}
        assert len(html_paths) == 60
        seen = {"/"}
        frontier = ["/"]
        while frontier:
            path = frontier.pop()
            links = extract_links(site.pages[path].body, base_url=site.url(path)).links
            assert 3 <= len(links) <= 5
            for link in links:
                target = link.removeprefix(site.base_url)
                if target not in seen:
                    seen.add(target)
                    frontier.append(target)
        assert seen == html_paths
        served = fetcher.fetch(site.url("/p/59"))
        assert served.status == 200 and b"Harbour archive entry 59" in served.content
        sitemap = parse_sitemap(fetcher.fetch(site.url("/sitemap.xml")).content, url=site.url("/"))
        assert len(sitemap.entries) == 60
