"""A real website on 127.0.0.1 for crawler tests: unit tests of the fetcher and robots
cache, integration tests of the crawl loop, and the 1,000-page crawl benchmark.

It is a plain `http.server` in a background thread serving real bytes (HTML, PDF, DOCX,
PNG, gzipped sitemaps), with the situations a crawler must survive built in: robots.txt
rules, redirects and redirect loops, a calendar trap, tracking-parameter duplicates,
rate limiting, slow and oversized answers, gone and missing pages. Every request is
recorded, so tests assert on what the crawler actually asked for.

    with CrawlSite(crawl_delay=None) as site:
        crawl(site.url("/"))
        assert not site.requests_to("/private/")

`pages` maps a path (or path with query) to a `Page`; replace entries between crawls to
change the site (a new `Page` gets a new ETag and a later Last-Modified).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import html
import itertools
import random
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

from tests.background_server import BackgroundServer
from tests.ingest.factories import docx_bytes, pdf_bytes, png_bytes

HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
XML = "application/xml; charset=utf-8"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

# Every Page gets a later Last-Modified than the ones before it (an hour apart, from a fixed
# date), so a page replaced within the same second still counts as modified.
_modified_clock = itertools.count()
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def _next_last_modified() -> str:
    return format_datetime(_EPOCH + timedelta(hours=next(_modified_clock)), usegmt=True)


@dataclass(frozen=True)
class Page:
    body: bytes
    content_type: str = HTML
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    last_modified: str = field(default_factory=_next_last_modified)

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:20] + '"'


class RequestRecord(NamedTuple):
    time: float  # time.monotonic() when the request arrived
    method: str
    path: str  # path with query, as sent
    headers: dict[str, str]  # lower-case names

    @property
    def path_with_query(self) -> str:
        return self.path


def html_page(
    title: str,
    paragraphs: Sequence[str],
    links: Iterable[tuple[str, str]] = (),
    *,
    head: str = "",
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> Page:
    """An HTML page with a title, a heading, paragraphs and a list of (href, text) links."""
    items = "\n".join(
        f'    <li><a href="{html.escape(href)}">{html.escape(text)}</a></li>'
        for href, text in links
    )
    body = "\n".join(f"  <p>{html.escape(p)}</p>" for p in paragraphs)
    document = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{html.escape(title)}</title>
{head}</head>
<body>
  <h1>{html.escape(title)}</h1>
{body}
  <ul>
{items}
  </ul>
</body>
</html>
"""
    return Page(document.encode("utf-8"), HTML, status, dict(headers or {}))


def redirect(location: str, status: int = 301) -> Page:
    return Page(b"", HTML, status, {"Location": location})


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler sleeping in /slow must not block stop()
    site: CrawlSite

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up mid-answer (timeouts, size limits) are the point of tests


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections give their thread back eventually
    server: _Server

    def do_GET(self) -> None:
        self.server.site._handle(self, head=False)

    def do_HEAD(self) -> None:
        self.server.site._handle(self, head=True)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class CrawlSite(BackgroundServer):
    """The test website; `n_pages` switches from the default site to a generated one."""

    def __init__(
        self,
        *,
        crawl_delay: float | None = 0.5,
        slow_seconds: float = 5.0,
        big_bytes: int = 3 * 1024 * 1024,
        rate_limited_failures: int = 1,
        trickle_interval: float = 0.2,
        trickle_bytes: int = 40,
        n_pages: int | None = None,
    ) -> None:
        super().__init__(name="crawl-site")
        self.crawl_delay = crawl_delay
        self.slow_seconds = slow_seconds
        self.big_bytes = big_bytes
        self.rate_limited_failures = rate_limited_failures
        self.trickle_interval = trickle_interval
        self.trickle_bytes = trickle_bytes
        self.log: list[RequestRecord] = []
        self._lock = threading.Lock()
        self._rate_limited_hits = 0
        # Bound now, so base_url is known while the pages are built and before start().
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.site = self
        self.pages: dict[str, Page] = (
            default_pages(self.base_url, crawl_delay=crawl_delay, big_bytes=big_bytes)
            if n_pages is None
            else generated_pages(self.base_url, n_pages, crawl_delay=crawl_delay)
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + path

    def requests_to(self, path_prefix: str) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.log if r.path.startswith(path_prefix)]

    def clear_log(self) -> None:
        with self._lock:
            self.log.clear()

    # --- serving -----------------------------------------------------------------------

    def _handle(self, handler: _Handler, *, head: bool) -> None:
        record = RequestRecord(
            time.monotonic(),
            handler.command,
            handler.path,
            {k.lower(): v for k, v in handler.headers.items()},
        )
        with self._lock:
            self.log.append(record)
        parts = urlsplit(handler.path)
        route = parts.path
        try:
            if route == "/slow":
                self._stopping.wait(self.slow_seconds)
                page = html_page("A slow page", ["This page took its time to answer."])
            elif route == "/trickle":
                self._trickle(handler, head=head)
                return
            elif route == "/big-stream":
                self._stream_big(handler, head=head)
                return
            elif route == "/calendar":
                page = calendar_page(parse_qs(parts.query).get("month", [""])[0])
            elif route == "/rate-limited":
                page = self._rate_limited()
            elif route.startswith("/hops/"):
                page = hops_page(route)
            else:
                found = self.pages.get(handler.path) or self.pages.get(route)
                page = found or html_page(
                    "Not found", ["There is no page at this address."], status=404
                )
            self._send(handler, page, head=head)
        except OSError:  # the client hung up or timed out: nothing left to answer
            handler.close_connection = True

    def _rate_limited(self) -> Page:
        with self._lock:
            self._rate_limited_hits += 1
            hits = self._rate_limited_hits
        if hits <= self.rate_limited_failures:
            return html_page(
                "Too many requests",
                ["Slow down, please."],
                status=429,
                headers={"Retry-After": "1"},
            )
        return html_page("Rate limited page", ["You waited, so here is the page."])

    def _send(self, handler: _Handler, page: Page, *, head: bool) -> None:
        if page.status == 200 and _not_modified(handler, page):
            handler.send_response(304)
            handler.send_header("ETag", page.etag)
            handler.send_header("Last-Modified", page.last_modified)
            handler.end_headers()
            return
        handler.send_response(page.status)
        handler.send_header("Content-Type", page.content_type)
        handler.send_header("Content-Length", str(len(page.body)))
        if page.status == 200:
            handler.send_header("ETag", page.etag)
            handler.send_header("Last-Modified", page.last_modified)
        for name, value in page.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        if not head:
            handler.wfile.write(page.body)

    def _trickle(self, handler: _Handler, *, head: bool) -> None:
        """Answer at once, then send the body one byte per `trickle_interval`."""
        handler.send_response(200)
        handler.send_header("Content-Type", TEXT)
        handler.send_header("Content-Length", str(self.trickle_bytes))
        handler.end_headers()
        handler.wfile.flush()
        if head:
            return
        for _ in range(self.trickle_bytes):
            if self._stopping.wait(self.trickle_interval):
                break
            handler.wfile.write(b"x")
            handler.wfile.flush()
        handler.close_connection = True

    def _stream_big(self, handler: _Handler, *, head: bool) -> None:
        """`big_bytes` of HTML without Content-Length (ended by closing the connection)."""
        handler.send_response(200)
        handler.send_header("Content-Type", HTML)
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        if head:
            return
        chunk = b"<p>" + b"Streaming without a length. " * 2000 + b"</p>\n"
        sent = 0
        while sent < self.big_bytes and not self._stopping.is_set():
            handler.wfile.write(chunk)
            sent += len(chunk)


def _not_modified(handler: _Handler, page: Page) -> bool:
    if_none_match = handler.headers.get("If-None-Match")
    if if_none_match:
        tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
        return "*" in tags or page.etag in tags
    if_modified_since = handler.headers.get("If-Modified-Since")
    if if_modified_since:
        try:
            return parsedate_to_datetime(page.last_modified) <= parsedate_to_datetime(
                if_modified_since
            )
        except (TypeError, ValueError):
            return False
    return False


# A single-page app: an HTML shell with an empty #root that its script fills in. The script
# also tries to reach another origin and a path robots.txt disallows, which a rendering
# crawl must never let out of the browser.
JAVASCRIPT = "text/javascript; charset=utf-8"

SPA_SHELL = b"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Harbour timetable</title><script src="/static/app.js"></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div></body></html>"""

TIMETABLE = [
    "The ferry to Lighthouse Island leaves the north quay at nine every morning.",
    "On stormy days the harbour master moves the crossing to the afternoon tide.",
    "Tickets are sold at the kiosk beside the fish market, cash or card.",
]


def spa_script(other_origin: str) -> bytes:
    """The shell's /static/app.js: writes TIMETABLE into #root once the page has loaded."""
    paragraphs = "".join(f"<p>{p}</p>" for p in TIMETABLE)
    return f"""
document.addEventListener("DOMContentLoaded", function () {{
  document.getElementById("root").innerHTML = "<h1>Harbour timetable</h1>{paragraphs}";
  fetch("{other_origin}/track?from=app").catch(function () {{}});
  var pixel = new Image(); pixel.src = "{other_origin}/pixel.png";
  document.body.appendChild(pixel);
  fetch("/private/secret.json").catch(function () {{}});
}});
""".encode()


def spa_pages(other_origin: str, *, more_script: bytes = b"") -> dict[str, Page]:
    """The app at /timetable: robots.txt (disallowing /private/), the shell, its script
    (`spa_script`, then `more_script`) and the disallowed /private/secret.json."""
    return {
        "/robots.txt": Page(b"User-agent: *\nDisallow: /private/\n", TEXT),
        "/timetable": Page(SPA_SHELL),
        "/static/app.js": Page(spa_script(other_origin) + more_script, JAVASCRIPT),
        "/private/secret.json": Page(b'{"secret": 1}', "application/json"),
    }


def calendar_page(month: str) -> Page:
    """A crawl trap: every month links to the month before and after, without end."""
    try:
        current = datetime.strptime(month, "%Y-%m")
    except ValueError:
        current = datetime(2024, 1, 1)
    previous = (current.replace(day=1) - timedelta(days=1)).strftime("%Y-%m")
    following = (current.replace(day=28) + timedelta(days=4)).strftime("%Y-%m")
    name = current.strftime("%B %Y")
    return html_page(
        f"Events calendar: {name}",
        [f"No events are scheduled at the harbour in {name}."],
        [
            (f"/calendar?month={previous}", "Previous month"),
            (f"/calendar?month={following}", "Next month"),
        ],
    )


def hops_page(route: str) -> Page:
    """`/hops/N` redirects to `/hops/N-1`, and `/hops/1` to `/about`: N redirects in all."""
    try:
        remaining = int(route.removeprefix("/hops/"))
    except ValueError:
        return html_page("Not found", ["No such hop."], status=404)
    return redirect(f"/hops/{remaining - 1}" if remaining > 1 else "/about", 302)


# --- the default site ------------------------------------------------------------------

ARTICLES: dict[str, tuple[str, list[str], list[str]]] = {
    "/articles/tides": (
        "Reading the tides",
        [
            "The harbour of Harbour Town sees two high tides a day, and the spring tides "
            "after a full moon lift the water almost three metres above the quay steps.",
            "Harbour master Ines Keeper publishes the tide table every Sunday, and the "
            "fishing fleet plans its departures around the morning ebb.",
            "Visitors who walk on the sandbanks at low tide should be back on the shore an "
            "hour before the water turns, because the channel fills faster than it looks.",
        ],
        ["/articles/fishing-fleet", "/articles/lighthouse"],
    ),
    "/articles/lighthouse": (
        "The lighthouse on Gull Point",
        [
            "The lighthouse on Gull Point was built in 1871 by the engineer Tomas Brandt, "
            "who also designed the stone breakwater that shelters the inner basin.",
            "Its lamp was electrified in 1934, and since 1992 the light has been automatic, "
            "watched from the Port Authority office on Quay Street.",
            "Every August the Harbour Town Historical Society opens the tower to visitors, "
            "who climb one hundred and twelve steps to the lantern room.",
        ],
        ["/articles/harbour-history", "/articles/tides"],
    ),
    "/articles/fishing-fleet": (
        "The fishing fleet",
        [
            "Fourteen boats still fish out of Harbour Town, most of them crewed by families "
            "who have worked the same grounds for three generations.",
            "Skipper Marta Olsen of the trawler Northern Star lands cod and haddock at the "
            "fish market every Tuesday and Friday before dawn.",
            "The cooperative founded by the skippers in 1958 owns the ice plant and sells "
            "the catch directly to restaurants along the coast.",
        ],
        ["/articles/tides", "/articles/storm-repairs"],
    ),
    "/articles/harbour-history": (
        "A short history of the harbour",
        [
            "Harbour Town grew around a natural inlet where merchants from Bergen traded "
            "salt and timber for dried fish in the fifteenth century.",
            "The railway reached the harbour in 1889, and for fifty years trains carried the "
            "catch inland to the markets of the capital.",
            "After the cannery closed in 1971, the old warehouses on Quay Street became "
            "workshops, a maritime museum and the offices of the Harbour Town Gazette.",
        ],
        ["/articles/lighthouse", "/about"],
    ),
    "/articles/storm-repairs": (
        "Storm repairs on the east pier",
        [
            "The January storm broke three sections of the east pier and sank two moored "
            "sailing boats, although nobody was injured.",
            "Engineers from Nordic Marine Works replaced the damaged concrete caissons in "
            "six weeks, working at night around the tides.",
            "The harbour reopens on Monday after the storm repairs, and the Port Authority "
            "asks skippers to check their moorings before the next gale.",
        ],
        ["/articles/fishing-fleet", "/articles/harbour-history"],
    ),
}


def default_pages(
    base_url: str, *, crawl_delay: float | None = 0.5, big_bytes: int = 3 * 1024 * 1024
) -> dict[str, Page]:
    """The default Harbour Town site (see the module docstring for what it contains)."""
    pages: dict[str, Page] = {}
    robots = ["User-agent: *", "Disallow: /private/"]
    if crawl_delay is not None:
        robots.append(f"Crawl-delay: {crawl_delay}")
    robots.append(f"Sitemap: {base_url}/sitemap_index.xml")
    pages["/robots.txt"] = Page(("\n".join(robots) + "\n").encode(), TEXT)

    home_links = [
        ("/about", "About us"),
        ("/team", "Our team"),
        ("/docs/guide", "Visitor guide"),
        ("/private/secret", "Staff only"),
        ("/redirect-me", "Old about page"),
        ("/loop-a", "Loop"),
        ("/slow", "Slow page"),
        ("/big", "Big page"),
        ("/files/report.pdf", "Annual report (PDF)"),
        ("/files/memo.docx", "Harbour memo (DOCX)"),
        ("/image.png", "Harbour photo"),
        ("/calendar?month=2024-01", "Events calendar"),
        ("/about?utm_source=x&utm_medium=y", "About us (newsletter)"),
        ("/about?fbclid=123", "About us (shared)"),
        ("/rate-limited", "Busy page"),
        ("/gone", "Retired page"),
        ("/missing", "Broken link"),
        *((path, title) for path, (title, _, _) in ARTICLES.items()),
        (f"{base_url}/articles/tides#high-water", "Tides (absolute link with fragment)"),
        ("mailto:gazette@harbour.example", "Write to us"),
        ("javascript:void(0)", "Menu"),
    ]
    home = html_page(
        "Harbour Town Gazette",
        [
            "The Harbour Town Gazette reports on the life of a small fishing harbour: the "
            "tides, the fleet, the lighthouse and the people who keep them running.",
            "This week we follow the storm repairs on the east pier and look back at two "
            "centuries of trade on Quay Street.",
        ],
        home_links,
    )
    # A link crawlers are asked not to follow, next to the ordinary ones.
    nofollow = b'  <p><a rel="nofollow" href="/login">Staff login</a></p>\n</body>'
    pages["/"] = Page(home.body.replace(b"</body>", nofollow), HTML)

    for path, (title, paragraphs, related) in ARTICLES.items():
        links = [(href, ARTICLES[href][0] if href in ARTICLES else "About us") for href in related]
        pages[path] = html_page(title, paragraphs, [("/", "Home"), *links])

    pages["/about"] = html_page(
        "About the Harbour Town Gazette",
        [
            "The Harbour Town Gazette has been published every Thursday since 1903 from its "
            "office in the old cannery warehouse on Quay Street.",
            "Editor Lena Fisk and four reporters cover the harbour, the fleet and the town "
            "council, and the paper is printed by Coastal Press in Bergen.",
        ],
        [("/", "Home"), ("/team", "Our team"), ("/articles/harbour-history", "History")],
    )
    pages["/team"] = html_page(
        "Our team",
        [
            "Lena Fisk edits the Gazette and writes the weekly column on town council decisions.",
            "Jonas Berg photographs the harbour, and Ines Keeper, the harbour master, "
            "contributes the tide table and the shipping notices.",
        ],
        [("/", "Home"), ("/about", "About us")],
    )
    guide_paragraphs = [
        "Harbour Town is two hours by train from the capital; the station is a five minute "
        "walk from Quay Street.",
        "The maritime museum opens daily from ten to five, and the lighthouse on Gull Point "
        "can be visited every August.",
    ]
    canonical = f'  <link rel="canonical" href="{base_url}/docs/guide">\n'
    pages["/docs/guide"] = html_page(
        "Visitor guide",
        guide_paragraphs,
        [("/", "Home"), ("/docs/guide?print=1", "Print version"), ("/articles/tides", "Tides")],
        head=canonical,
    )
    pages["/docs/guide?print=1"] = html_page(
        "Visitor guide", guide_paragraphs, [("/", "Home")], head=canonical
    )
    pages["/private/secret"] = html_page(
        "Staff notes", ["The spare key to the lighthouse hangs in the harbour office."]
    )
    pages["/login"] = html_page("Staff login", ["Staff sign in here."])
    pages["/redirect-me"] = redirect("/about", 301)
    pages["/loop-a"] = redirect("/loop-b", 302)
    pages["/loop-b"] = redirect("/loop-a", 302)
    pages["/redirect-to-10"] = redirect("http://10.0.0.1/", 302)
    pages["/gone"] = html_page("Gone", ["This page has been removed for good."], status=410)
    pages["/big"] = Page(_big_html(big_bytes), HTML)
    pages["/files/report.pdf"] = Page(_report_pdf(), PDF)
    pages["/files/memo.docx"] = Page(_memo_docx(), DOCX)
    pages["/image.png"] = Page(png_bytes(), "image/png")

    lastmod = "2024-05-06T07:08:09+00:00"
    pages["/sitemap_index.xml"] = Page(
        _sitemap_index(
            [
                (f"{base_url}/sitemap-pages.xml", lastmod),
                (f"{base_url}/sitemap-more.xml.gz", "2024-05-01"),
            ]
        ),
        XML,
    )
    pages["/sitemap-pages.xml"] = Page(
        _urlset(
            [
                (f"{base_url}/", lastmod),
                (f"{base_url}/about", "2024-04-01"),
                (f"{base_url}/team", "2024-04-02T10:00Z"),
                (f"{base_url}/docs/guide", "2024-03"),
            ]
        ),
        XML,
    )
    more = [(f"{base_url}{path}", "2024-02-1" + str(i)) for i, path in enumerate(ARTICLES)]
    more.append((f"{base_url}/files/report.pdf", "2024-01-31"))
    pages["/sitemap-more.xml.gz"] = Page(gzip.compress(_urlset(more), mtime=0), "application/gzip")
    pages["/llms.txt"] = Page(
        (
            "# Harbour Town Gazette\n\n"
            "> News from a small fishing harbour.\n\n"
            "## Pages\n\n"
            "- [Visitor guide](/docs/guide): how to get here and what to see\n"
            f"- [About the Gazette]({base_url}/about): who we are\n"
            f"- Tides: {base_url}/articles/tides\n"
        ).encode(),
        TEXT,
    )
    return pages


@functools.cache
def _report_pdf() -> bytes:
    return pdf_bytes(
        [
            "Harbour Town annual report 2023\nThe fleet landed 1,200 tonnes of fish.",
            "The Port Authority finished the storm repairs on the east pier in March.",
        ],
        title="Harbour Town annual report",
        author="Port Authority",
    )


@functools.cache
def _memo_docx() -> bytes:
    return docx_bytes()  # built once per process: python-docx takes a while


def _big_html(size: int) -> bytes:
    paragraph = b"<p>The harbour archive keeps every tide table since 1903, page after page.</p>\n"
    head = b"<!DOCTYPE html><html><head><title>Big page</title></head><body>\n"
    tail = b"</body></html>\n"
    count = max(1, (size - len(head) - len(tail)) // len(paragraph) + 1)
    return head + paragraph * count + tail


def _urlset(entries: Sequence[tuple[str, str]]) -> bytes:
    urls = "".join(
        f"  <url><loc>{html.escape(loc)}</loc><lastmod>{lastmod}</lastmod></url>\n"
        for loc, lastmod in entries
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{urls}</urlset>\n"
    ).encode()


def _sitemap_index(entries: Sequence[tuple[str, str]]) -> bytes:
    maps = "".join(
        f"  <sitemap><loc>{html.escape(loc)}</loc><lastmod>{lastmod}</lastmod></sitemap>\n"
        for loc, lastmod in entries
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{maps}</sitemapindex>\n"
    ).encode()


# --- generated sites (benchmark) -------------------------------------------------------

_PEOPLE = [
    "Ines Keeper",
    "Marta Olsen",
    "Tomas Brandt",
    "Lena Fisk",
    "Jonas Berg",
    "Aksel Dahl",
    "Sofie Lund",
    "Erik Holm",
]
_ORGS = [
    "the Port Authority",
    "Nordic Marine Works",
    "the Harbour Town Gazette",
    "the fishing cooperative",
    "Coastal Press",
    "the Historical Society",
]
_PLACES = [
    "Quay Street",
    "Gull Point",
    "the east pier",
    "the inner basin",
    "the fish market",
    "the old cannery",
]
_SENTENCES = [
    "{person} of {org} inspected {place} in {year} and reported on the state of the {thing}.",
    "In {year}, {org} moved its office to {place}, where {person} still works today.",
    "{person} wrote that the {thing} at {place} needed repairs after the winter of {year}.",
    "Visitors to {place} can read about the {thing} in an exhibition curated by {person}.",
    "{org} paid for a new {thing} at {place}, which {person} opened in {year}.",
    "According to {person}, the {thing} near {place} was the busiest in the region by {year}.",
]
_THINGS = ["breakwater", "crane", "lighthouse lamp", "ice plant", "slipway", "tide gauge"]


def _sentence(rng: random.Random) -> str:
    text = rng.choice(_SENTENCES).format(
        person=rng.choice(_PEOPLE),
        org=rng.choice(_ORGS),
        place=rng.choice(_PLACES),
        thing=rng.choice(_THINGS),
        year=rng.randint(1880, 2024),
    )
    return text[0].upper() + text[1:]


def generated_pages(
    base_url: str, n_pages: int, *, crawl_delay: float | None = None, seed: int = 0
) -> dict[str, Page]:
    """`n_pages` interlinked pages (`/` plus `/p/1` … `/p/{n-1}`), each linking to about five
    others and all reachable from `/`, with a robots.txt and a sitemap listing them all."""
    paths = ["/"] + [f"/p/{i}" for i in range(1, n_pages)]
    pages: dict[str, Page] = {}
    robots = ["User-agent: *", "Disallow:"]
    if crawl_delay is not None:
        robots.append(f"Crawl-delay: {crawl_delay}")
    robots.append(f"Sitemap: {base_url}/sitemap.xml")
    pages["/robots.txt"] = Page(("\n".join(robots) + "\n").encode(), TEXT)
    count = len(paths)
    for i, path in enumerate(paths):
        rng = random.Random(seed * 1_000_003 + i)
        targets = dict.fromkeys(
            (i + step) % count for step in (1, 2, count // 2, 7 * i + 3, 31 * i + 11)
        )
        targets.pop(i, None)
        links = [(paths[t], f"Archive entry {t}") for t in targets]
        paragraphs = [" ".join(_sentence(rng) for _ in range(3)) for _ in range(2)]
        paragraphs[0] = f"Archive entry {i} of the Harbour Town records. " + paragraphs[0]
        pages[path] = html_page(f"Harbour archive entry {i}", paragraphs, links)
    pages["/sitemap.xml"] = Page(
        _urlset([(f"{base_url}{path}", "2024-05-06") for path in paths]), XML
    )
    return pages


def generated_site(n_pages: int, *, crawl_delay: float | None = None) -> CrawlSite:
    """A (not yet started) CrawlSite serving `generated_pages(n_pages)`."""
    return CrawlSite(n_pages=n_pages, crawl_delay=crawl_delay)
