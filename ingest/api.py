"""API routes of the ingest app: sources (uploads, text), documents and chunks."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Router, Schema, Status
from ninja.pagination import LimitOffsetPagination, paginate
from pydantic import ValidationError as PydanticValidationError

from ingest.actions.crawl import (
    do_create_crawl,
    do_rerun_source,
    do_set_refresh_every,
    validate_refresh_every,
)
from ingest.actions.sources import (
    do_add_files,
    do_cancel_source,
    do_create_text_source,
    do_create_upload_source,
    do_request_source_deletion,
    do_retry_source,
    do_set_source_options,
    validate_modified_times,
    validate_source_options,
)
from ingest.models import Chunk, CrawlPage, CrawlPageStatus, Document, Source, SourceKind
from ingest.parsers import detect_upload_format
from ingest.parsers.base import ParseError, UnsupportedFormat
from ingest.schemas import (
    ActionResult,
    ChunkOut,
    CrawlPageOut,
    CrawlSourceIn,
    DocumentOut,
    SourceCreated,
    SourceDetailOut,
    SourceOptionsIn,
    SourceOut,
    TextSourceIn,
)
from ingest.selectors import (
    get_chunks,
    get_document_for_workspace,
    get_documents,
    get_duplicate_documents,
    get_failed_documents,
    get_pages,
    get_source_for_workspace,
    get_sources,
    validate_source_filters,
    with_figures,
)
from workspaces.auth import get_caller, get_workspace_access
from workspaces.errors import InvalidInput, PayloadTooLarge, UnsupportedMediaType
from workspaces.models import Role

router = Router(tags=["ingest"])

_UPLOAD_BODY = {
    "requestBody": {
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                        "name": {"type": "string", "description": "source name"},
                        "tags": {"type": "string", "description": "comma-separated"},
                        "last_modified": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "optional, one per file in the files' order: its "
                            "modification time (milliseconds since 1970, as a browser's "
                            "File.lastModified, or ISO 8601), the document's date unless its "
                            "content states one",
                        },
                    },
                    "required": ["files"],
                }
            },
            "application/json": {"schema": TextSourceIn.json_schema()},
        },
        "required": True,
    }
}


def source_out(source: Source) -> dict[str, Any]:
    return SourceOut.model_validate(source).model_dump()


def _uploaded_files(request: HttpRequest) -> list[UploadedFile]:
    """The request's files, refused whole (413 / 415) before anything is stored."""
    limit = settings.INGEST_MAX_FILE_BYTES
    declared = int(request.META.get("CONTENT_LENGTH") or 0)
    if declared > settings.INGEST_MAX_REQUEST_BYTES:
        raise PayloadTooLarge(
            f"The upload is {declared / 1e6:.1f} MB; one request may carry at most "
            f"{settings.INGEST_MAX_REQUEST_BYTES / 1e6:.0f} MB. Upload in several requests."
        )
    files = request.FILES.getlist("files") + request.FILES.getlist("file")
    if not files:
        raise InvalidInput("No files: send them as multipart form field 'files'.")
    for upload in files:
        if upload.size is not None and upload.size > limit:
            raise PayloadTooLarge(
                f"{upload.name} is {upload.size / 1e6:.1f} MB; the limit is {limit / 1e6:.0f} MB "
                "per file (GRAPHLOOM_MAX_FILE_MB)."
            )
    problems = []
    for upload in files:
        try:
            detect_upload_format(upload, filename=upload.name or "upload")
        except UnsupportedFormat as exc:
            problems.append(f"{upload.name}: {exc.message}")
        except ParseError:
            pass  # e.g. empty: accepted and recorded as a failed document with its reason
    if problems:
        raise UnsupportedMediaType("Unsupported file type. " + " ".join(problems))
    return files


class SourcePagination(LimitOffsetPagination):
    """Limit/offset pages of sources whose figures (documents, chunks, entities, last
    change) are read for the whole page at once, never once per source."""

    def paginate_queryset(
        self,
        queryset: QuerySet[Source],
        pagination: LimitOffsetPagination.Input,
        request: HttpRequest,
        **params: Any,
    ) -> Any:
        page = super().paginate_queryset(queryset, pagination, request, **params)
        page[self.items_attribute] = with_figures(page[self.items_attribute])
        return page


@router.get("/workspaces/{slug}/sources", response=list[SourceOut], summary="Sources, newest first")
@paginate(SourcePagination)
def list_sources(
    request: HttpRequest,
    slug: str,
    tag: str | None = None,
    kind: str | None = None,
    status: str | None = None,
) -> QuerySet[Source]:
    # `tag`: a tag the source carries (exactly); `kind` and `status`: one of the source's
    # kinds and states (docs/api.md): an unknown one is a 422 naming the choices.
    membership = get_workspace_access(request, slug)
    return get_sources(
        membership.workspace, validate_source_filters(tag=tag, kind=kind, status=status)
    )


@router.post(
    "/workspaces/{slug}/sources",
    response={201: SourceCreated},
    summary="Create a source: upload files (multipart) or text (JSON)",
    openapi_extra=_UPLOAD_BODY,
)
def create_source(request: HttpRequest, slug: str) -> Status[dict[str, Any]]:
    """Multipart with one or more `files` (and optional `name`, `tags`), or JSON
    `{"kind": "text", "title": ..., "text": ...}`. Processing happens in the background;
    poll `GET sources/{id}`. Oversized files: 413; unsupported types: 415."""
    membership = get_workspace_access(request, slug, role=Role.EDITOR)
    caller = get_caller(request)
    workspace = membership.workspace
    if request.content_type == "application/json":
        body = _json_object(request)
        kind = str(body.get("kind", SourceKind.TEXT))
        if kind in {"crawl", SourceKind.URL, SourceKind.SITEMAP}:
            return Status(201, _create_crawl(body, workspace, caller.user, membership.role))
        if kind != SourceKind.TEXT:
            raise InvalidInput(f"kind: expected text, crawl, url or sitemap, not {kind!r}.")
        payload = _validated(body, TextSourceIn)
        source, text_document = do_create_text_source(
            workspace=workspace,
            title=payload.title,
            text=payload.text,
            name=payload.name,
            tags=payload.tags,
            created_by=caller.user,
            options=validate_source_options(
                known_only=payload.known_only, token_budget=payload.token_budget
            ),
        )
        added = [text_document]
    else:
        files = _uploaded_files(request)
        source, added = do_create_upload_source(
            workspace=workspace,
            files=[(f.name or "upload", f.chunks()) for f in files],
            name=str(request.POST.get("name", "")),
            tags=str(request.POST.get("tags", "")).split(","),
            created_by=caller.user,
            options=_form_options(request),
            modified=_modified_times(request, files),
        )
    source.refresh_from_db()
    return Status(
        201,
        {
            **source_out(source),
            "documents": [a.document.pk for a in added],
            "unchanged": [a.document.pk for a in added if not a.changed],
        },
    )


def _modified_times(request: HttpRequest, files: list[UploadedFile]) -> dict[str, datetime]:
    """The files' modification times from the `last_modified` form field(s)."""
    return validate_modified_times(
        names=[f.name or "upload" for f in files], values=request.POST.getlist("last_modified")
    )


def _form_options(request: HttpRequest) -> dict[str, object]:
    """known_only / token_budget / topic from multipart form fields (strings)."""
    known = request.POST.get("known_only")
    budget = request.POST.get("token_budget")
    topic = request.POST.get("topic")
    if known is not None and known.lower() not in {"true", "false", "1", "0", "on", "off", ""}:
        raise InvalidInput("known_only: expected true or false.")
    if budget not in (None, "") and not str(budget).isdigit():
        raise InvalidInput("token_budget: expected a whole number of tokens, 0 or more.")
    return validate_source_options(
        known_only=None if known in (None, "") else known.lower() in {"true", "1", "on"},
        token_budget=None if budget in (None, "") else int(str(budget)),
        topic=topic,
    )


def _json_object(request: HttpRequest) -> dict[str, Any]:
    """The JSON body, decoded once; anything but an object is a 422 naming the problem."""
    try:
        body = json.loads(request.body or b"{}")
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"The body is not valid JSON: {exc.msg} at position {exc.pos}."
        ) from None
    if not isinstance(body, dict):
        raise InvalidInput("The body must be a JSON object.")
    return body


def _create_crawl(body: dict[str, Any], workspace: Any, user: Any, role: str) -> dict[str, Any]:
    """A crawl source; only the workspace's admins may ask for one above the crawl limits
    (more than CRAWL_ADMIN_ONLY_ABOVE_PAGES pages, or rate 0): 403 naming the limit."""
    payload = _validated(body, CrawlSourceIn)
    default_mode = {"url": "single", "sitemap": "sitemap"}.get(payload.kind, "recursive")
    source = do_create_crawl(
        workspace=workspace,
        url=payload.url,
        mode=payload.mode or default_mode,
        max_pages=payload.max_pages,
        max_depth=payload.max_depth,
        allow=payload.allow,
        deny=payload.deny,
        rate=payload.rate,
        include_subdomains=payload.include_subdomains,
        use_llms_txt=payload.use_llms_txt,
        render=payload.render,
        name=payload.name,
        tags=payload.tags,
        known_only=payload.known_only,
        token_budget=payload.token_budget,
        topic=payload.topic,
        refresh_every=payload.refresh_every,
        created_by=user,
        role=role,
    )
    return {**source_out(source), "documents": [], "unchanged": []}


def _validated[SchemaT: Schema](body: dict[str, Any], schema: type[SchemaT]) -> SchemaT:
    try:
        return schema.model_validate(body)
    except PydanticValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
        raise InvalidInput(f"Invalid input: {fields}") from None


@router.post(
    "/workspaces/{slug}/sources/{source_id}/documents",
    response={201: SourceCreated},
    summary="Add or replace files in an upload source (same name = new version)",
    openapi_extra=_UPLOAD_BODY,
)
def add_documents(request: HttpRequest, slug: str, source_id: int) -> Status[dict[str, Any]]:
    membership = get_workspace_access(request, slug, role=Role.EDITOR)
    source = get_source_for_workspace(membership.workspace, source_id)
    files = _uploaded_files(request)
    added = do_add_files(
        source=source,
        files=[(f.name or "upload", f.chunks()) for f in files],
        modified=_modified_times(request, files),
    )
    source.refresh_from_db()
    return Status(
        201,
        {
            **source_out(source),
            "documents": [a.document.pk for a in added],
            "unchanged": [a.document.pk for a in added if not a.changed],
        },
    )


@router.get(
    "/workspaces/{slug}/sources/{source_id}", response=SourceDetailOut, summary="One source"
)
def get_source(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    membership = get_workspace_access(request, slug)
    source = get_source_for_workspace(membership.workspace, source_id)
    return {
        **source_out(source),
        "failed": get_failed_documents(source),
        "duplicates": get_duplicate_documents(source),
    }


@router.post(
    "/workspaces/{slug}/sources/{source_id}/reingest", response=ActionResult, summary="Re-ingest"
)
def reingest_source(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    membership = get_workspace_access(request, slug, role=Role.EDITOR)
    source = get_source_for_workspace(membership.workspace, source_id)
    queued = do_rerun_source(source=source, role=membership.role)
    source.refresh_from_db()
    return {"source": source_out(source), "queued": queued}


@router.post(
    "/workspaces/{slug}/sources/{source_id}/cancel", response=ActionResult, summary="Cancel"
)
def cancel_source(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    membership = get_workspace_access(request, slug, role=Role.EDITOR)
    source = do_cancel_source(source=get_source_for_workspace(membership.workspace, source_id))
    return {"source": source_out(source), "queued": 0}


@router.post(
    "/workspaces/{slug}/sources/{source_id}/retry",
    response=ActionResult,
    summary="Retry failed documents",
)
def retry_source(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    membership = get_workspace_access(request, slug, role=Role.EDITOR)
    source = get_source_for_workspace(membership.workspace, source_id)
    queued = do_retry_source(source=source)
    source.refresh_from_db()
    return {"source": source_out(source), "queued": queued}


@router.patch(
    "/workspaces/{slug}/sources/{source_id}",
    response=SourceOut,
    summary="Change a source's options (known_only, token_budget)",
)
def update_source(
    request: HttpRequest, slug: str, source_id: int, payload: SourceOptionsIn
) -> dict[str, Any]:
    """Fields left out stay as they are. A raised token_budget lets `extract` (or the
    extraction endpoint) continue where the budget stopped it."""
    # Also `topic` (issue 41), for the documents extracted from then on (docs/api.md); the
    # description above is the OpenAPI document's, which clients read as it was.
    # `refresh_every` (crawls only; "1d", seconds, 0 or "off" for none) schedules re-crawls,
    # the next due that long after the last run ended (described on its field: the summary
    # and this docstring are the OpenAPI contract's, tests/api/test_openapi.py).
    membership = get_workspace_access(request, slug, role=Role.EDITOR)
    source = get_source_for_workspace(membership.workspace, source_id)
    options = validate_source_options(
        known_only=payload.known_only, token_budget=payload.token_budget, topic=payload.topic
    )
    every = None
    if payload.refresh_every is not None:
        every = validate_refresh_every(payload.refresh_every)
    # The schedule first: it is the one write that can still be refused (not a crawl).
    if every is not None:
        source = do_set_refresh_every(source=source, every=every)
    if options or every is None:
        source = do_set_source_options(source=source, options=options)
    return source_out(source)


@router.delete(
    "/workspaces/{slug}/sources/{source_id}",
    response={202: SourceOut},
    summary="Delete a source and everything derived from it (in the background)",
)
def delete_source(request: HttpRequest, slug: str, source_id: int) -> Status[dict[str, Any]]:
    membership = get_workspace_access(request, slug, role=Role.EDITOR)
    source = do_request_source_deletion(
        source=get_source_for_workspace(membership.workspace, source_id)
    )
    return Status(202, source_out(source))


@router.get(
    "/workspaces/{slug}/documents/{document_id}", response=DocumentOut, summary="One document"
)
def get_document(request: HttpRequest, slug: str, document_id: int) -> Document:
    membership = get_workspace_access(request, slug)
    return get_document_for_workspace(membership.workspace, document_id)


@router.get(
    "/workspaces/{slug}/documents/{document_id}/chunks",
    response=list[ChunkOut],
    summary="A document's chunks in order",
)
@paginate(LimitOffsetPagination)
def list_chunks(request: HttpRequest, slug: str, document_id: int) -> QuerySet[Chunk]:
    membership = get_workspace_access(request, slug)
    return get_chunks(get_document_for_workspace(membership.workspace, document_id))


@router.get(
    "/workspaces/{slug}/sources/{source_id}/documents",
    response=list[DocumentOut],
    summary="A source's documents",
)
@paginate(LimitOffsetPagination)
def list_documents(request: HttpRequest, slug: str, source_id: int) -> QuerySet[Document]:
    membership = get_workspace_access(request, slug)
    return get_documents(get_source_for_workspace(membership.workspace, source_id))


@router.get(
    "/workspaces/{slug}/sources/{source_id}/pages",
    response=list[CrawlPageOut],
    summary="A crawl's pages (the frontier), filterable by status",
)
@paginate(LimitOffsetPagination)
def list_pages(
    request: HttpRequest, slug: str, source_id: int, status: str | None = None
) -> QuerySet[CrawlPage]:
    membership = get_workspace_access(request, slug)
    source = get_source_for_workspace(membership.workspace, source_id)
    if status is not None and status not in CrawlPageStatus.values:
        raise InvalidInput(f"status: choose one of {', '.join(CrawlPageStatus.values)}.")
    return get_pages(source, status=status)
