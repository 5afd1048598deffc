"""Crawls: create them, run the frontier loop, recrawl, and route pages into ingestion.

The crawl state is the `CrawlPage` table, not memory: the loop takes queued pages, fetches
them (politely: robots.txt, per-host rate and Crawl-delay, Retry-After), records the result on
the row, stores changed content as a Document of the source (which then takes the ordinary
parse → chunk → embed path), and queues the links it discovers. Killed at any point, the next
run continues from the rows; pages already fetched are never fetched again in that round.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Required, TypedDict, Unpack
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ingest.actions.sources import (
    do_add_file,
    do_create_source,
    do_delete_document,
    do_refresh_source_progress,
    do_reingest_source,
    validate_source_options,
)
from ingest.crawler.fetch import Fetcher, FetchError, FetchResult
from ingest.crawler.links import extract_links
from ingest.crawler.ratelimit import HostRateLimiter
from ingest.crawler.robots import RobotsCache
from ingest.crawler.sitemaps import parse_llms_txt, parse_sitemap
from ingest.crawler.urls import in_scope, normalize_url, path_key
from ingest.dispatch import document_groups, enqueue_crawl, enqueue_documents
from ingest.models import (
    PENDING,
    STOPPED_STATUSES,
    CrawlPage,
    CrawlPageStatus,
    Document,
    DocumentStatus,
    Source,
    SourceKind,
    SourceStatus,
)
from ingest.selectors import source_is_stopped
from system import slices
from workspaces.errors import Conflict, InvalidInput
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

# Rounds of re-processing an inline crawl gives documents sent round again at its end (one
# is enough: a document chunked again with its source's final counts stays as it is).
_INLINE_ROUNDS = 3

MODES = {"single": SourceKind.URL, "sitemap": SourceKind.SITEMAP, "recursive": SourceKind.CRAWL}
# Media types routed to the parsers; everything else is skipped with its type as the reason.
INGESTIBLE_TYPES = {
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
_MAX_ATTEMPTS = 3
_MAX_SITEMAPS = 200


@dataclass(frozen=True, slots=True)
class CrawlSettings:
    url: str
    mode: str
    max_pages: int = 500
    max_depth: int = 3
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    rate: float | None = None  # requests/s per host; None: CRAWL_RATE_PER_HOST; 0: no limit
    include_subdomains: bool = False
    use_llms_txt: bool = True

    def as_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "mode": self.mode,
            "max_pages": self.max_pages,
            "max_depth": self.max_depth,
            "allow": list(self.allow),
            "deny": list(self.deny),
            "rate": self.rate,
            "include_subdomains": self.include_subdomains,
            "use_llms_txt": self.use_llms_txt,
        }

    @classmethod
    def from_source(cls, source: Source) -> CrawlSettings:
        data = source.settings
        return cls(
            url=data["url"],
            mode=data["mode"],
            max_pages=int(data.get("max_pages", 500)),
            max_depth=int(data.get("max_depth", 3)),
            allow=tuple(data.get("allow", ())),
            deny=tuple(data.get("deny", ())),
            rate=data.get("rate"),
            include_subdomains=bool(data.get("include_subdomains", False)),
            use_llms_txt=bool(data.get("use_llms_txt", True)),
        )


class CrawlRequest(TypedDict, total=False):
    """A crawl as a person or a client asks for one, before `validate_crawl_settings`."""

    url: Required[str]
    mode: Required[str]
    max_pages: int | None
    max_depth: int | None
    allow: Iterable[str]
    deny: Iterable[str]
    rate: float | None  # requests/s per host; None: CRAWL_RATE_PER_HOST; 0: no limit
    include_subdomains: bool
    use_llms_txt: bool


def validate_crawl_settings(**request: Unpack[CrawlRequest]) -> CrawlSettings:
    """Check a crawl request field by field; InvalidInput names the field at fault."""
    url, mode, rate = request["url"], request["mode"], request.get("rate")
    max_pages, max_depth = request.get("max_pages"), request.get("max_depth")
    allow, deny = tuple(request.get("allow", ())), tuple(request.get("deny", ()))
    if mode not in MODES:
        raise InvalidInput(f"mode: choose one of {', '.join(MODES)} (got {mode!r}).")
    normalized = normalize_url(url.strip()) if url else None
    if not normalized:
        raise InvalidInput(f"url: {url!r} is not an http(s) URL.")
    if max_pages is not None and not 1 <= max_pages <= 1_000_000:
        raise InvalidInput("max_pages: must be between 1 and 1,000,000.")
    if max_depth is not None and not 0 <= max_depth <= 100:
        raise InvalidInput("max_depth: must be between 0 and 100.")
    if rate is not None and rate < 0:
        raise InvalidInput("rate: requests per second cannot be negative (0 turns the limit off).")
    for name, patterns in (("allow", allow), ("deny", deny)):
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise InvalidInput(
                    f"{name}: {pattern!r} is not a valid regular expression ({exc})."
                ) from None
    return CrawlSettings(
        url=normalized,
        mode=mode,
        max_pages=max_pages or (1 if mode == "single" else 500),
        max_depth=3 if max_depth is None else max_depth,
        allow=allow,
        deny=deny,
        rate=rate,
        include_subdomains=request.get("include_subdomains", False),
        use_llms_txt=request.get("use_llms_txt", True),
    )


@transaction.atomic
def do_create_crawl_source(
    *,
    workspace: Workspace,
    crawl: CrawlSettings,
    name: str = "",
    tags: Iterable[str] = (),
    created_by: Any = None,
    options: dict[str, object] | None = None,
) -> Source:
    """A crawl source with its seed page queued; the crawl task is enqueued on commit."""
    source = do_create_source(
        workspace=workspace,
        kind=MODES[crawl.mode],
        name=name or crawl.url,
        origin=crawl.url,
        tags=tags,
        settings={**crawl.as_json(), **(options or {})},
        created_by=created_by,
    )
    _add_pages(source, [(crawl.url, 0, "seed", None)])
    return source


def do_start_crawl(*, source: Source, enqueue: bool = True) -> Source:
    """Run (or re-run) a crawl. A finished crawl starts a new round: every page is queued
    again with its validators, so unchanged pages answer 304 and cost nothing."""
    with transaction.atomic():
        source = Source.objects.select_for_update().get(pk=source.pk)
        if not source.is_crawl:
            raise InvalidInput("This source is not a crawl.")
        if source.status == SourceStatus.DELETING:
            raise Conflict("This source is being deleted.")
        if source.is_finished:
            CrawlPage.objects.filter(source=source).exclude(via="redirect").update(
                status=CrawlPageStatus.QUEUED, attempts=0, not_before=None, reason=""
            )
            source.settings = {**source.settings, "round": int(source.settings.get("round", 1)) + 1}
        source.status = SourceStatus.RUNNING
        source.stage = "crawling"
        source.error = ""
        source.started_at = timezone.now()
        source.finished_at = None
        source.save(
            update_fields=["status", "stage", "error", "settings", "started_at", "finished_at"]
        )
        if enqueue:
            enqueue_crawl(source)
    return source


@transaction.atomic
def do_create_crawl(
    *,
    workspace: Workspace,
    name: str = "",
    tags: Iterable[str] = (),
    known_only: object = None,
    token_budget: object = None,
    created_by: Any = None,
    start: bool = True,
    enqueue: bool = True,
    **request: Unpack[CrawlRequest],
) -> Source:
    """A crawl as the API, the sources screen and `manage.py crawl` ask for one: the request
    is checked (InvalidInput names the field at fault), the source created with its seed
    page and, with `start`, started; the crawl task is enqueued on commit unless `enqueue`
    is False (a caller that runs the crawl itself)."""
    crawl = validate_crawl_settings(**request)
    source = do_create_crawl_source(
        workspace=workspace,
        crawl=crawl,
        name=name,
        tags=tags,
        created_by=created_by,
        options=validate_source_options(known_only=known_only, token_budget=token_budget),
    )
    return do_start_crawl(source=source, enqueue=enqueue) if start else source


def do_rerun_source(*, source: Source, enqueue: bool = True) -> int:
    """Re-ingest any source: a crawl starts a new round (conditional requests), other kinds
    re-process what changed. Returns the number of documents or pages queued."""
    if source.is_crawl:
        do_start_crawl(source=source, enqueue=enqueue)
        return CrawlPage.objects.filter(source=source, status=CrawlPageStatus.QUEUED).count()
    return do_reingest_source(source=source, enqueue=enqueue)


def _url_hash(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _add_pages(source: Source, pages: Iterable[tuple[str, int, str, Any]]) -> int:
    """Queue new URLs (url, depth, via, sitemap lastmod); URLs already known are ignored."""
    rows: dict[str, CrawlPage] = {}
    for url, depth, via, lastmod in pages:
        rows.setdefault(
            _url_hash(url),
            CrawlPage(
                workspace_id=source.workspace_id,
                source=source,
                url=url,
                url_hash=_url_hash(url),
                depth=depth,
                via=via,
                sitemap_lastmod=lastmod,
            ),
        )
    created = CrawlPage.objects.bulk_create(rows.values(), ignore_conflicts=True, batch_size=500)
    return len(created)


@dataclass(frozen=True, slots=True)
class _PoliteFetcher:
    """The fetcher as robots.txt sees it: its request to a host waits its turn too."""

    fetcher: Fetcher
    limiter: HostRateLimiter

    def fetch(self, url: str) -> FetchResult:
        # Rate only: asking for the Crawl-delay here would wait for this very robots.txt.
        return self.fetcher.fetch(url, before_request=lambda u: self.limiter.wait(_host(u)))


def _host(url: str) -> str:
    return urlsplit(url).netloc


@dataclass
class _Crawl:
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


def do_run_crawl(
    *,
    source_id: int,
    fetcher: Fetcher | None = None,
    on_progress: Callable[[Source], object] | None = None,
    process: Callable[[list[int]], object] | None = None,
) -> str:
    """Run the crawl loop until the frontier is empty, the source is cancelled, or the page
    limit is reached; returns the source's status. Documents of fetched pages are queued for
    processing as the crawl goes (or processed by the caller when it runs inline)."""
    source = Source.objects.filter(pk=source_id).first()
    if source is None or source.status in STOPPED_STATUSES:
        return "gone" if source is None else str(source.status)
    config = CrawlSettings.from_source(source)
    rate = settings.CRAWL_RATE_PER_HOST if config.rate is None else config.rate
    own_fetcher = fetcher is None
    fetcher = fetcher or Fetcher(
        user_agent=settings.CRAWL_USER_AGENT,
        timeout=settings.CRAWL_TIMEOUT_SECONDS,
        max_bytes=settings.CRAWL_MAX_RESPONSE_BYTES,
        max_redirects=settings.CRAWL_MAX_REDIRECTS,
        allowed_networks=settings.CRAWL_ALLOWED_NETWORKS,
    )
    limiter = HostRateLimiter(rate_per_second=rate or None)
    crawl = _Crawl(
        source=source,
        config=config,
        fetcher=fetcher,
        robots=RobotsCache(_PoliteFetcher(fetcher, limiter), user_agent=settings.CRAWL_USER_AGENT),
        limiter=limiter,
        allow=[re.compile(p) for p in config.allow],
        deny=[re.compile(p) for p in config.deny],
        process=process,
    )
    # A killed run leaves pages it was fetching (back to the queue) and may leave documents
    # it stored but had not handed to the pipeline yet (handed over now; processing twice is
    # harmless, never processing is not).
    CrawlPage.objects.filter(source=source, status=CrawlPageStatus.FETCHING).update(
        status=CrawlPageStatus.QUEUED
    )
    crawl.new_documents = list(
        Document.objects.filter(source=source, status=DocumentStatus.QUEUED).values_list(
            "pk", flat=True
        )
    )
    try:
        if source.settings.get("seeded_round") != source.settings.get("round", 1):
            _seed(crawl)
        with ThreadPoolExecutor(max_workers=max(1, settings.CRAWL_CONCURRENCY)) as pool:
            while True:
                if source_is_stopped(source.pk):
                    break
                reason = slices.stop_reason()
                if reason in {slices.BUDGET, slices.SHUTDOWN}:
                    # The slice is over (system/slices.py): hand on what was fetched; the
                    # frontier is in the database, so the next slice goes on from here.
                    _flush_documents(crawl)
                    raise slices.SliceInterrupted(reason)
                batch = _claim(source, max(1, settings.CRAWL_CONCURRENCY))
                if not batch:
                    if not _wait_for_deferred(source):
                        break
                    continue
                results = list(pool.map(lambda page: _fetch(crawl, page), batch))
                for page, outcome in zip(batch, results, strict=True):
                    _record(crawl, page, outcome)
                # Hand documents on in full groups: their chunks are embedded together.
                if len(crawl.new_documents) >= settings.INGEST_DOCUMENTS_PER_TASK:
                    _flush_documents(crawl)
                refreshed = do_refresh_source_progress(source_id=source.pk)
                if on_progress is not None and refreshed is not None:
                    on_progress(refreshed)
    finally:
        if own_fetcher:
            fetcher.close()
    _flush_documents(crawl)
    Source.objects.filter(pk=source.pk, status=SourceStatus.RUNNING).update(stage="processing")
    final = do_refresh_source_progress(source_id=source.pk)
    # Inline, documents sent round again by the end (chunked before the text they share
    # with later pages was known to repeat: ingest/actions/boilerplate.py) are the caller's.
    pending = Document.objects.filter(source=source, status__in=PENDING)
    for _ in range(_INLINE_ROUNDS):
        if process is None or final is None or not pending.exists():
            break
        for group in document_groups(pending.values_list("pk", flat=True)):
            process(group)
        final = do_refresh_source_progress(source_id=source.pk)
    return str(final.status) if final else "gone"


def _claim(source: Source, limit: int) -> list[CrawlPage]:
    now = timezone.now()
    with transaction.atomic():
        pages = list(
            CrawlPage.objects.select_for_update(skip_locked=True)
            .filter(source=source, status=CrawlPageStatus.QUEUED)
            .filter(Q(not_before__isnull=True) | Q(not_before__lte=now))
            .order_by("depth", "id")[:limit]
        )
        CrawlPage.objects.filter(pk__in=[p.pk for p in pages]).update(
            status=CrawlPageStatus.FETCHING
        )
    return pages


def _wait_for_deferred(source: Source) -> bool:
    """Sleep until the earliest Retry-After page is due; False when nothing is left."""
    soonest = (
        CrawlPage.objects.filter(
            source=source, status=CrawlPageStatus.QUEUED, not_before__isnull=False
        )
        .order_by("not_before")
        .values_list("not_before", flat=True)
        .first()
    )
    if soonest is None:
        return False
    time.sleep(max(0.0, min((soonest - timezone.now()).total_seconds(), 5.0)) + 0.01)
    return True


@dataclass(frozen=True, slots=True)
class _Outcome:
    result: FetchResult | None = None
    error: FetchError | None = None
    robots_disallowed: bool = False


def _fetch(crawl: _Crawl, page: CrawlPage) -> _Outcome:
    """Runs in a pool thread: robots, politeness, the request. No database access here."""
    try:
        if not crawl.robots.allowed(page.url):
            error = crawl.robots.fetch_error(page.url)
            return _Outcome(error=error) if error else _Outcome(robots_disallowed=True)
        return _Outcome(
            result=crawl.fetcher.fetch(
                page.url,
                etag=page.etag or None,
                last_modified=page.last_modified or None,
                before_request=crawl.polite,
            )
        )
    except FetchError as exc:
        return _Outcome(error=exc)


def _record(crawl: _Crawl, page: CrawlPage, outcome: _Outcome) -> None:
    page.attempts += 1
    page.fetched_at = timezone.now()
    if outcome.robots_disallowed:
        _finish(page, CrawlPageStatus.SKIPPED, "disallowed by robots.txt")
        return
    if outcome.error is not None:
        _finish(page, CrawlPageStatus.FAILED, f"{outcome.error.reason}: {outcome.error.message}")
        return
    result = outcome.result
    assert result is not None
    page.http_status = result.status
    page.elapsed_ms = int(result.elapsed * 1000)
    page.redirects = list(result.redirects)
    page.final_url = result.url if result.url != page.url else ""
    if result.status in {429, 503} and page.attempts < _MAX_ATTEMPTS:
        delay = min(
            result.retry_after or 2.0**page.attempts, settings.CRAWL_MAX_RETRY_AFTER_SECONDS
        )
        crawl.limiter.defer(urlsplit(page.url).netloc, delay)
        page.not_before = timezone.now() + timedelta(seconds=delay)
        _finish(page, CrawlPageStatus.QUEUED, f"HTTP {result.status}; retrying after {delay:g} s")
        return
    if result.not_modified:
        _finish(page, CrawlPageStatus.INGESTED, "not modified since the last crawl")
        return
    if result.status in {404, 410}:
        _gone(crawl, page)
        return
    if result.status >= 400:
        _finish(page, CrawlPageStatus.FAILED, f"HTTP {result.status}")
        return
    page.etag = result.etag or ""
    page.last_modified = result.last_modified or ""
    page.content_type = result.content_type[:120]
    final = normalize_url(result.url) or page.url
    if final != page.url:
        reason = crawl.wanted(final)
        if reason:
            _finish(page, CrawlPageStatus.SKIPPED, f"redirects to {final}: {reason}")
            return
        if (
            CrawlPage.objects.filter(source=crawl.source, url_hash=_url_hash(final))
            .exclude(pk=page.pk)
            .exists()
        ):
            _finish(page, CrawlPageStatus.SKIPPED, f"redirects to {final}, crawled as its own page")
            return
    if result.content_type not in INGESTIBLE_TYPES:
        _finish(
            page,
            CrawlPageStatus.SKIPPED,
            f"unsupported content type {result.content_type or 'unknown'}",
        )
        return
    if result.content_type in {"text/html", "application/xhtml+xml"}:
        links = extract_links(result.content, base_url=result.url)
        canonical = links.canonical
        if canonical and canonical not in {page.url, final} and not crawl.wanted(canonical):
            _add_pages(crawl.source, [(canonical, page.depth, "canonical", None)])
            _finish(page, CrawlPageStatus.SKIPPED, f"canonical URL is {canonical}")
            return
        if crawl.config.mode == "recursive" and page.depth < crawl.config.max_depth:
            _discover(crawl, page, links.links)
    _ingest(crawl, page, result, url=final)


def _discover(crawl: _Crawl, page: CrawlPage, links: list[str]) -> None:
    """Queue in-scope links one level deeper, within the page and query-variant limits."""
    known = CrawlPage.objects.filter(source=crawl.source).count()
    room = crawl.config.max_pages - known
    if room <= 0:
        return
    candidates = []
    variants: dict[str, int] = {}
    for url in links:
        if crawl.wanted(url) is not None:
            continue
        if urlsplit(url).query:
            key = path_key(url)
            if key not in variants:
                variants[key] = _query_variants(crawl.source, key)
            if variants[key] >= settings.CRAWL_MAX_QUERY_VARIANTS:
                continue
            variants[key] += 1
        candidates.append((url, page.depth + 1, "link", None))
    _add_pages(crawl.source, candidates[:room])


def _query_variants(source: Source, key: str) -> int:
    return CrawlPage.objects.filter(source=source, url__startswith=key + "?").count()


def _ingest(crawl: _Crawl, page: CrawlPage, result: FetchResult, *, url: str) -> None:
    digest = hashlib.sha256(result.content).hexdigest()
    document = page.document
    if document is not None and digest == page.content_hash and document.content_hash == digest:
        _finish(page, CrawlPageStatus.INGESTED, "unchanged")
        return
    added = do_add_file(source=crawl.source, path=url, chunks=[result.content])
    page.document = added.document
    page.content_hash = digest
    if added.changed:
        crawl.new_documents.append(added.document.pk)
    _finish(page, CrawlPageStatus.INGESTED, "")


def _gone(crawl: _Crawl, page: CrawlPage) -> None:
    """404/410: the page is gone; its document goes too unless CRAWL_KEEP_GONE_PAGES."""
    status = page.http_status
    if page.document_id and not settings.CRAWL_KEEP_GONE_PAGES:
        document = Document.objects.filter(pk=page.document_id).first()
        if document is not None:
            do_delete_document(document=document)
        page.document = None
        _finish(page, CrawlPageStatus.FAILED, f"HTTP {status}: gone; its document was removed")
        return
    _finish(page, CrawlPageStatus.FAILED, f"HTTP {status}")


def _finish(page: CrawlPage, status: str, reason: str) -> None:
    page.status = status
    page.reason = reason[:2000]
    if status != CrawlPageStatus.QUEUED:
        page.not_before = None
    page.save()


def _flush_documents(crawl: _Crawl) -> None:
    if not crawl.new_documents:
        return
    ids, crawl.new_documents = crawl.new_documents, []
    if crawl.process is not None:
        crawl.process(ids)
        return
    with transaction.atomic():
        enqueue_documents(ids)


def _seed(crawl: _Crawl) -> None:
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
                    _add_pages(crawl.source, [(u, 1, "llms", None) for u in urls[: max(0, room)]])
        except FetchError as exc:
            logger.info("No llms.txt for %s: %s", config.url, exc.message)
    Source.objects.filter(pk=crawl.source.pk).update(
        settings={**crawl.source.settings, "seeded_round": crawl.source.settings.get("round", 1)}
    )


def _seed_from_sitemaps(crawl: _Crawl) -> None:
    """Sitemap mode: the given URL is a sitemap (index), or a site whose robots.txt names them.
    Pages whose <lastmod> is unchanged since they were ingested are not fetched again."""
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
        source=crawl.source, url_hash=_url_hash(config.url), via="seed"
    ).delete()
    known = {
        p.url_hash: p
        for p in CrawlPage.objects.filter(
            source=crawl.source, url_hash__in=[_url_hash(u) for u, *_ in pages]
        )
    }
    fresh = []
    for url, depth, via, lastmod in pages[: config.max_pages]:
        page = known.get(_url_hash(url))
        if page is None:
            fresh.append((url, depth, via, lastmod))
        elif (
            page.status == CrawlPageStatus.QUEUED
            and lastmod is not None
            and page.sitemap_lastmod == lastmod
            and page.document_id is not None
        ):
            _finish(page, CrawlPageStatus.INGESTED, "unchanged according to the sitemap's lastmod")
        elif lastmod is not None and page.sitemap_lastmod != lastmod:
            CrawlPage.objects.filter(pk=page.pk).update(sitemap_lastmod=lastmod)
    _add_pages(crawl.source, fresh)
