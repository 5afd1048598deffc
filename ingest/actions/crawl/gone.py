"""Pages that are gone: 404/410 answers, and in sitemap mode pages the sitemaps no longer
list. A page gone for a moment (a deploy, a mistake) must not cost its evidence and the
curation built on it, so a page with a document is first only marked (`gone_at`) and keeps
its document for CRAWL_GONE_GRACE_SECONDS; the first crawl after that which still finds it
gone retires the document with everything derived from it (`do_delete_document`: its
chunks, and through INGEST_DELETION_HOOKS exactly their evidence; entities left without
evidence follow knowledge's rules). A page that answers again is no longer gone
(`mark_alive`). With CRAWL_KEEP_GONE_PAGES, documents are never retired.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from ingest.actions.crawl.pages import finish_page
from ingest.actions.sources import do_delete_document
from ingest.models import CrawlPage, Document, PageChange


def page_gone(page: CrawlPage, *, status: str, reason: str) -> None:
    """Record that `page` is gone (`reason`: "HTTP 404", "no longer listed in the
    sitemap") with the page status `status`, and retire its document once the grace
    period has passed."""
    if page.document_id is None:
        page.run_change = ""
        finish_page(page, status, reason)
        return
    now = timezone.now()
    page.gone_at = page.gone_at or now
    if settings.CRAWL_KEEP_GONE_PAGES:
        page.run_change = PageChange.MISSING
        finish_page(page, status, f"{reason}: gone; its document is kept (CRAWL_KEEP_GONE_PAGES)")
        return
    until = page.gone_at + timedelta(seconds=max(0, settings.CRAWL_GONE_GRACE_SECONDS))
    if now < until:
        page.run_change = PageChange.MISSING
        finish_page(
            page,
            status,
            f"{reason}: gone since {page.gone_at:%Y-%m-%d %H:%M} UTC; its document is kept "
            f"until {until:%Y-%m-%d %H:%M} UTC in case the page comes back",
        )
        return
    document = Document.objects.filter(pk=page.document_id).first()
    if document is not None:
        do_delete_document(document=document)
    # Asked for unconditionally if it comes back: a 304 must not stand for a document
    # that no longer exists.
    page.document = None
    page.etag = page.last_modified = page.content_hash = ""
    page.run_change = PageChange.REMOVED
    finish_page(page, status, f"{reason}: gone; its document was removed")


def mark_alive(page: CrawlPage) -> None:
    """The page answered: it is not gone (written with the page's row by the caller)."""
    page.gone_at = None
