"""The schema registry's endpoints: the types a workspace extracts, proposed, accepted,
retired and renamed.
"""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest
from ninja import Router, Status

from knowledge.actions.schema import (
    TypeKind,
    do_accept_type,
    do_add_type,
    do_ensure_default_schema,
    do_rename_type,
    do_retire_type,
)
from knowledge.schemas.types import SchemaOut, TypeIn, TypeOut, TypeRenameIn
from knowledge.selectors.schema import get_schema_snapshot, list_entity_types, list_relation_types
from workspaces.auth import get_caller, get_workspace_access
from workspaces.models import Role, Workspace

router = Router(tags=["knowledge"])
# The operation ids clients generated code from (config/api.py).
OPERATION_ID_PREFIX = "knowledge_api"


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
    accepted = do_accept_type(
        workspace=workspace, kind=_kind(kind), name=name, actor=get_caller(request).user
    )
    return _type_out(workspace, _kind(kind), accepted.name)


@router.post(
    "/workspaces/{slug}/schema/{kind}/{name}/retire",
    response=TypeOut,
    summary="Retire a type (no longer offered to extraction)",
)
def retire_type(request: HttpRequest, slug: str, kind: KindSegment, name: str) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    retired = do_retire_type(
        workspace=workspace, kind=_kind(kind), name=name, actor=get_caller(request).user
    )
    return _type_out(workspace, _kind(kind), retired.name)


@router.patch("/workspaces/{slug}/schema/{kind}/{name}", response=TypeOut, summary="Rename a type")
def rename_type(
    request: HttpRequest, slug: str, kind: KindSegment, name: str, payload: TypeRenameIn
) -> dict[str, Any]:
    workspace = get_workspace_access(request, slug, role=Role.EDITOR).workspace
    renamed = do_rename_type(
        workspace=workspace,
        kind=_kind(kind),
        name=name,
        new_name=payload.name,
        actor=get_caller(request).user,
    )
    return _type_out(workspace, _kind(kind), renamed.name)
