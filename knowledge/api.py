"""The knowledge app's API: the schema registry and each source's extraction account."""

from __future__ import annotations

from typing import Any, Literal

from django.db import transaction
from django.http import HttpRequest
from ninja import Router, Status

from ingest.selectors import get_source_for_workspace
from knowledge.actions.extraction import do_request_extraction, estimate_source
from knowledge.actions.schema import (
    TypeKind,
    do_accept_type,
    do_add_type,
    do_ensure_default_schema,
    do_rename_type,
    do_retire_type,
)
from knowledge.schemas import (
    EstimateOut,
    ExtractIn,
    ExtractionOut,
    ExtractQueued,
    SchemaOut,
    TypeIn,
    TypeOut,
    TypeRenameIn,
    UsageOut,
)
from knowledge.selectors import (
    get_extraction_summary,
    get_schema_snapshot,
    get_workspace_token_usage,
    list_entity_types,
    list_relation_types,
)
from workspaces.auth import get_caller, get_workspace_access
from workspaces.models import Role, Workspace

router = Router(tags=["knowledge"])

KindSegment = Literal["entity-types", "relation-types"]


def _kind(segment: str) -> TypeKind:
    return "entity" if segment == "entity-types" else "relation"


def _type_out(workspace: Workspace, kind: TypeKind, name: str) -> dict[str, Any]:
    rows = list_entity_types(workspace) if kind == "entity" else list_relation_types(workspace)
    row = next(r for r in rows if r.name == name)
    return TypeOut.model_validate(row).model_dump()


@router.get("/workspaces/{slug}/schema", response=SchemaOut, summary="The schema registry")
def get_schema(request: HttpRequest, slug: str) -> dict[str, Any]:
    """Entity and relation types with their status (active, proposed, retired). Only active
    types are offered to extraction."""
    workspace = get_workspace_access(request, slug).workspace
    do_ensure_default_schema(workspace=workspace)
    return {
        "entity_types": list_entity_types(workspace),
        "relation_types": list_relation_types(workspace),
        "schema_hash": get_schema_snapshot(workspace).hash,
    }


@router.post(
    "/workspaces/{slug}/schema/{kind}",
    response={201: TypeOut},
    summary="Add an entity or relation type",
)
def add_type(
    request: HttpRequest, slug: str, kind: KindSegment, payload: TypeIn
) -> Status[dict[str, Any]]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    created = do_add_type(
        workspace=workspace,
        kind=_kind(kind),
        name=payload.name,
        description=payload.description,
        examples=payload.examples,
        created_by=get_caller(request).user,
    )
    return Status(201, _type_out(workspace, _kind(kind), created.name))


@router.post(
    "/workspaces/{slug}/schema/{kind}/{name}/accept",
    response=TypeOut,
    summary="Accept a proposed (or retired) type",
)
def accept_type(request: HttpRequest, slug: str, kind: KindSegment, name: str) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    accepted = do_accept_type(workspace=workspace, kind=_kind(kind), name=name)
    return _type_out(workspace, _kind(kind), accepted.name)


@router.post(
    "/workspaces/{slug}/schema/{kind}/{name}/retire",
    response=TypeOut,
    summary="Retire a type (no longer offered to extraction)",
)
def retire_type(request: HttpRequest, slug: str, kind: KindSegment, name: str) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    retired = do_retire_type(workspace=workspace, kind=_kind(kind), name=name)
    return _type_out(workspace, _kind(kind), retired.name)


@router.patch("/workspaces/{slug}/schema/{kind}/{name}", response=TypeOut, summary="Rename a type")
def rename_type(
    request: HttpRequest, slug: str, kind: KindSegment, name: str, payload: TypeRenameIn
) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    renamed = do_rename_type(
        workspace=workspace, kind=_kind(kind), name=name, new_name=payload.name
    )
    return _type_out(workspace, _kind(kind), renamed.name)


@router.get(
    "/workspaces/{slug}/sources/{source_id}/extraction",
    response=ExtractionOut,
    summary="A source's extraction: extractor, status, runs, counts, tokens, cost",
)
def get_extraction(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    """`offline` is true when the offline (spaCy) extractor produced the results: no LLM was
    configured. `status` budget_exceeded means the source's token budget stopped it."""
    workspace = get_workspace_access(request, slug).workspace
    source = get_source_for_workspace(workspace, source_id)
    return get_extraction_summary(workspace, source)


@router.get(
    "/workspaces/{slug}/sources/{source_id}/extraction/estimate",
    response=EstimateOut,
    summary="Tokens and cost of extracting the source now (nothing is called)",
)
def get_estimate(request: HttpRequest, slug: str, source_id: int) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug).workspace
    source = get_source_for_workspace(workspace, source_id)
    return estimate_source(source=source).as_dict()


@router.post(
    "/workspaces/{slug}/sources/{source_id}/extract",
    response={202: ExtractQueued},
    summary="Extract the source again in the background (cached windows cost nothing)",
)
def extract_source(
    request: HttpRequest, slug: str, source_id: int, payload: ExtractIn
) -> Status[dict[str, Any]]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    source = get_source_for_workspace(workspace, source_id)
    with transaction.atomic():
        do_request_extraction(source=source, force=payload.force)
    return Status(202, {"source_id": source.pk, "queued": True})


@router.get(
    "/workspaces/{slug}/usage", response=UsageOut, summary="LLM token usage of the workspace"
)
def get_usage(request: HttpRequest, slug: str) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug).workspace
    return get_workspace_token_usage(workspace)
