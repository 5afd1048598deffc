"""The crawl loop: take queued pages, fetch them, record each result, hand documents on.

The crawl state is the `CrawlPage` table, not memory: the loop takes queued pages, fetches
them (politely: robots.txt, per-host rate and Crawl-delay, Retry-After), records the result on
the row, stores changed content as a Document of the source (which then takes the ordinary
parse → chunk → embed path), and queues the links it discovers. Killed at any point, the next
run continues from the rows; pages already fetched are never fetched again in that round.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ingest.actions.crawl.gone import mark_alive, page_gone
from ingest.actions.crawl.pages import add_pages, finish_page, url_hash
from ingest.actions.crawl.request import CrawlSettings
from ingest.actions.crawl.run import CrawlRun, PoliteFetcher, crawl_policy, crawl_renderer
from ingest.actions.crawl.seed import seed
from ingest.actions.sources import do_add_file, do_refresh_source_progress
from ingest.crawler.fetch import Fetcher, FetchError, FetchResult
from ingest.crawler.javascript import is_html, javascript_verdict
from ingest.crawler.policy import Action, Outcome, PageFetch
from ingest.crawler.ratelimit import HostRateLimiter
from ingest.crawler.render import RenderError
from ingest.crawler.robots import RobotsCache
from ingest.dispatch import document_groups, enqueue_documents
from ingest.models import (
    PENDING,
    STOPPED_STATUSES,
    CrawlPage,
    CrawlPageStatus,
    Document,
    DocumentStatus,
    PageChange,
    PublishedSource,
    Source,
    SourceStatus,
)
from ingest.parsers.dates import parse_http_header
from ingest.selectors import source_is_stopped
from system import slices

# Rounds of re-processing an inline crawl gives documents sent round again at its end (one
# is enough: a document chunked again with its source's final counts stays as it is).
_INLINE_ROUNDS = 3


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
    crawl = CrawlRun(
        source=source,
        config=config,
        fetcher=fetcher,
        robots=RobotsCache(PoliteFetcher(fetcher, limiter), user_agent=settings.CRAWL_USER_AGENT),
        limiter=limiter,
        policy=crawl_policy(config),
        process=process,
    )
    if config.render:
        crawl.renderer = crawl_renderer(crawl)
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
            seed(crawl)
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
                for page, fetched in zip(batch, results, strict=True):
                    _record(crawl, page, fetched)
                # Hand documents on in full groups: their chunks are embedded together.
                if len(crawl.new_documents) >= settings.INGEST_DOCUMENTS_PER_TASK:
                    _flush_documents(crawl)
                refreshed = do_refresh_source_progress(source_id=source.pk)
                if on_progress is not None and refreshed is not None:
                    on_progress(refreshed)
    finally:
        if crawl.renderer is not None:
            crawl.renderer.close()
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
class _Fetched:
    """What a pool thread brings back for one page: an answer, an error, or robots' no."""

    result: FetchResult | None = None
    error: FetchError | None = None
    robots_disallowed: bool = False


def _fetch(crawl: CrawlRun, page: CrawlPage) -> _Fetched:
    """Runs in a pool thread: robots, politeness, the request. No database access here."""
    try:
        if not crawl.robots.allowed(page.url):
            error = crawl.robots.fetch_error(page.url)
            return _Fetched(error=error) if error else _Fetched(robots_disallowed=True)
        return _Fetched(
            result=crawl.fetcher.fetch(
                page.url,
                etag=page.etag or None,
                last_modified=page.last_modified or None,
                before_request=crawl.polite,
            )
        )
    except FetchError as exc:
        return _Fetched(error=exc)


def _record(crawl: CrawlRun, page: CrawlPage, fetched: _Fetched) -> None:
    """Ask the policy what the fetch means for the page (ingest/crawler/policy.py), then
    write it: the page's row, the URLs it queues, its document."""
    page.attempts += 1
    page.fetched_at = timezone.now()
    fetch = _page_fetch(crawl, page, fetched)
    decided = crawl.policy.decide(fetch)
    result = fetched.result
    if result is not None:
        page.http_status = result.status
        page.elapsed_ms = int(result.elapsed * 1000)
        page.redirects = list(result.redirects)
        page.final_url = result.url if result.url != page.url else ""
        if decided.validators:
            page.etag = result.etag or ""
            page.last_modified = result.last_modified or ""
            page.content_type = result.content_type[:120]
    _perform(crawl, page, fetch, decided)


def _perform(crawl: CrawlRun, page: CrawlPage, fetch: PageFetch, decided: Outcome) -> None:
    """The writes of each outcome: every one finishes the page's row."""
    match decided.action:
        case Action.RETRY:
            crawl.limiter.defer(urlsplit(page.url).netloc, decided.delay)
            page.not_before = timezone.now() + timedelta(seconds=decided.delay)
            finish_page(page, CrawlPageStatus.QUEUED, decided.reason)
        case Action.GONE:
            page_gone(page, status=CrawlPageStatus.FAILED, reason=f"HTTP {page.http_status}")
        case Action.CANONICAL:
            add_pages(crawl.source, [(decided.url, page.depth, "canonical", None)])
            finish_page(page, CrawlPageStatus.SKIPPED, decided.reason)
        case Action.INGEST:
            if decided.discover:
                _discover(crawl, page, fetch.links.links)
            _ingest(crawl, page, fetch.response, url=decided.url)
        case Action.KEEP:
            mark_alive(page)
            page.run_change = PageChange.UNCHANGED if page.document_id else ""
            finish_page(page, CrawlPageStatus.INGESTED, decided.reason)
        case Action.FAIL | Action.SKIP:
            page.run_change = ""
            finish_page(page, _PAGE_STATUS[decided.action], decided.reason)


# What the page's row says for the outcomes that only record a reason.
_PAGE_STATUS = {
    Action.FAIL: CrawlPageStatus.FAILED,
    Action.SKIP: CrawlPageStatus.SKIPPED,
}


def _page_fetch(crawl: CrawlRun, page: CrawlPage, fetched: _Fetched) -> PageFetch:
    """The fetch as the policy reads it, with the one fact it needs from the database:
    whether the URL the page redirected to is another page of this crawl."""
    fetch = PageFetch(
        url=page.url,
        depth=page.depth,
        attempts=page.attempts,
        result=fetched.result,
        error=fetched.error,
        robots_disallowed=fetched.robots_disallowed,
    )
    if fetch.result is None or not fetch.redirected:
        return fetch
    known = (
        CrawlPage.objects.filter(source=crawl.source, url_hash=url_hash(fetch.final))
        .exclude(pk=page.pk)
        .exists()
    )
    return replace(fetch, final_known=known)


def _discover(crawl: CrawlRun, page: CrawlPage, links: list[str]) -> None:
    """Queue in-scope links one level deeper, within the page and query-variant limits."""
    known = CrawlPage.objects.filter(source=crawl.source).count()
    room = crawl.config.max_pages - known
    if room <= 0:
        return
    urls = crawl.policy.links_to_queue(
        links, queued_variants=lambda key: _query_variants(crawl.source, key)
    )
    add_pages(crawl.source, [(url, page.depth + 1, "link", None) for url in urls[:room]])


def _query_variants(source: Source, key: str) -> int:
    return CrawlPage.objects.filter(source=source, url__startswith=key + "?").count()


def _ingest(crawl: CrawlRun, page: CrawlPage, result: FetchResult, *, url: str) -> None:
    """Store the page's content as its document; the same bytes as last time do nothing
    (no parse, embedding or extraction), other bytes go through the delta path."""
    digest = hashlib.sha256(result.content).hexdigest()
    document = page.document
    mark_alive(page)
    # A rendered document stores the DOM Chromium made, so the fetched bytes are compared
    # with the page's own hash only.
    if (
        document is not None
        and digest == page.content_hash
        and (document.content_hash == digest or document.rendered)
    ):
        page.run_change = PageChange.UNCHANGED
        finish_page(page, CrawlPageStatus.INGESTED, "unchanged")
        return
    content, needs_javascript, rendered, reason = _judge_javascript(crawl, result)
    added = do_add_file(
        source=crawl.source,
        path=url,
        chunks=[content],
        modified_at=parse_http_header(result.last_modified),
        modified_source=PublishedSource.HTTP,
        needs_javascript=needs_javascript,
        rendered=rendered,
    )
    page.document = added.document
    page.content_hash = digest
    if added.changed:
        crawl.new_documents.append(added.document.pk)
    page.run_change = (
        PageChange.ADDED
        if added.created
        else PageChange.CHANGED
        if added.changed
        else PageChange.UNCHANGED
    )
    finish_page(page, CrawlPageStatus.INGESTED, reason)


def _judge_javascript(crawl: CrawlRun, result: FetchResult) -> tuple[bytes, bool | None, bool, str]:
    """The bytes to store for a fetched page, whether it seems to need JavaScript (None:
    not HTML, not judged), whether the bytes are Chromium's rendering, and what the page's
    row says about it. A flagged page of a crawl with `render` is rendered; when that
    fails the fetched HTML is kept and the reason said."""
    if not is_html(result.content_type):
        return result.content, None, False, ""
    verdict = javascript_verdict(
        result.content,
        min_page_bytes=settings.CRAWL_JS_MIN_PAGE_BYTES,
        max_text_chars=settings.CRAWL_JS_MAX_TEXT_CHARS,
    )
    if not verdict.needs_javascript:
        return result.content, False, False, ""
    if crawl.renderer is None:
        return result.content, True, False, f"needs JavaScript: {verdict.reason}"
    try:
        rendered = crawl.renderer.render(
            result.url, result.content, result.headers.get("content-type", result.content_type)
        )
    except RenderError as exc:
        return result.content, True, False, f"needs JavaScript; not rendered: {exc}"
    blocked = f", {len(rendered.blocked)} refused" if rendered.blocked else ""
    return (
        rendered.html.encode("utf-8"),
        True,
        True,
        f"rendered in Chromium ({rendered.requests} requests{blocked})",
    )


def _flush_documents(crawl: CrawlRun) -> None:
    if not crawl.new_documents:
        return
    ids, crawl.new_documents = crawl.new_documents, []
    if crawl.process is not None:
        crawl.process(ids)
        return
    with transaction.atomic():
        enqueue_documents(ids)
