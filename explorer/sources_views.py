"""Sources screens: the list with live progress (the home page), uploads, crawls, a
source's detail page with its actions, and the document page evidence links point at.

The pages poll while something runs and stop when nothing does: a running source's row or
detail body carries an htmx `every 2s` trigger, and a finished one is rendered without it,
so the last poll (the one that sees the work done) ends the polling by itself.

Every URL these pages produce carries `?ws=`: a page polled or a form posted from one tab
must stay in the workspace that tab shows, whatever another tab switched the session to.
Writes (upload, crawl, cancel, retry, re-ingest, delete) need the editor role; viewers see
no controls and the server refuses them anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django_htmx.http import HttpResponseClientRedirect

from explorer.sources_forms import CrawlForm, UploadCheck, check_uploads, split_tags
from explorer.workspace_pages import WorkspaceRequest, workspace_page
from ingest.actions.crawl import do_create_crawl, do_rerun_source
from ingest.actions.sources import (
    do_cancel_source,
    do_create_upload_source,
    do_request_source_deletion,
    do_retry_source,
)
from ingest.models import Document, Source, SourceStatus
from ingest.selectors import (
    get_document_for_workspace,
    get_documents,
    get_failed_documents,
    get_pages,
    get_source_for_workspace,
    get_sources,
)
from knowledge.models import SourceExtraction
from knowledge.selectors.extraction import get_extraction_summary
from system.selectors import get_worker_status, llm_is_configured
from workspaces.errors import DomainError, NotFound
from workspaces.models import Role

SOURCES_PER_PAGE = 50
ROWS_PER_PAGE = 100  # documents or crawl pages on a source's detail page
POLL_SECONDS = 2


# --- What the templates show ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Progress:
    """A source's progress as one bar: crawl pages settled plus documents processed, over
    pages discovered plus documents created. `total` 0 while work is under way draws an
    indeterminate bar (nothing counted yet)."""

    done: int
    total: int
    label: str


def source_progress(source: Source) -> Progress:
    progress = source.progress
    done, total = progress.done, progress.total
    if source.status == SourceStatus.DONE:
        done = total = max(total, 1)
    if source.is_finished:
        total = max(total, 1)  # a finished source never shows the "still working" bar
        failed = progress.failed
        label = _count(progress.documents, "document") + (f", {failed} failed" if failed else "")
    else:
        label = f"{progress.documents_settled} of {_count(progress.documents, 'document')}"
        if source.is_crawl:
            label = f"{progress.pages_settled} of {_count(progress.pages, 'page')}, {label}"
        if activity := activity_label(source):
            label = f"{label} · {activity}"
    return Progress(done, total, label)


_STAGE_WORDS = {
    "parsing": "Parsing",
    "chunking": "Chunking",
    "embedding": "Embedding",
    "extracting": "Extracting",
}


def activity_label(source: Source) -> str:
    """What the slice in flight is doing inside a document, in words ("Embedding 120 of
    480 chunks of Guide.pdf"), or "" when nothing is reported (ingest/actions/activity.py)."""
    activity = source.activity or {}
    stage = _STAGE_WORDS.get(str(activity.get("stage", "")))
    if not stage or not source.is_active:
        return ""
    text = stage
    if activity.get("total"):
        done, total = int(activity.get("done", 0)), int(activity["total"])
        text += f" {done:,} of {total:,} {activity.get('unit', '')}"
    if activity.get("document"):
        text += f"{' of' if activity.get('total') else ''} {activity['document']}"
    return text.strip()


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def extractor_label(source: Source) -> str:
    """Which extractor worked on the source, said plainly: the offline one must never pass
    for the LLM."""
    try:
        account: SourceExtraction = source.extraction
    except ObjectDoesNotExist:
        return ""
    return _extractor_text(account.extractor, account.model)


def _extractor_text(extractor: str, model: str) -> str:
    if extractor == "offline":
        return "Offline extractor"
    if extractor == "llm":
        return f"LLM ({model})" if model else "LLM"
    return ""


@dataclass(frozen=True, slots=True)
class SourceRow:
    source: Source
    progress: Progress
    extractor: str
    running: bool


def _row(source: Source) -> SourceRow:
    return SourceRow(
        source=source,
        progress=source_progress(source),
        extractor=extractor_label(source),
        running=not source.is_finished,
    )


@dataclass(frozen=True, slots=True)
class UploadResult:
    source: Source | None
    accepted: list[str]
    check: UploadCheck


# --- Helpers ---------------------------------------------------------------------------


def _ws(request: WorkspaceRequest) -> str:
    return str(request.membership.workspace.slug)


def _query(request: WorkspaceRequest, **params: object) -> str:
    """The query string of a URL for this workspace: `ws` plus the non-empty `params`."""
    return urlencode({"ws": _ws(request), **{k: v for k, v in params.items() if v}})


def _url(request: WorkspaceRequest, name: str, *args: object, **params: object) -> str:
    return f"{reverse(name, args=args)}?{_query(request, **params)}"


def _source_or_404(request: WorkspaceRequest, source_id: int) -> Source:
    try:
        return get_source_for_workspace(request.membership.workspace, source_id)
    except NotFound as exc:
        raise Http404(exc.message) from None


def _page_number(request: WorkspaceRequest, name: str) -> str:
    value = request.GET.get(name, "1")
    return value if value.isdigit() else "1"


# --- The list (home page) ------------------------------------------------------------


def _form_context(request: WorkspaceRequest) -> dict[str, Any]:
    """What the upload and crawl partials need besides their own state."""
    return {
        "ws_query": _query(request),
        "max_file_mb": round(settings.INGEST_MAX_FILE_BYTES / 1024 / 1024),
    }


def _list_context(request: WorkspaceRequest) -> dict[str, Any]:
    workspace = request.membership.workspace
    sources = get_sources(workspace).select_related("extraction")
    page: Page[Source] = Paginator(sources, SOURCES_PER_PAGE).get_page(
        _page_number(request, "page")
    )
    rows = [_row(source) for source in page]
    return {
        # Polled with the list: a worker started (or stopped) while someone watches shows.
        "worker": get_worker_status(),
        "llm_configured": llm_is_configured(),
        "rows": rows,
        "page_obj": page,
        "polling": any(row.running for row in rows),
        "poll_seconds": POLL_SECONDS,
        "list_url": _url(request, "explorer:home", page=page.number if page.number > 1 else ""),
        **_form_context(request),
    }


def _list_page(
    request: WorkspaceRequest,
    *,
    upload: UploadResult | None = None,
    crawl_form: CrawlForm | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        **_list_context(request),
        "nav": "sources",
        "upload": upload,
        "crawl_form": crawl_form or CrawlForm(),
    }
    return render(request, "explorer/sources/list.html", context, status=status)


@require_safe
@workspace_page()
def source_list(request: WorkspaceRequest) -> HttpResponse:
    """The workspace's sources, newest first; the htmx poll gets the table alone."""
    if request.htmx and request.htmx.target == "source-list":
        return render(request, "explorer/sources/list.html#source-table", _list_context(request))
    return _list_page(request)


@require_POST
@workspace_page(role=Role.EDITOR)
def upload(request: WorkspaceRequest) -> HttpResponse:
    """One or more files (a drop or the file input) become one new upload source; files
    that cannot be taken are named with the reason, and the others are taken anyway."""
    files = request.FILES.getlist("files")
    check = check_uploads(files, request_bytes=int(request.META.get("CONTENT_LENGTH") or 0))
    source = None
    if check.accepted and not check.refused:
        try:
            source, _added = do_create_upload_source(
                workspace=request.membership.workspace,
                files=[(f.name or "upload", f.chunks()) for f in check.accepted],
                name=request.POST.get("name", ""),
                tags=split_tags(request.POST.get("tags", "")),
                created_by=request.user,
            )
        except DomainError as exc:
            check.refused = exc.message
    result = UploadResult(
        source=source, accepted=[f.name or "upload" for f in check.accepted], check=check
    )
    if request.htmx:
        context = {**_form_context(request), "upload": result}
        response = render(request, "explorer/sources/list.html#upload-panel", context)
        if source is not None:
            response["HX-Trigger"] = "sources-changed"
        return response
    if source is None:
        return _list_page(request, upload=result, status=422)
    # Something was stored: redirect, so reloading the page cannot upload it twice.
    messages.success(request, _uploaded_message(result))
    for problem in check.problems:
        messages.error(request, f"Not uploaded: {problem.name}: {problem.message}")
    return redirect(_url(request, "explorer:home"))


def _uploaded_message(result: UploadResult) -> str:
    name = result.source.name if result.source else ""
    return f"Uploaded {_count(len(result.accepted), 'file')} as “{name}”; processing has started."


@require_POST
@workspace_page(role=Role.EDITOR)
def crawl(request: WorkspaceRequest) -> HttpResponse:
    """Start a crawl (as the API's crawl creation does) and go to its page to watch it;
    a refused request comes back as the form with each problem next to its field."""
    form = CrawlForm(request.POST)
    if form.is_valid() and form.crawl_settings is not None:
        data = form.cleaned_data
        try:
            source = do_create_crawl(
                workspace=request.membership.workspace,
                **form.crawl_request(),
                name=data["name"],
                tags=split_tags(data["tags"]),
                created_by=request.user,
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            detail = _url(request, "explorer:source_detail", source.pk)
            if request.htmx:
                return HttpResponseClientRedirect(detail)
            return redirect(detail)
    if request.htmx:
        return render(
            request,
            "explorer/sources/list.html#crawl-form",
            {**_form_context(request), "crawl_form": form},
        )
    # 422 on a full page; htmx (above) gets 200 because it swaps only 2xx answers.
    return _list_page(request, crawl_form=form, status=422)


# --- One source ----------------------------------------------------------------------


def _detail_context(request: WorkspaceRequest, source: Source) -> dict[str, Any]:
    workspace = request.membership.workspace
    documents: Page[Document] = Paginator(get_documents(source), ROWS_PER_PAGE).get_page(
        _page_number(request, "docs")
    )
    is_crawl = source.is_crawl
    pages = (
        Paginator(get_pages(source), ROWS_PER_PAGE).get_page(_page_number(request, "pages"))
        if is_crawl
        else None
    )
    extraction = get_extraction_summary(workspace, source)
    running = not source.is_finished
    params = {k: request.GET.get(k, "") for k in ("docs", "pages")}
    return {
        "source": source,
        "progress": source_progress(source),
        "running": running,
        "poll_seconds": POLL_SECONDS,
        "is_crawl": is_crawl,
        "documents": documents,
        "pages": pages,
        "failed": get_failed_documents(source, limit=20),
        "extraction": extraction,
        "extractor": _extractor_text(extraction["extractor"], extraction["model"]),
        "detail_url": _url(request, "explorer:source_detail", source.pk, **params),
        "ws_query": _query(request),
        "docs_query": _query(request, pages=params["pages"]),
        "pages_query": _query(request, docs=params["docs"]),
        "can_cancel": source.can_cancel,
        "can_rerun": source.can_rerun,
        "can_retry": source.can_retry,
        "can_delete": source.can_delete,
    }


@require_safe
@workspace_page()
def source_detail(request: WorkspaceRequest, source_id: int) -> HttpResponse:
    """A source: progress, extraction, documents and their errors, and a crawl's pages."""
    source = _source_or_404(request, source_id)
    context = _detail_context(request, source)
    if request.htmx and request.htmx.target == "source-body":
        return render(request, "explorer/sources/detail.html#source-body", context)
    return render(request, "explorer/sources/detail.html", {**context, "nav": "sources"})


def _run_action(request: WorkspaceRequest, source_id: int, act: Any) -> HttpResponse:
    """Call one source action, tell the person what it did (or why not), and go back."""
    source = _source_or_404(request, source_id)
    try:
        messages.success(request, act(source))
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect(_url(request, "explorer:source_detail", source.pk))


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
        return f"Retrying {_count(queued, 'document')} that failed or were cancelled."

    return _run_action(request, source_id, act)


@require_POST
@workspace_page(role=Role.EDITOR)
def reingest_source(request: WorkspaceRequest, source_id: int) -> HttpResponse:
    def act(source: Source) -> str:
        queued = do_rerun_source(source=source)
        if source.is_crawl:
            return f"Crawling again: {queued} pages queued; unchanged pages cost nothing."
        return f"Re-ingesting: {_count(queued, 'document')} queued; unchanged documents do no work."

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
            return redirect(_url(request, "explorer:source_detail", source.pk))
        messages.success(
            request, f"Deleting “{source.name}” and everything derived from it in the background."
        )
        return redirect(_url(request, "explorer:home"))
    return render(
        request,
        "explorer/sources/confirm_delete.html",
        {"source": source, "nav": "sources", "ws_query": _query(request)},
    )


# --- A document ----------------------------------------------------------------------


def _span(request: WorkspaceRequest, length: int) -> tuple[int, int] | None:
    """`?start=N&end=M` as character offsets into the text, clamped to it; None when absent
    or empty (the text may have changed since the evidence was recorded)."""
    start, end = request.GET.get("start", ""), request.GET.get("end", "")
    if not (start.isdigit() and end.isdigit()):
        return None
    first, last = min(int(start), length), min(int(end), length)
    return (first, last) if first < last else None


@require_safe
@workspace_page()
def document(request: WorkspaceRequest, document_id: int) -> HttpResponse:
    """A document's text; with `?start=&end=` the span is marked and scrolled into view.
    The three parts are plain strings: the template escapes each, so no document text is
    ever trusted as markup."""
    try:
        doc = get_document_for_workspace(request.membership.workspace, document_id)
    except NotFound as exc:
        raise Http404(exc.message) from None
    text = doc.text
    span = _span(request, len(text))
    asked = "start" in request.GET or "end" in request.GET
    context: dict[str, Any] = {
        "document": doc,
        "source": doc.source,
        "nav": "sources",
        "ws_query": _query(request),
        "span": span,
        "span_missing": asked and span is None,
    }
    if span is None:
        context["before"], context["marked"], context["after"] = text, "", ""
    else:
        first, last = span
        context["before"], context["marked"], context["after"] = (
            text[:first],
            text[first:last],
            text[last:],
        )
    return render(request, "explorer/sources/document.html", context)


urlpatterns: list[URLPattern] = [
    path("", source_list, name="home"),
    path("sources/upload/", upload, name="upload"),
    path("sources/crawl/", crawl, name="crawl"),
    path("sources/<int:source_id>/", source_detail, name="source_detail"),
    path("sources/<int:source_id>/cancel/", cancel_source, name="source_cancel"),
    path("sources/<int:source_id>/retry/", retry_source, name="source_retry"),
    path("sources/<int:source_id>/reingest/", reingest_source, name="source_reingest"),
    path("sources/<int:source_id>/delete/", delete_source, name="source_delete"),
    path("documents/<int:document_id>/", document, name="document"),
]
