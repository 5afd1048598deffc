"""A workspace as one archive over the API: export (its admins) and import as a new
workspace (staff signed in with a session, as creating a workspace is).

`POST /workspaces/{slug}/export` shares its path with the graph export's GET
(knowledge/api/graph.py); ninja makes one URL pattern per router and path and the first
one wins, so knowledge/api/__init__.py adds `export_archive` to the graph router instead
of mounting it from here. `POST /workspaces/import` would be taken by the workspaces
app's `/workspaces/{slug}` pattern, so config/api.py mounts `router` (the import) before
that app's router.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import FileResponse, HttpRequest
from ninja import Router, Status

from knowledge.actions.workspace_archive import do_export_workspace, do_import_workspace
from knowledge.archive.format import ArchiveError
from knowledge.schemas.archive import WorkspaceImported
from workspaces.auth import get_caller, get_workspace_access
from workspaces.errors import InvalidInput, PayloadTooLarge, PermissionDenied
from workspaces.models import Role

router = Router(tags=["knowledge"])
# The operation ids clients generate code from (config/api.py).
OPERATION_ID_PREFIX = "knowledge_archive_api"

EXPORT_PATH = "/workspaces/{slug}/export"
# An uploaded archive may hold at most this many times its upload limit uncompressed
# (text and JSON deflate a few times over; a zip bomb a thousand times).
UNCOMPRESSED_RATIO = 20
EXPORT_SUMMARY = "Export the whole workspace as one archive (admin; zip, streamed)"
EXPORT_DOC: dict[str, Any] = {
    "responses": {200: {"description": "The archive", "content": {"application/zip": {}}}}
}
_UPLOAD_DOC: dict[str, Any] = {
    "requestBody": {
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["archive", "slug"],
                    "properties": {
                        "archive": {"type": "string", "format": "binary"},
                        "slug": {"type": "string"},
                        "name": {"type": "string"},
                    },
                }
            }
        }
    }
}


def export_archive(request: HttpRequest, slug: str, vectors: bool = True) -> FileResponse:
    """Sources and their stored files, documents, chunks (with embeddings unless
    `vectors=false`), the graph with its evidence and aliases, the schema, curation events
    and rules: everything `POST /workspaces/import` needs to recreate the workspace."""
    workspace = get_workspace_access(request, slug, role=Role.ADMIN).workspace
    directory = Path(tempfile.mkdtemp(prefix="graphloom-export-"))
    try:
        result = do_export_workspace(
            workspace=workspace, output=directory / "workspace.zip", vectors=vectors
        )
        # Open, then remove: the open handle keeps the bytes until the response is sent.
        handle = result.path.open("rb")
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=f"{workspace.slug}.graphloom.zip",
        content_type="application/zip",
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


@router.post(
    "/workspaces/import",
    response={201: WorkspaceImported},
    summary="Import a workspace archive as a new workspace (staff)",
    openapi_extra=_UPLOAD_DOC,
)
def import_archive(request: HttpRequest) -> Status[dict[str, Any]]:
    """Multipart: the file in `archive`, the new workspace's `slug` (and optional `name`).
    The caller becomes its admin. A corrupt or unreadable archive, or one of another
    format version: 422 with the reason, and nothing is created."""
    caller = get_caller(request)
    if caller.api_token is not None or not getattr(caller.user, "is_staff", False):
        raise PermissionDenied("Only staff, signed in with a session, may import workspaces.")
    limit = settings.INGEST_MAX_REQUEST_BYTES
    if int(request.META.get("CONTENT_LENGTH") or 0) > limit:  # refused before it is read
        raise PayloadTooLarge(f"The archive is larger than {limit / 1e6:.0f} MB.")
    upload = request.FILES.get("archive") or request.FILES.get("file")
    if upload is None:
        raise InvalidInput("No archive: send it as multipart form field 'archive'.")
    if upload.size is not None and upload.size > limit:
        raise PayloadTooLarge(f"The archive is larger than {limit / 1e6:.0f} MB.")
    slug = str(request.POST.get("slug", "")).strip()
    if not slug:
        raise InvalidInput("slug: the new workspace's slug is required.")
    with tempfile.NamedTemporaryFile(prefix="graphloom-import-", suffix=".zip") as copy:
        for block in upload.chunks():
            copy.write(block)
        copy.flush()
        try:
            result = do_import_workspace(
                archive=Path(copy.name),
                slug=slug,
                name=str(request.POST.get("name", "")),
                owner=caller.user,
                max_total_bytes=limit * UNCOMPRESSED_RATIO,
            )
        except ArchiveError as exc:
            raise InvalidInput(f"Invalid archive: {exc}") from exc
    workspace = result.workspace
    return Status(
        201,
        {
            "slug": workspace.slug,
            "name": workspace.name,
            "counts": result.counts,
            "blobs": result.blobs,
        },
    )
