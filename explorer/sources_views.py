"""The sources list, the home page: the workspace's sources with live progress and what
each holds (tags, documents, chunks, entities, last change), filtered by tag, kind and
status, and the upload, crawl and paste-text forms above them. A source's own page is
source_detail_views; the document page evidence links point at is document_views.

The list polls while something runs and stops when nothing does: a running source's row
carries an htmx `every 2s` trigger, and a finished one is rendered without it, so the
last poll (the one that sees the work done) ends the polling by itself.

Every URL the page produces carries `?ws=`: a page polled or a form posted from one tab
must stay in the workspace that tab shows, whatever another tab switched the session to.
Uploads and crawls need the editor role; viewers see no controls and the server refuses
them anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.files.uploadedfile import UploadedFile
from django.core.paginator import Page, Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import HttpResponseClientRedirect

from explorer.source_display import (
    POLL_SECONDS,
    Progress,
    counted,
    extractor_label,
    page_number,
    source_progress,
)
from explorer.sources_forms import (
    KNOWN_ONLY_HELP,
    KNOWN_ONLY_LABEL,
    CrawlForm,
    PasteTextForm,
    SourceFilterForm,
    UploadCheck,
    check_uploads,
    split_tags,
)
from explorer.workspace_pages import (
    WorkspaceRequest,
    workspace_page,
    workspace_query,
    workspace_url,
)
from ingest.actions.crawl import do_create_crawl
from ingest.actions.sources import (
    do_create_text_source,
    do_create_upload_source,
    validate_modified_times,
    validate_source_options,
)
from ingest.models import Source
from ingest.selectors import (
    SourceFigures,
    get_source_tags,
    get_sources,
    validate_source_filters,
    with_figures,
)
from system.llm.availability import extraction_uses_llm
from system.selectors import get_worker_status
from workspaces.errors import DomainError
from workspaces.models import Role

SOURCES_PER_PAGE = 50


@dataclass(frozen=True, slots=True)
class SourceRow:
    source: Source
    progress: Progress
    extractor: str
    running: bool
    figures: SourceFigures


def _row(source: Source) -> SourceRow:
    return SourceRow(
        source=source,
        progress=source_progress(source),
        extractor=extractor_label(source),
        running=not source.is_finished,
        figures=source.figures,  # type: ignore[attr-defined]  # set by with_figures
    )


@dataclass(frozen=True, slots=True)
class UploadResult:
    source: Source | None
    accepted: list[str]
    check: UploadCheck


def _form_context(request: WorkspaceRequest) -> dict[str, Any]:
    """What the upload and crawl partials need besides their own state."""
    return {
        "ws_query": workspace_query(request),
        "max_file_mb": round(settings.INGEST_MAX_FILE_BYTES / 1024 / 1024),
        "known_only_label": KNOWN_ONLY_LABEL,
        "known_only_help": KNOWN_ONLY_HELP,
    }


def _filter_form(request: WorkspaceRequest) -> SourceFilterForm:
    return SourceFilterForm(request.GET, tag_choices=get_source_tags(request.membership.workspace))


def _list_context(request: WorkspaceRequest) -> dict[str, Any]:
    workspace = request.membership.workspace
    chosen = _filter_form(request).filters()
    sources = get_sources(workspace, validate_source_filters(**chosen)).select_related("extraction")
    page: Page[Source] = Paginator(sources, SOURCES_PER_PAGE).get_page(page_number(request, "page"))
    # Documents, chunks, entities and last change of the whole page in one query.
    rows = [_row(source) for source in with_figures(page.object_list)]
    return {
        # Polled with the list: a worker started (or stopped) while someone watches shows.
        "worker": get_worker_status(),
        "llm_configured": extraction_uses_llm(),
        "rows": rows,
        "page_obj": page,
        "polling": any(row.running for row in rows),
        "poll_seconds": POLL_SECONDS,
        "list_url": workspace_url(
            request, "explorer:home", page=page.number if page.number > 1 else "", **chosen
        ),
        "filtered": any(chosen.values()),
        "filter_query": workspace_query(request, **chosen),
        **_form_context(request),
    }


def _list_page(
    request: WorkspaceRequest,
    *,
    upload: UploadResult | None = None,
    crawl_form: CrawlForm | None = None,
    paste_form: PasteTextForm | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        **_list_context(request),
        "nav": "sources",
        "upload": upload,
        "crawl_form": crawl_form or CrawlForm(),
        "paste_form": paste_form or PasteTextForm(),
        "filter_form": _filter_form(request),
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
                modified=_modified_times(request, files, check.accepted),
                options=validate_source_options(
                    known_only=True if request.POST.get("known_only") else None
                ),
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
    return redirect(workspace_url(request, "explorer:home"))


def _modified_times(
    request: WorkspaceRequest, files: list[UploadedFile], accepted: list[UploadedFile]
) -> dict[str, datetime]:
    """The accepted files' modification times, which static/js/sources/upload.js puts in
    the form's `last_modified` field (one per file picked, in their order); none without
    the script."""
    times = validate_modified_times(
        names=[f.name or "upload" for f in files], values=request.POST.getlist("last_modified")
    )
    names = {f.name or "upload" for f in accepted}
    return {name: moment for name, moment in times.items() if name in names}


def _uploaded_message(result: UploadResult) -> str:
    name = result.source.name if result.source else ""
    return f"Uploaded {counted(len(result.accepted), 'file')} as “{name}”; processing has started."


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
                known_only=True if data["known_only"] else None,
                topic=data["topic"] or None,
                refresh_every=data["refresh_every"],
                created_by=request.user,
                role=request.membership.role,
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            detail = workspace_url(request, "explorer:source_detail", source.pk)
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


@require_POST
@workspace_page(role=Role.EDITOR)
def paste_text(request: WorkspaceRequest) -> HttpResponse:
    """A pasted note becomes a text source (as the API's JSON text source does); the list
    then follows it to done. A refusal comes back as the form with the problem next to its
    field; nothing is stored."""
    form = PasteTextForm(request.POST)
    created: Source | None = None
    if form.is_valid():
        data = form.cleaned_data
        try:
            created, _added = do_create_text_source(
                workspace=request.membership.workspace,
                title=data["title"],
                text=data["text"],
                tags=split_tags(data["tags"]),
                created_by=request.user,
                origin="paste",
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
    if created is not None and not request.htmx:
        # Redirect, so reloading the page cannot add the note twice.
        messages.success(request, f"Added the note “{created.name}”; processing has started.")
        return redirect(workspace_url(request, "explorer:home"))
    if request.htmx:
        context = {
            **_form_context(request),
            "paste_form": PasteTextForm() if created else form,
            "pasted": created,
        }
        response = render(request, "explorer/sources/list.html#paste-panel", context)
        if created is not None:
            response["HX-Trigger"] = "sources-changed"
        return response
    return _list_page(request, paste_form=form, status=422)


urlpatterns: list[URLPattern] = [
    path("", source_list, name="home"),
    path("sources/upload/", upload, name="upload"),
    path("sources/crawl/", crawl, name="crawl"),
    path("sources/paste/", paste_text, name="paste_text"),
]
