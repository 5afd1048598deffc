"""A source's page: its progress, extraction, documents and their errors, a crawl's
pages and runs (the last one's changes, the next scheduled one), and what it gave the graph
(its entities and relations, most mentioned first, with links to the explorer and the
entities page narrowed to it), with its actions (cancel, retry, re-ingest, delete, the
re-crawl schedule).

The page polls while the source runs and stops when it is done: a running source's body
carries an htmx `every 2s` trigger, and a finished one is rendered without it, so the
last poll ends the polling by itself. The entities and relations are panels of their own
outside that body, each paged by htmx and refreshed every GAVE_POLL_SECONDS while the
source runs (an aggregate over the source's evidence is not worth repeating every 2 s).
Every URL it produces carries `?ws=` (see sources_views). The actions need the editor
role; viewers see no controls and the server refuses them anyway.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from explorer.source_display import (
    POLL_SECONDS,
    counted,
    crawl_schedule,
    extractor_text,
    page_number,
    source_progress,
)
from explorer.sources_forms import RefreshForm
from explorer.workspace_pages import (
    WorkspaceRequest,
    workspace_page,
    workspace_query,
    workspace_url,
)
from ingest.actions.crawl import do_rerun_source, do_set_refresh_every
from ingest.actions.sources import do_cancel_source, do_request_source_deletion, do_retry_source
from ingest.crawler.durations import format_duration
from ingest.models import Document, Source
from ingest.selectors import (
    get_documents,
    get_failed_documents,
    get_pages,
    get_source_for_workspace,
)
from knowledge.selectors.extraction import get_extraction_summary
from knowledge.selectors.source_graph import get_source_entities, get_source_relations
from workspaces.errors import DomainError, NotFound
from workspaces.models import Role

ROWS_PER_PAGE = 100  # documents or crawl pages on a source's detail page
GAVE_PER_PAGE = 25  # entities or relations the source gave, per page of their panel
GAVE_POLL_SECONDS = 10  # how often those panels refresh while the source runs
# The query parameter each paged list of the page reads its page number from.
PAGE_PARAMS = ("docs", "pages", "ents", "rels")


def _source_or_404(request: WorkspaceRequest, source_id: int) -> Source:
    try:
        return get_source_for_workspace(request.membership.workspace, source_id)
    except NotFound as exc:
        raise Http404(exc.message) from None


def _detail_context(request: WorkspaceRequest, source: Source) -> dict[str, Any]:
    workspace = request.membership.workspace
    documents: Page[Document] = Paginator(get_documents(source), ROWS_PER_PAGE).get_page(
        page_number(request, "docs")
    )
    is_crawl = source.is_crawl
    pages = (
        Paginator(get_pages(source), ROWS_PER_PAGE).get_page(page_number(request, "pages"))
        if is_crawl
        else None
    )
    extraction = get_extraction_summary(workspace, source)
    running = not source.is_finished
    params = _page_params(request)
    return {
        "source": source,
        "progress": source_progress(source),
        "running": running,
        "poll_seconds": POLL_SECONDS,
        "is_crawl": is_crawl,
        "schedule": crawl_schedule(source) if is_crawl else None,
        "documents": documents,
        "pages": pages,
        "failed": get_failed_documents(source, limit=20),
        "extraction": extraction,
        "extractor": extractor_text(extraction["extractor"], extraction["model"]),
        "detail_url": workspace_url(request, "explorer:source_detail", source.pk, **params),
        "ws_query": workspace_query(request),
        "docs_query": _query_without(request, "docs"),
        "pages_query": _query_without(request, "pages"),
        "can_cancel": source.can_cancel,
        "can_rerun": source.can_rerun,
        "can_retry": source.can_retry,
        "can_delete": source.can_delete,
    }


def _page_params(request: WorkspaceRequest) -> dict[str, str]:
    return {k: v for k in PAGE_PARAMS if (v := request.GET.get(k, "")).isdigit()}


def _query_without(request: WorkspaceRequest, name: str) -> str:
    """The page's query (`ws` and the other lists' page numbers) for a pager of `name`."""
    return workspace_query(request, **{k: v for k, v in _page_params(request).items() if k != name})


def _gave_panel(
    request: WorkspaceRequest, source: Source, rows: Any, *, name: str, param: str
) -> dict[str, Any]:
    """One paged panel of what the source gave: its page of `rows`, the query its pager
    keeps (the other panel's page), and the URL its refresh asks for."""
    page = Paginator(rows, GAVE_PER_PAGE).get_page(page_number(request, param))
    return {
        name: page,
        f"{param}_query": _query_without(request, param),
        f"{name}_refresh_url": workspace_url(
            request, "explorer:source_detail", source.pk, **{param: page.number}
        ),
    }


def _entities_context(request: WorkspaceRequest, source: Source) -> dict[str, Any]:
    rows = get_source_entities(request.membership.workspace, source)
    return _gave_panel(request, source, rows, name="entities", param="ents")


def _relations_context(request: WorkspaceRequest, source: Source) -> dict[str, Any]:
    rows = get_source_relations(request.membership.workspace, source)
    return _gave_panel(request, source, rows, name="relations", param="rels")


def _gave_links(request: WorkspaceRequest, source: Source) -> dict[str, Any]:
    """Where the source's graph is looked at beyond this page: the explorer and the
    entities page, each narrowed to the source (their `source` filter)."""
    return {
        "source": source,
        "running": not source.is_finished,
        "gave_poll_seconds": GAVE_POLL_SECONDS,
        "ws_query": workspace_query(request),
        "explore_url": workspace_url(request, "explorer:explore", source=source.pk),
        "entities_url": workspace_url(request, "explorer:entities", source=source.pk),
    }


# The panels an htmx request may ask for alone (its HX-Target), and what each needs.
_PANELS = {
    "source-entities": _entities_context,
    "source-relations": _relations_context,
}


@require_safe
@workspace_page()
def source_detail(request: WorkspaceRequest, source_id: int) -> HttpResponse:
    """A source: progress, extraction, documents and their errors, a crawl's pages, and
    the entities and relations it gave."""
    source = _source_or_404(request, source_id)
    target = request.htmx.target if request.htmx else None
    if target == "source-body":
        context = _detail_context(request, source)
        return render(request, "explorer/sources/detail.html#source-body", context)
    if target in _PANELS:
        context = {**_gave_links(request, source), **_PANELS[target](request, source)}
        return render(request, f"explorer/sources/detail.html#{target}", context)
    return _detail_page(
        request, source, _full_context(request, source), RefreshForm(every=source.refresh_every)
    )


def _full_context(request: WorkspaceRequest, source: Source) -> dict[str, Any]:
    """The whole page's context: progress and runs, and what the source gave."""
    return {
        **_detail_context(request, source),
        **_gave_links(request, source),
        **_entities_context(request, source),
        **_relations_context(request, source),
    }


def _detail_page(
    request: WorkspaceRequest,
    source: Source,
    context: dict[str, Any],
    refresh_form: RefreshForm,
    *,
    status: int = 200,
) -> HttpResponse:
    return render(
        request,
        "explorer/sources/detail.html",
        {**context, "nav": "sources", "refresh_form": refresh_form},
        status=status,
    )


@require_POST
@workspace_page(role=Role.EDITOR)
def schedule_source(request: WorkspaceRequest, source_id: int) -> HttpResponse:
    """Set (or clear) a crawl's refresh interval; a refused one comes back as the page with
    the problem next to the field."""
    source = _source_or_404(request, source_id)
    form = RefreshForm(request.POST)
    if form.is_valid():
        every = form.cleaned_data["refresh_every"]
        try:
            source = do_set_refresh_every(source=source, every=every)
        except DomainError as exc:
            if not source.is_crawl:  # no schedule form on its page: said as a message
                messages.error(request, exc.message)
                return redirect(workspace_url(request, "explorer:source_detail", source.pk))
            form.add_error("refresh_every", exc.message.partition(": ")[2] or exc.message)
        else:
            if every and source.next_run_at is not None:
                messages.success(
                    request,
                    f"Re-crawled every {format_duration(every)}; next run "
                    f"{timezone.localtime(source.next_run_at):%Y-%m-%d %H:%M}.",
                )
            else:
                messages.success(request, "No scheduled re-crawls.")
            return redirect(workspace_url(request, "explorer:source_detail", source.pk))
    return _detail_page(request, source, _full_context(request, source), form, status=422)


def _run_action(request: WorkspaceRequest, source_id: int, act: Any) -> HttpResponse:
    """Call one source action, tell the person what it did (or why not), and go back."""
    source = _source_or_404(request, source_id)
    try:
        messages.success(request, act(source))
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect(workspace_url(request, "explorer:source_detail", source.pk))


@require_POST
@workspace_page(role=Role.EDITOR)
def cancel_source(request: WorkspaceRequest, source_id: int) -> HttpResponse:
    def act(source: Source) -> str:
        do_cancel_source(source=source)
        return "Cancelled: queued work will not be done; work in progress stops after its step."

    return _run_action(request, source_id, act)


@require_POST
@workspace_page(role=Role.EDITOR)
def retry_source(request: WorkspaceRequest, source_id: int) -> HttpResponse:
    def act(source: Source) -> str:
        queued = do_retry_source(source=source)
        return f"Retrying {counted(queued, 'document')} that failed or were cancelled."

    return _run_action(request, source_id, act)


@require_POST
@workspace_page(role=Role.EDITOR)
def reingest_source(request: WorkspaceRequest, source_id: int) -> HttpResponse:
    def act(source: Source) -> str:
        queued = do_rerun_source(source=source, role=request.membership.role)
        if source.is_crawl:
            return f"Crawling again: {queued} pages queued; unchanged pages cost nothing."
        return (
            f"Re-ingesting: {counted(queued, 'document')} queued; unchanged documents do no work."
        )

    return _run_action(request, source_id, act)


@require_http_methods(["GET", "POST"])
@workspace_page(role=Role.EDITOR)
def delete_source(request: WorkspaceRequest, source_id: int) -> HttpResponse:
    """GET asks for confirmation (a page of its own, so no script is needed); POST deletes,
    in the background, the source and everything derived from it."""
    source = _source_or_404(request, source_id)
    if request.method == "POST":
        try:
            do_request_source_deletion(source=source)
        except DomainError as exc:
            messages.error(request, exc.message)
            return redirect(workspace_url(request, "explorer:source_detail", source.pk))
        messages.success(
            request, f"Deleting “{source.name}” and everything derived from it in the background."
        )
        return redirect(workspace_url(request, "explorer:home"))
    return render(
        request,
        "explorer/sources/confirm_delete.html",
        {"source": source, "nav": "sources", "ws_query": workspace_query(request)},
    )


urlpatterns: list[URLPattern] = [
    path("sources/<int:source_id>/", source_detail, name="source_detail"),
    path("sources/<int:source_id>/cancel/", cancel_source, name="source_cancel"),
    path("sources/<int:source_id>/retry/", retry_source, name="source_retry"),
    path("sources/<int:source_id>/reingest/", reingest_source, name="source_reingest"),
    path("sources/<int:source_id>/schedule/", schedule_source, name="source_schedule"),
    path("sources/<int:source_id>/delete/", delete_source, name="source_delete"),
]
